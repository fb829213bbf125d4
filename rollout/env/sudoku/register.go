package sudoku

import "troupe/rollout/env/internal/split"

func init() { split.RegisterGame("sudoku", "sudoku", DefaultConfig, New) }
