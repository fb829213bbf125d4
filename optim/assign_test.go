package optim

import (
	"reflect"
	"strings"
	"testing"
)

func TestAssignSharedAndSeparate(t *testing.T) {
	d := DefaultSettings()
	fast := d
	fast.LR = 5e-6
	groups, err := Assign([]AgentSpec{
		{Name: "solver", Model: "qwen-4b", Settings: d},
		{Name: "planner", Model: "qwen-7b", Settings: fast},
		{Name: "verifier", Model: "qwen-4b", Settings: d},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []Group{
		{Model: "qwen-4b", Agents: []string{"solver", "verifier"}, Settings: d},
		{Model: "qwen-7b", Agents: []string{"planner"}, Settings: fast},
	}
	if !reflect.DeepEqual(groups, want) {
		t.Fatalf("groups:\n got %+v\nwant %+v", groups, want)
	}
	if !groups[0].Shared() || groups[1].Shared() {
		t.Fatal("Shared() wrong")
	}
}

func TestAssignRefusesSharingWithDifferentSettings(t *testing.T) {
	d := DefaultSettings()
	v := d
	v.LR, v.ClipHigh = 2e-6, 0.28
	a := d
	a.MicroBatchSize = 8
	_, err := Assign([]AgentSpec{
		{Name: "solver", Model: "qwen", Settings: d},
		{Name: "verifier", Model: "qwen", Settings: v},
		{Name: "answer", Model: "qwen", Settings: a},
	})
	if err == nil {
		t.Fatal("agents sharing a model with different settings were accepted")
	}
	for _, want := range []string{
		`agents "solver" and "verifier" share model "qwen" but differ in lr (1e-06 vs 2e-06), clip_high (0.2 vs 0.28)`,
		`agents "solver" and "answer" share model "qwen" but differ in micro_batch_size (4 vs 8)`,
		"give them the same settings or separate models",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q\nlacks %q", err, want)
		}
	}
}

func TestAssignRefusals(t *testing.T) {
	bad := DefaultSettings()
	bad.LR = -1e-6
	d := DefaultSettings()
	cases := []struct {
		agents []AgentSpec
		want   string
	}{
		{nil, "no agents"},
		{[]AgentSpec{{Name: "", Model: "m", Settings: d}}, "agents[0]: empty name"},
		{[]AgentSpec{{Name: "a", Model: "m", Settings: d}, {Name: "a", Model: "n", Settings: d}}, `agent "a" is listed twice`},
		{[]AgentSpec{{Name: "a", Settings: d}}, `agent "a": no model named`},
		{[]AgentSpec{{Name: "a", Model: "m", Settings: bad}}, `agent "a": lr: must be >= 0`},
	}
	for _, c := range cases {
		_, err := Assign(c.agents)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Assign(%v) = %v, want an error containing %q", c.agents, err, c.want)
		}
	}
}
