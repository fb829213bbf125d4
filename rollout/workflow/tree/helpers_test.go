package tree_test

import "troupe/rollout/internal/rollouttest"

// The shared scripted team (rollout/internal/rollouttest), under the names
// these tests use.
type exactScorer = rollouttest.ExactScorer

var compileAgents = rollouttest.Compile
