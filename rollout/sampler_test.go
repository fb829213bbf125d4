package rollout_test

import (
	"reflect"
	"strings"
	"testing"
	"troupe/gen"

	"troupe/rollout"
	"troupe/rollout/scripted"
	"troupe/rollout/workflow/mathrefine"
	"troupe/rollout/workflow/single"
)

// coinFlips answers from the per-row seed: solver right or wrong, verifier
// approve or reject, so episodes differ between trajectories and seeds.
func coinFlips() scripted.Responder {
	return solverVerifier(
		func(p string, seed uint64) string {
			if seed%3 == 0 {
				return `wrong \boxed{5}`
			}
			return `\boxed{` + goldOf(p) + `}`
		},
		func(p string, seed uint64) string {
			if seed%2 == 0 {
				return "<verify>approve</verify>"
			}
			return "<verify>reject</verify>"
		})
}

// goldOf reads the task back out of a prompt (the scripted model "knows"
// the answers of the test tasks).
func goldOf(prompt string) string {
	for _, t := range tasks {
		if strings.Contains(prompt, t.Question) {
			return t.Answer
		}
	}
	return "?"
}

func TestSamplerBatchesPerModelWithCapAndDerivedSeeds(t *testing.T) {
	agents := team(t, "model-a", "model-b")
	wf := mathRefine(t, mathrefine.DefaultOptions(), agents)
	approve := scripted.Fixed("<verify>approve</verify>")
	a := scripted.New(solverVerifier(func(p string, _ uint64) string { return `\boxed{` + goldOf(p) + `}` }, approve))
	b := scripted.New(solverVerifier(scripted.Fixed("unused"), approve))
	s := rollout.Sampler{Generators: map[string]rollout.Generator{"model-a": a, "model-b": b}, MaxBatchRows: 5}
	const seed = 99
	out, err := s.Run(wf, tasks, 4, seed)
	if err != nil {
		t.Fatal(err)
	}
	sizes := func(g *scripted.Generator) (got []int) {
		for _, c := range g.Calls {
			got = append(got, len(c.Requests))
		}
		return got
	}
	if got := sizes(a); !reflect.DeepEqual(got, []int{5, 5, 2}) {
		t.Errorf("model-a batch sizes %v, want [5 5 2] (12 solver rows, cap 5)", got)
	}
	if got := sizes(b); !reflect.DeepEqual(got, []int{5, 5, 2}) {
		t.Errorf("model-b batch sizes %v, want [5 5 2]", got)
	}
	// Seeds: the k-th Generate call of the rollout gets DeriveSeed(seed, 0, k).
	for k, c := range append(append([]scripted.Call{}, a.Calls...), b.Calls...) {
		if want := rollout.DeriveSeed(seed, 0, uint64(k)); c.Seed != want {
			t.Errorf("call %d seed %d, want %d", k, c.Seed, want)
		}
	}
	// Rows of a batch are in episode order: trajectories 0–3 are task 0, 4–7 task 1.
	first := a.Calls[0].Prompts
	for i, p := range first {
		if want := tasks[i/4].Question; !strings.Contains(p, want) {
			t.Errorf("first batch row %d is not task %d", i, i/4)
		}
	}
	if out.Stats.Rounds != 2 || out.Stats.GenerateCalls != 6 || out.Stats.Rows != 24 || out.Stats.MaxRowsPerCall != 5 {
		t.Errorf("stats %+v, want 2 rounds, 6 calls, 24 rows, max 5 per call", out.Stats)
	}
	for i, r := range out.Samples {
		wantModel := map[string]string{"solver": "model-a", "verifier": "model-b"}[r.Agent]
		if r.Model != wantModel || r.Prompt != r.Traj/4 || r.TaskID != tasks[r.Prompt].ID || r.Reward != 1 {
			t.Errorf("row %d: agent %s model %s prompt %d traj %d task %s reward %g", i, r.Agent, r.Model, r.Prompt, r.Traj, r.TaskID, r.Reward)
		}
	}
}

func TestSamplerRerunIsIdentical(t *testing.T) {
	runOnce := func(seed uint64, workers, cap int) *rollout.Rollout {
		wf := mathRefine(t, mathrefine.DefaultOptions(), team(t, "policy", "policy"))
		s := rollout.Sampler{Generators: map[string]rollout.Generator{"policy": scripted.New(coinFlips())}, Workers: workers, MaxBatchRows: cap}
		out, err := s.Run(wf, tasks, 8, seed)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	a, b := runOnce(5, 1, 0), runOnce(5, 8, 0)
	if !reflect.DeepEqual(a.Samples, b.Samples) {
		t.Fatal("same seed, different worker count: rows differ")
	}
	if got := agentsOf(a.Samples); !strings.Contains(got, "solver,verifier,solver") || !strings.Contains(got, "verifier,solver,verifier") {
		t.Fatalf("the seed-driven script should give both approved and rejected trajectories, got %s", got)
	}
	c := runOnce(6, 2, 0)
	if reflect.DeepEqual(a.Samples, c.Samples) {
		t.Error("different seeds gave identical rows; seeds do not reach the generator")
	}
	// A different batch cap changes the call seeds, so the same rollout seed
	// is only reproducible under the same cap; with the same cap it is.
	d, e := runOnce(5, 3, 7), runOnce(5, 1, 7)
	if !reflect.DeepEqual(d.Samples, e.Samples) {
		t.Error("same seed and cap, different workers: rows differ")
	}
}

func TestSamplerTruncationAndPerAgentSampling(t *testing.T) {
	cfgs, _ := rollout.DefaultAgentConfigs("math-refine")
	temp := 0.6
	cfgs[0].MaxNewTokens = 6
	cfgs[0].Sampling.Temperature = &temp
	var agents []*rollout.Agent
	for _, c := range cfgs {
		a, err := rollout.NewAgent("agents[x]", c, defaults, scripted.Binding())
		if err != nil {
			t.Fatal(err)
		}
		agents = append(agents, a)
	}
	wf := mathRefine(t, mathrefine.DefaultOptions(), agents)
	gen := scripted.New(solverVerifier(scripted.Fixed(`a long derivation \boxed{4}`), scripted.Fixed("<verify>approve</verify>")))
	out := run(t, wf, gen, 1, 1)
	s := out.Samples[0]
	if !s.Truncated || len(s.ResponseTokens) != 6 || s.ResponseText != "a long" || s.Valid || s.Reward != -0.1 {
		t.Errorf("truncated solver row: truncated %v, %d tokens, text %q, valid %v, reward %g; want true, 6, \"a long\", false, -0.1",
			s.Truncated, len(s.ResponseTokens), s.ResponseText, s.Valid, s.Reward)
	}
	if v := out.Samples[1]; v.Truncated || !v.Valid {
		t.Errorf("verifier row truncated %v valid %v", v.Truncated, v.Valid)
	}
	req0, req1 := gen.Calls[0].Requests[0], gen.Calls[1].Requests[0]
	if req0.Sampling.Temperature != 0.6 || req0.MaxNewTokens != 6 || req1.Sampling.Temperature != 1 || req1.MaxNewTokens != 200 {
		t.Errorf("requests: solver T=%g max=%d, verifier T=%g max=%d; want 0.6/6 and 1/200", req0.Sampling.Temperature, req0.MaxNewTokens, req1.Sampling.Temperature, req1.MaxNewTokens)
	}
	if !reflect.DeepEqual(req0.Stop, []int{scripted.EOS}) {
		t.Errorf("stop ids %v, want [EOS]", req0.Stop)
	}
}

// badGenerator breaks the Generator contract in one chosen way.
type badGenerator struct{ mode string }

func (g badGenerator) Generate(reqs []gen.Request, _ uint64) ([]gen.Result, error) {
	out := make([]gen.Result, len(reqs))
	for i := range out {
		out[i] = gen.Result{Tokens: []int{'x', scripted.EOS}, LogProbs: []float32{-1, -1}, Finish: gen.FinishStop}
	}
	switch g.mode {
	case "count":
		return out[:0], nil
	case "stop":
		out[0].Tokens[1] = 'y'
	case "logprobs":
		out[0].LogProbs = nil
	}
	return out, nil
}

func TestSamplerRejectsContractBreaks(t *testing.T) {
	wf := mathRefine(t, mathrefine.DefaultOptions(), team(t, "policy", "policy"))
	for mode, want := range map[string]string{
		"count":    "generator returned 0 results for 1 requests",
		"stop":     "finish reason is stop but the last token is not one of the stop ids",
		"logprobs": "0 log-probs for 2 tokens",
	} {
		s := rollout.Sampler{Generators: map[string]rollout.Generator{"policy": badGenerator{mode}}}
		_, err := s.Run(wf, tasks[:1], 1, 0)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), `model "policy"`) {
			t.Errorf("%s: error %v, want it to name the model and say %q", mode, err, want)
		}
	}
	s := rollout.Sampler{Generators: map[string]rollout.Generator{"other": badGenerator{}}}
	if _, err := s.Run(wf, tasks[:1], 1, 0); err == nil || !strings.Contains(err.Error(), `agent "solver" runs on model "policy", which has no generator; the models are [other]`) {
		t.Errorf("missing generator error: %v", err)
	}
	if _, err := s.Run(wf, tasks[:1], 0, 0); err == nil || !strings.Contains(err.Error(), "n (trajectories per task) must be >= 1, got 0") {
		t.Errorf("n = 0 error: %v", err)
	}
}

// panicky is a workflow whose Advance panics, standing in for a buggy
// environment on a worker goroutine.
type panicky struct{ rollout.Workflow }

func (p panicky) Advance(*rollout.Episode, []*rollout.Call) ([]*rollout.Call, error) {
	panic("boom")
}

func TestSamplerTurnsWorkerPanicIntoError(t *testing.T) {
	wf := panicky{mathRefine(t, mathrefine.DefaultOptions(), team(t, "policy", "policy"))}
	s := rollout.Sampler{Generators: map[string]rollout.Generator{"policy": scripted.New(scripted.Fixed(`\boxed{4}`))}}
	_, err := s.Run(wf, tasks[:1], 2, 0)
	if err == nil || !strings.Contains(err.Error(), `task "t0": panic: boom`) {
		t.Errorf("error %v, want the panic reported with the task", err)
	}
}

func TestSingleWorkflowAndEval(t *testing.T) {
	cfgs, _ := rollout.DefaultAgentConfigs("single")
	a, err := rollout.NewAgent("agents[0]", cfgs[0], defaults, scripted.Binding())
	if err != nil {
		t.Fatal(err)
	}
	wf, err := rollout.NewWorkflow("single", single.DefaultOptions(), []*rollout.Agent{a}, exactScorer{})
	if err != nil {
		t.Fatal(err)
	}
	// Task t0: 2 of 4 right; t1: 0 of 4; t2: 4 of 4 (one without a box → invalid).
	script := map[string][]string{
		"2 + 2":  {`\boxed{4}`, `\boxed{5}`, `\boxed{4}`, `\boxed{3}`},
		"3 * 3":  {`\boxed{8}`, `\boxed{8}`, `\boxed{6}`, `no box`},
		"10 - 7": {`\boxed{3}`, `\boxed{3}`, `\boxed{3}`, `\boxed{3}`},
	}
	used := map[string]int{}
	gen := scripted.New(func(p string, _ uint64) string {
		for k, v := range script {
			if strings.Contains(p, k) {
				used[k]++
				return v[used[k]-1]
			}
		}
		return ""
	})
	s := rollout.Sampler{Generators: map[string]rollout.Generator{"policy": gen}}
	out, err := s.Run(wf, tasks, 4, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Samples) != 12 || out.Samples[5].Agent != "solver" || out.Samples[5].Turn != 0 {
		t.Fatalf("want 12 single-turn rows, got %d", len(out.Samples))
	}
	m, err := rollout.Evaluate(out.Episodes, 1, 2, 4)
	if err != nil {
		t.Fatal(err)
	}
	// pass@k per task with (n, c) = (4,2), (4,0), (4,4):
	// pass@1 = (0.5 + 0 + 1)/3; pass@2 = (1 − C(2,2)/C(4,2) + 0 + 1)/3 = (5/6 + 1)/3.
	want := map[int]float64{1: 0.5, 2: (5.0/6 + 1) / 3, 4: 2.0 / 3}
	for k, w := range want {
		if d := m.PassAtK[k] - w; d > 1e-12 || d < -1e-12 {
			t.Errorf("pass@%d = %g, want %g", k, m.PassAtK[k], w)
		}
	}
	if m.Tasks != 3 || m.Episodes != 12 || m.Accuracy != 0.5 || m.AvgAtK != 0.5 || m.SamplesPerTask != 4 {
		t.Errorf("metrics %+v", m)
	}
	if m.ValidRatio["solver"] != 11.0/12 || m.MeanTurns != 1 || m.CallsPerAgent["solver"] != 1 {
		t.Errorf("valid ratio %g turns %g calls %g, want 11/12, 1, 1", m.ValidRatio["solver"], m.MeanTurns, m.CallsPerAgent["solver"])
	}
	if _, err := rollout.Evaluate(out.Episodes, 5); err == nil || !strings.Contains(err.Error(), "pass@5 needs 1 <= k <= samples per task (4)") {
		t.Errorf("pass@5 error %v", err)
	}
}

// With engines, an episode's verifier call is submitted as soon as its
// solver call is back, while slower solvers are still generating; the run is
// a function of the seed (equal across worker counts and reruns), and every
// call draws from its own derived seed.
func TestSamplerContinuousEpisodesAdvanceOnTheirOwn(t *testing.T) {
	run := func(workers int) (*rollout.Rollout, *scripted.Engine) {
		agents := team(t, "policy", "policy")
		wf := mathRefine(t, mathrefine.DefaultOptions(), agents)
		// solver responses of very different lengths, by seed
		e := scripted.NewEngine(solverVerifier(
			func(p string, seed uint64) string {
				return strings.Repeat("think ", int(seed%40)) + `\boxed{` + goldOf(p) + `}`
			},
			coinFlips()))
		s := rollout.Sampler{Engines: map[string]rollout.Engine{"policy": e}, Workers: workers}
		out, err := s.Run(wf, tasks, 4, 7)
		if err != nil {
			t.Fatal(err)
		}
		return out, e
	}
	a, ea := run(1)
	b, _ := run(8)
	c, _ := run(3)
	if !reflect.DeepEqual(a.Samples, b.Samples) || !reflect.DeepEqual(a.Samples, c.Samples) {
		t.Fatal("the continuous rollout depends on the worker count")
	}
	firstVerifier := -1
	for _, sub := range ea.Submitted {
		if isVerifier(sub.Prompt) && firstVerifier < 0 {
			firstVerifier = sub.Step
		}
	}
	// the slowest solver finishes after the first verifier was submitted
	solverDone := 0
	for _, ep := range a.Episodes {
		if len(ep.Calls) == 0 || !ep.Done {
			t.Fatalf("episode %d not finished", ep.Traj)
		}
		solverDone = max(solverDone, 1+len(ep.Calls[0].ResponseTokens)/4)
	}
	if firstVerifier < 0 || firstVerifier >= solverDone {
		t.Fatalf("first verifier submitted at step %d, the slowest solver finished at step %d: episodes waited for each other", firstVerifier, solverDone)
	}
	// per-call seeds; the 12 solver calls come first, in episode order
	for i := 0; i < 12; i++ {
		if want := rollout.DeriveSeed(7, 2, uint64(i), 0); ea.Submitted[i].Seed != want {
			t.Fatalf("solver call of trajectory %d has seed %d, want %d", i, ea.Submitted[i].Seed, want)
		}
	}
	if a.Stats.Rows != len(a.Samples) || a.Stats.Rows < 24 {
		t.Fatalf("stats %+v for %d samples", a.Stats, len(a.Samples))
	}
}

func TestSamplerReportsProgress(t *testing.T) {
	agents := team(t, "policy", "policy")
	wf := mathRefine(t, mathrefine.DefaultOptions(), agents)
	e := scripted.NewEngine(solverVerifier(
		func(p string, seed uint64) string {
			return strings.Repeat("think ", int(seed%40)) + `\boxed{` + goldOf(p) + `}`
		},
		coinFlips()))
	var seen []rollout.RolloutProgress
	s := rollout.Sampler{Engines: map[string]rollout.Engine{"policy": e}, Progress: func(p rollout.RolloutProgress) { seen = append(seen, p) }}
	out, err := s.Run(wf, tasks, 4, 7)
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) < 2 {
		t.Fatalf("%d progress reports over a rollout of %d engine steps", len(seen), out.Stats.GenerateCalls)
	}
	for i, p := range seen {
		if p.Episodes != len(out.Episodes) || p.EpisodesDone > p.Episodes || p.Rows > out.Stats.Rows || p.ResponseTokens > out.Stats.ResponseTokens {
			t.Fatalf("report %d out of range: %+v (rollout: %d episodes, %+v)", i, p, len(out.Episodes), out.Stats)
		}
		if i > 0 && (p.Rows < seen[i-1].Rows || p.EpisodesDone < seen[i-1].EpisodesDone || p.ResponseTokens < seen[i-1].ResponseTokens) {
			t.Fatalf("progress went back: %+v after %+v", p, seen[i-1])
		}
	}
	if last := seen[len(seen)-1]; last.EpisodesDone == 0 || last.Rows == 0 {
		t.Fatalf("the last report shows no work done: %+v", last)
	}
}
