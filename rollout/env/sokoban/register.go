package sokoban

import "troupe/rollout/env/internal/split"

func init() { split.RegisterGame("sokoban", "sokoban", DefaultConfig, New) }
