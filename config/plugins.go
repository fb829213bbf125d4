package config

// plugins.go — the environments and workflows troupe ships. Each registers
// itself with rollout on import (rollout.RegisterEnvironment,
// rollout.RegisterWorkflow); a new one is one line here. This is the only
// file outside the environments themselves that imports an environment or
// a workflow package.

import (
	_ "troupe/rollout/env/coding"
	_ "troupe/rollout/env/math"
	_ "troupe/rollout/env/planpath"
	_ "troupe/rollout/env/search"
	_ "troupe/rollout/env/sokoban"
	_ "troupe/rollout/env/sudoku"
	_ "troupe/rollout/env/writing"
	_ "troupe/rollout/workflow/codetest"
	_ "troupe/rollout/workflow/joint"
	_ "troupe/rollout/workflow/mathrefine"
	_ "troupe/rollout/workflow/mathtool"
	_ "troupe/rollout/workflow/single"
	_ "troupe/rollout/workflow/tree"
)
