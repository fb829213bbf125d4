package rollout_test

import (
	"strings"
	"testing"

	"troupe/rollout"
)

// plainEnv is an environment that writes no demonstrations itself.
type plainEnv struct {
	rollout.SliceSource
	exactScorer
}

func (plainEnv) Name() string { return "plain" }

// demoEnv writes "env:<agent>:<right>".
type demoEnv struct{ plainEnv }

func (demoEnv) Demonstrate(agent string, _ rollout.Task, _ string, right bool) string {
	if right {
		return "env:" + agent + ":right"
	}
	return "env:" + agent + ":wrong"
}

func init() {
	build := func(any) (rollout.Environment, rollout.Environment, error) { return plainEnv{}, nil, nil }
	rollout.RegisterEnvironment("oracle-by-spec", rollout.EnvironmentSpec{
		Key: "oracle_by_spec", Defaults: func() any { return struct{}{} }, Validate: func(any) error { return nil }, Build: build,
		Oracle: func(agent string, _ rollout.Task, _ string, d *rollout.Draw) string { return "spec:" + agent },
	})
	rollout.RegisterEnvironment("oracle-none", rollout.EnvironmentSpec{
		Key: "oracle_none", Defaults: func() any { return struct{}{} }, Validate: func(any) error { return nil }, Build: build,
	})
	single, _ := rollout.WorkflowOf("single")
	single.Key = "with_oracle"
	single.Oracle = func(opts any, agent string, _ rollout.Task, _ string, right bool) string {
		if right {
			return "workflow:" + opts.(string) + ":" + agent + ":right"
		}
		return "workflow:" + opts.(string) + ":" + agent + ":wrong"
	}
	rollout.RegisterWorkflow("with-oracle", single)
}

// TestOracleFor checks which writer a (workflow, environment) pair gets:
// the workflow's, else the environment's Demonstrate, else its registered
// Oracle, else an error naming both; the first two draw Right.
func TestOracleFor(t *testing.T) {
	task := rollout.Task{Question: "q", Answer: "1"}
	cases := []struct {
		workflow, env string
		built         rollout.Environment
		pCorrect      float64
		want          string
	}{
		{"with-oracle", "oracle-none", demoEnv{}, 1, "workflow:opts:solver:right"},
		{"with-oracle", "oracle-none", plainEnv{}, 0, "workflow:opts:solver:wrong"},
		{"single", "oracle-by-spec", demoEnv{}, 1, "env:solver:right"},
		{"single", "oracle-none", demoEnv{}, 0, "env:solver:wrong"},
		{"single", "oracle-by-spec", plainEnv{}, 1, "spec:solver"},
	}
	for _, c := range cases {
		o, err := rollout.OracleFor(c.workflow, "opts", c.env, c.built)
		if err != nil {
			t.Fatalf("%s in %s: %v", c.workflow, c.env, err)
		}
		if got := o("solver", task, "prompt", &rollout.Draw{Rand: rollout.NewRand(1), PCorrect: c.pCorrect}); got != c.want {
			t.Errorf("%s in %s (%T): got %q, want %q", c.workflow, c.env, c.built, got, c.want)
		}
	}
	_, err := rollout.OracleFor("single", nil, "oracle-none", plainEnv{})
	if err == nil || !strings.Contains(err.Error(), `workflow "single" in environment "oracle-none"`) {
		t.Errorf("no oracle anywhere: got %v, want an error naming the workflow and the environment", err)
	}
	if _, err := rollout.OracleFor("no-such-flow", nil, "oracle-none", plainEnv{}); err == nil || !strings.Contains(err.Error(), "no-such-flow") {
		t.Errorf("unknown workflow: got %v", err)
	}
}
