package config

import (
	"troupe/rollout/env/planpath"
	"troupe/rollout/env/search"
)

type (
	searchOptions  = search.Options
	searchConfig   = search.Config
	planPathConfig = planpath.Config
)
