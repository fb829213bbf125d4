package mathrefine_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"troupe/rollout"
	"troupe/rollout/scripted"
	"troupe/rollout/workflow/mathrefine"
)

func TestMathRefineApprovePath(t *testing.T) {
	agents := team(t, "policy", "policy")
	wf := mathRefine(t, mathrefine.DefaultOptions(), agents)
	gen := scripted.New(solverVerifier(scripted.Fixed(`2 + 2 = 4, so \boxed{4}`), scripted.Fixed("All steps check out.\n<verify>approve</verify>")))
	out := run(t, wf, gen, 1, 7)

	if got := agentsOf(out.Samples); got != "solver,verifier" {
		t.Fatalf("rows = %s, want solver,verifier", got)
	}
	for i, r := range out.Samples {
		if r.Turn != i || r.Node != i || r.Candidate != 0 || r.Traj != 0 || r.Prompt != 0 || r.TaskID != "t0" || r.Model != "policy" {
			t.Errorf("row %d keys = turn %d node %d cand %d traj %d prompt %d task %q model %q", i, r.Turn, r.Node, r.Candidate, r.Traj, r.Prompt, r.TaskID, r.Model)
		}
		if !r.Valid || r.Truncated || r.Reward != 1 || r.TeamReward != 1 || r.Penalty != 0 {
			t.Errorf("row %d: valid %v truncated %v reward %g team %g penalty %g; want valid, 1, 1, 0", i, r.Valid, r.Truncated, r.Reward, r.TeamReward, r.Penalty)
		}
		if got := (scripted.Codec{}).Decode(r.PromptTokens); got != r.PromptText {
			t.Errorf("row %d: prompt tokens decode to %q, want the prompt text", i, got)
		}
		if last := r.ResponseTokens[len(r.ResponseTokens)-1]; last != scripted.EOS {
			t.Errorf("row %d: last response token %d, want the stop token %d", i, last, scripted.EOS)
		}
		if strings.Contains(r.ResponseText, "<|im_end|>") {
			t.Errorf("row %d: response text keeps the stop token: %q", i, r.ResponseText)
		}
		if len(r.SampleLogProbs) != len(r.ResponseTokens) {
			t.Errorf("row %d: %d log-probs for %d tokens", i, len(r.SampleLogProbs), len(r.ResponseTokens))
		}
	}
	solver, verifier := out.Samples[0].PromptText, out.Samples[1].PromptText
	if !isSolver(solver) || !strings.Contains(solver, "What is 2 + 2?") || strings.Contains(solver, "# Your Teammates' Outputs") {
		t.Errorf("first solver prompt should hold the task and no teammates section:\n%s", solver)
	}
	wantCtx := `The output of "solver": 2 + 2 = 4, so \boxed{4}`
	if !isVerifier(verifier) || !strings.Contains(verifier, "# Your Teammates' Outputs\n"+wantCtx) {
		t.Errorf("verifier prompt should show the solver's output as team context:\n%s", verifier)
	}
	if ep := out.Episodes[0]; !ep.Done || !ep.Success || ep.Extracted != "4" {
		t.Errorf("episode: done %v success %v extracted %q", ep.Done, ep.Success, ep.Extracted)
	}
}

func TestMathRefineRejectPath(t *testing.T) {
	agents := team(t, "policy", "policy")
	wf := mathRefine(t, mathrefine.DefaultOptions(), agents)
	gen := scripted.New(solverVerifier(
		scripted.Sequence(`\boxed{5}`, `I was wrong: 2 + 2 = 4. \boxed{4}`),
		scripted.Fixed("2 + 2 is not 5.\n<verify>reject</verify>")))
	out := run(t, wf, gen, 1, 7)

	if got := agentsOf(out.Samples); got != "solver,verifier,solver" {
		t.Fatalf("rows = %s, want solver,verifier,solver", got)
	}
	for i, r := range out.Samples {
		if r.Turn != i || r.Reward != 1 {
			t.Errorf("row %d: turn %d reward %g; want turn %d, reward 1 (the last answer is right)", i, r.Turn, r.Reward, i)
		}
	}
	second := out.Samples[2].PromptText
	for _, want := range []string{`The output of "solver": \boxed{5}`, `The output of "verifier": 2 + 2 is not 5.` + "\n<verify>reject</verify>"} {
		if !strings.Contains(second, want) {
			t.Errorf("second solver prompt lacks %q:\n%s", want, second)
		}
	}
	if strings.Index(second, `"solver"`) > strings.Index(second, `"verifier"`) {
		t.Errorf("team context out of order:\n%s", second)
	}
	calls := out.Episodes[0].Calls
	if calls[2].Data.Loop != 1 || calls[2].Data.Step != 2 || calls[1].Data.Loop != 0 || calls[2].Data.MaxLoops != 2 {
		t.Errorf("loop/step = (%d,%d) (%d,%d), want verifier loop 0, second solver loop 1 step 2", calls[1].Data.Loop, calls[1].Data.Step, calls[2].Data.Loop, calls[2].Data.Step)
	}
}

func TestMathRefineScoresLastSolverAnswer(t *testing.T) {
	agents := team(t, "policy", "policy")
	wf := mathRefine(t, mathrefine.DefaultOptions(), agents)
	// Right first, then talked out of it: the reward follows the last answer.
	gen := scripted.New(solverVerifier(scripted.Sequence(`\boxed{4}`, `\boxed{5}`), scripted.Fixed("<verify>reject</verify>")))
	out := run(t, wf, gen, 1, 7)
	for i, r := range out.Samples {
		if r.Reward != 0 {
			t.Errorf("row %d (%s): reward %g, want 0", i, r.Agent, r.Reward)
		}
	}
}

func TestMathRefineMissingVerdict(t *testing.T) {
	noTag := scripted.Fixed("Looks fine to me.")
	for _, tc := range []struct {
		missing string
		want    string
	}{
		{rollout.VerdictApprove, "solver,verifier"},
		{rollout.VerdictReject, "solver,verifier,solver"},
	} {
		t.Run(tc.missing, func(t *testing.T) {
			opts := mathrefine.DefaultOptions()
			opts.MissingVerdict = tc.missing
			wf := mathRefine(t, opts, team(t, "policy", "policy"))
			out := run(t, wf, scripted.New(solverVerifier(scripted.Fixed(`\boxed{4}`), noTag)), 1, 3)
			if got := agentsOf(out.Samples); got != tc.want {
				t.Fatalf("rows = %s, want %s", got, tc.want)
			}
			v := out.Samples[1]
			if v.Valid || v.Penalty != 0.1 || v.Reward != 0.9 || v.TeamReward != 1 || v.Problem == "" {
				t.Errorf("verifier without a tag: valid %v penalty %g reward %g team %g problem %q; want invalid, 0.1, 0.9, 1, a reason",
					v.Valid, v.Penalty, v.Reward, v.TeamReward, v.Problem)
			}
		})
	}
}

func TestMathRefineMaxLoops(t *testing.T) {
	reject := scripted.Fixed("<verify>reject</verify>")
	for _, tc := range []struct {
		loops       int
		verifyFinal bool
		want        string
	}{
		{1, false, "solver"},
		{1, true, "solver,verifier"},
		{2, false, "solver,verifier,solver"},
		{3, false, "solver,verifier,solver,verifier,solver"},
		{3, true, "solver,verifier,solver,verifier,solver,verifier"},
	} {
		t.Run(fmt.Sprintf("loops=%d,verify_final=%v", tc.loops, tc.verifyFinal), func(t *testing.T) {
			opts := mathrefine.DefaultOptions()
			opts.MaxLoops, opts.VerifyFinal = tc.loops, tc.verifyFinal
			wf := mathRefine(t, opts, team(t, "policy", "policy"))
			out := run(t, wf, scripted.New(solverVerifier(scripted.Fixed(`\boxed{4}`), reject)), 1, 3)
			if got := agentsOf(out.Samples); got != tc.want {
				t.Fatalf("rows = %s, want %s", got, tc.want)
			}
			last := out.Episodes[0].Calls[len(out.Samples)-1]
			if wantLoop := tc.loops - 1; last.Data.Loop != wantLoop {
				t.Errorf("last call at loop %d, want %d", last.Data.Loop, wantLoop)
			}
		})
	}
}

func TestMathRefineOptionErrors(t *testing.T) {
	agents := team(t, "policy", "policy")
	for _, tc := range []struct {
		edit func(*mathrefine.Options)
		want string
	}{
		{func(o *mathrefine.Options) { o.MaxLoops = 0 }, "workflow.math_refine.max_loops: must be >= 1, got 0"},
		{func(o *mathrefine.Options) { o.MissingVerdict = "yes" }, `workflow.math_refine.missing_verdict: must be "approve" or "reject", got "yes"`},
		{func(o *mathrefine.Options) { o.Verifier = "critic" }, `workflow.math_refine.verifier: no agent named "critic"; the agents are [solver, verifier]`},
		{func(o *mathrefine.Options) { o.Verifier = "solver" }, "must differ from the solver"},
	} {
		o := mathrefine.DefaultOptions()
		tc.edit(&o)
		_, err := rollout.NewWorkflow("math-refine", o, agents, exactScorer{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error = %v, want it to contain %q", err, tc.want)
		}
	}
	_, err := rollout.NewWorkflow("debate", mathrefine.DefaultOptions(), agents, exactScorer{})
	if err == nil || !strings.Contains(err.Error(), "use one of joint, math-refine, single, tree") {
		t.Errorf("unknown workflow error = %v, want the valid names listed", err)
	}
}

// reward_scale multiplies the team reward an agent is credited with; the
// format penalty is not scaled.
func TestRewardScale(t *testing.T) {
	cfgs, err := rollout.DefaultAgentConfigs("math-refine")
	if err != nil {
		t.Fatal(err)
	}
	cfgs[1].RewardScale = 5
	wf := mathRefine(t, mathrefine.DefaultOptions(), compileAgents(t, cfgs))
	gen := scripted.New(solverVerifier(scripted.Fixed(`\boxed{4}`), scripted.Fixed("no verdict here")))
	out := run(t, wf, gen, 1, 7)
	for _, r := range out.Samples {
		want := 1.0
		if r.Agent == "verifier" {
			want = 5 - 0.1 // invalid: no verdict
		}
		if math.Abs(r.Reward-want) > 1e-12 {
			t.Errorf("%s (valid %v): reward %g, want %g", r.Agent, r.Valid, r.Reward, want)
		}
	}
	cfgs[0].RewardScale = -1
	if _, err := rollout.NewAgent("agents[0]", cfgs[0], defaults, scripted.Binding()); err == nil || !strings.Contains(err.Error(), "agents[0].reward_scale") {
		t.Errorf("a negative reward_scale: %v", err)
	}
}

// reward_offset is added to the team reward an agent is credited with, after
// reward_scale; the format penalty is neither scaled nor offset, and other
// agents are untouched.
func TestRewardOffset(t *testing.T) {
	cfgs, err := rollout.DefaultAgentConfigs("math-refine")
	if err != nil {
		t.Fatal(err)
	}
	cfgs[1].RewardScale = 3
	cfgs[1].RewardOffset = -0.5
	wf := mathRefine(t, mathrefine.DefaultOptions(), compileAgents(t, cfgs))
	gen := scripted.New(solverVerifier(scripted.Fixed(`\boxed{4}`), scripted.Fixed("no verdict here")))
	out := run(t, wf, gen, 1, 7)
	for _, r := range out.Samples {
		wantTeam, want := 1.0, 1.0
		if r.Agent == "verifier" {
			wantTeam = 3*1 - 0.5
			want = wantTeam - 0.1 // invalid: no verdict
		}
		if math.Abs(r.Reward-want) > 1e-12 || math.Abs(r.TeamReward-wantTeam) > 1e-12 {
			t.Errorf("%s (valid %v): reward %g, team %g; want %g, %g", r.Agent, r.Valid, r.Reward, r.TeamReward, want, wantTeam)
		}
	}
	cfgs[0].RewardOffset = math.Inf(1)
	if _, err := rollout.NewAgent("agents[0]", cfgs[0], defaults, scripted.Binding()); err == nil || !strings.Contains(err.Error(), "agents[0].reward_offset") {
		t.Errorf("an infinite reward_offset: %v", err)
	}
}
