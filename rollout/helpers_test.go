package rollout_test

import (
	"troupe/rollout/internal/rollouttest"
	_ "troupe/rollout/workflow/mathrefine" // the workflow the sampler tests drive
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
	rowsOfTraj     = rollouttest.RowsOfTraj
)
