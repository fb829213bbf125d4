package mathrefine_test

import (
	"troupe/rollout/internal/rollouttest"
	// the other workflows, so that an unknown name lists them all
	_ "troupe/rollout/workflow/joint"
	_ "troupe/rollout/workflow/single"
	_ "troupe/rollout/workflow/tree"
)

// The shared scripted team (rollout/internal/rollouttest), under the names
// these tests use.
type exactScorer = rollouttest.ExactScorer

var (
	defaults       = rollouttest.Defaults
	team           = rollouttest.Team
	compileAgents  = rollouttest.Compile
	mathRefine     = rollouttest.MathRefine
	run            = rollouttest.Run
	isSolver       = rollouttest.IsSolver
	isVerifier     = rollouttest.IsVerifier
	solverVerifier = rollouttest.SolverVerifier
	tasks          = rollouttest.Tasks
	agentsOf       = rollouttest.AgentsOf
)
