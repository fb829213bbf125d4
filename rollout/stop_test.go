package rollout_test

import (
	"errors"
	"testing"

	"troupe/rollout"
	"troupe/rollout/scripted"
	"troupe/rollout/workflow/mathrefine"
)

// Stop ends a Run with ErrStopped between Generate calls: once it says
// true, no further call is made (here after the second of many calls of
// at most 2 rows). Without it a Run finished every episode first.
func TestSamplerStopsBetweenCalls(t *testing.T) {
	agents := team(t, "model-a", "model-a")
	wf := mathRefine(t, mathrefine.DefaultOptions(), agents)
	g := scripted.New(coinFlips())
	s := rollout.Sampler{Generators: map[string]rollout.Generator{"model-a": g}, MaxBatchRows: 2}
	s.Stop = func() bool { return len(g.Calls) >= 2 }
	_, err := s.Run(wf, tasks, 8, 1)
	if !errors.Is(err, rollout.ErrStopped) {
		t.Fatalf("Run: %v, want ErrStopped", err)
	}
	if len(g.Calls) != 2 {
		t.Fatalf("%d Generate calls after Stop said stop at the second", len(g.Calls))
	}
	// asked before anything runs: no call at all
	g2 := scripted.New(coinFlips())
	s2 := rollout.Sampler{Generators: map[string]rollout.Generator{"model-a": g2}, Stop: func() bool { return true }}
	if _, err := s2.Run(wf, tasks, 8, 1); !errors.Is(err, rollout.ErrStopped) || len(g2.Calls) != 0 {
		t.Fatalf("stopped from the start: %v, %d calls", err, len(g2.Calls))
	}
}
