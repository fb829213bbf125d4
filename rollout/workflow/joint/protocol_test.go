package joint_test

import (
	"regexp"
	"strings"
	"sync"
	"testing"

	"troupe/rollout"
	"troupe/rollout/scripted"
	"troupe/rollout/workflow/joint"
)

// protocolAgents show each agent its teammates' answers, its own earlier
// answer and the feedback, each in brackets.
func protocolAgents(t *testing.T) []*rollout.Agent {
	t.Helper()
	user := "{{.Task}} [mates:{{index .Extra \"teammates\"}}] [prev:{{index .Extra \"previous\"}}] [fb:{{index .Extra \"feedback\"}}] {{.Role}}"
	return compileAgents(t, []rollout.AgentConfig{
		{Name: "first", Model: "policy", Role: "You write first.", User: user},
		{Name: "second", Model: "policy", Role: "You write second.", User: user},
	})
}

// protocolRun runs one episode of a baseline protocol. The first agent
// answers "r=1 A1" in a first round and "r=3 A2" once it has seen its own
// answer; the second "B1", then "B2". It returns the rollout and every
// prompt, in the order they were asked.
func protocolRun(t *testing.T, protocol string, turns, samples int) (*rollout.Rollout, []string, error) {
	t.Helper()
	opts := joint.DefaultOptions()
	opts.Protocol, opts.Turns, opts.Samples = protocol, turns, samples
	wf, err := rollout.NewWorkflow("joint", opts, protocolAgents(t), jointToy{})
	if err != nil {
		return nil, nil, err
	}
	var mu sync.Mutex
	var prompts []string
	later := regexp.MustCompile(`\[prev:[^\]]+\]`)
	respond := func(prompt string, _ uint64) string {
		mu.Lock()
		prompts = append(prompts, prompt)
		mu.Unlock()
		first, again := strings.Contains(prompt, "You write first."), later.MatchString(prompt)
		switch {
		case first && again:
			return "r=3 A2"
		case first:
			return "r=1 A1"
		case again:
			return "B2"
		}
		return "B1"
	}
	s := rollout.Sampler{Generators: map[string]rollout.Generator{"policy": scripted.New(respond)}}
	out, err := s.Run(wf, []rollout.Task{jointToy{}.Task(0)}, 1, 7)
	return out, prompts, err
}

// The reference's three prompt-only baselines (LLM_Collab_Writing
// evals/eval_tldr_{parallel,pipeline,discussion}.py; LLM_Collab_Code_Generation
// baselines/multi_agent_tti.py): who sees what, and which answers the joint
// reward scores.
func TestBaselineProtocols(t *testing.T) {
	for _, tc := range []struct {
		protocol string
		turns    int
		calls    int
		reward   float64 // jointToy scores the first agent's r=
		seen     []string
		unseen   []string
	}{
		// every agent alone: nobody sees a teammate
		{joint.Parallel, 1, 2, 1, nil, []string{"mates:first", "mates:second"}},
		// the second sees the first's answer, the first sees nothing
		{joint.Sequential, 1, 2, 1, []string{"[mates:first:\nr=1 A1] [prev:]"}, []string{"mates:second"}},
		// a parallel round, then each sees its own and its teammate's first
		// answer; only the second round is scored (r=3)
		{joint.Discussion, 2, 4, 3, []string{"[mates:second:\nB1] [prev:r=1 A1]", "[mates:first:\nr=1 A1] [prev:B1]"}, nil},
	} {
		t.Run(tc.protocol, func(t *testing.T) {
			out, prompts, err := protocolRun(t, tc.protocol, tc.turns, 1)
			if err != nil {
				t.Fatal(err)
			}
			if len(prompts) != tc.calls {
				t.Fatalf("%d generations, want %d:\n%s", len(prompts), tc.calls, strings.Join(prompts, "\n"))
			}
			all := strings.Join(prompts, "\n")
			for _, s := range tc.seen {
				if !strings.Contains(all, s) {
					t.Errorf("no prompt shows %q:\n%s", s, all)
				}
			}
			for _, s := range tc.unseen {
				if strings.Contains(all, s) {
					t.Errorf("a prompt shows %q:\n%s", s, all)
				}
			}
			if strings.Contains(all, "[fb:turn") {
				t.Errorf("a prompt shows the reward's feedback:\n%s", all)
			}
			if tc.protocol == joint.Sequential && !strings.Contains(prompts[0], "You write first.") {
				t.Errorf("sequential asked the second agent first:\n%s", all)
			}
			ep := out.Episodes[0]
			if !ep.Done || ep.Reward != tc.reward || ep.Metrics["joint_reward"] != tc.reward || ep.Success != (tc.reward >= 2) {
				t.Errorf("episode: done %v, reward %g, joint_reward %g, success %v; want the last round's reward %g", ep.Done, ep.Reward, ep.Metrics["joint_reward"], ep.Success, tc.reward)
			}
		})
	}
}

// The baselines are prompt-only: one sample per agent, the turns they run.
func TestBaselineProtocolsRefuse(t *testing.T) {
	if _, _, err := protocolRun(t, joint.Sequential, 1, 4); err == nil || !strings.Contains(err.Error(), "prompt-only") {
		t.Errorf("sequential with G = 4: %v, want a refusal naming the prompt-only baseline", err)
	}
	if _, _, err := protocolRun(t, joint.Discussion, 1, 1); err == nil || !strings.Contains(err.Error(), "workflow.joint.turns=2") {
		t.Errorf("discussion in one turn: %v, want the fix named", err)
	}
	if _, _, err := protocolRun(t, "debate", 1, 1); err == nil || !strings.Contains(err.Error(), "workflow.joint.protocol") {
		t.Errorf("an unknown protocol: %v, want the key named", err)
	}
}
