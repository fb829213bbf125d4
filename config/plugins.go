package config

// plugins.go — the environments and plug-in workflows troupe ships. Each
// registers itself with rollout on import; a new one is one line here.

import (
	_ "troupe/rollout/env/coding"
	_ "troupe/rollout/env/math"
	_ "troupe/rollout/env/planpath"
	_ "troupe/rollout/env/search"
	_ "troupe/rollout/env/sokoban"
	_ "troupe/rollout/env/sudoku"
	_ "troupe/rollout/env/writing"
)
