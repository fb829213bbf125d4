package planpath

import "troupe/rollout/env/internal/split"

func init() { split.RegisterGame("plan-path", "plan_path", DefaultConfig, New) }
