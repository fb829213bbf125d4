package rollout_test

import (
	"fmt"
	"strings"
	"testing"

	"troupe/rollout"
	"troupe/rollout/scripted"
	"troupe/rollout/workflow/mathrefine"
)

// mathRefineStep is a Dr. MAS-sized math step (32 tasks, math-refine) with
// scripted answers that cost almost nothing.
func mathRefineStep(b *testing.B) (rollout.Workflow, []rollout.Task, scripted.Responder) {
	b.Helper()
	var ts []rollout.Task
	for i := 0; i < 32; i++ {
		ts = append(ts, rollout.Task{ID: fmt.Sprint(i), Question: fmt.Sprintf("What is %d + %d? %s", i, i, strings.Repeat("Some context. ", 20)), Answer: fmt.Sprint(2 * i)})
	}
	long := strings.Repeat("We add the two numbers carefully. ", 40)
	respond := scripted.Match(
		scripted.Rule{Contains: "You are the Solver", Reply: func(_ string, seed uint64) string { return long + `\boxed{` + fmt.Sprint(seed%7) + `}` }},
		scripted.Rule{Contains: "You are the Verifier", Reply: func(_ string, seed uint64) string {
			return long + map[bool]string{true: "<verify>approve</verify>", false: "<verify>reject</verify>"}[seed%2 == 0]
		}},
	)
	cfgs, _ := rollout.DefaultAgentConfigs("math-refine")
	agents, err := rollout.NewAgents(cfgs, rollout.AgentDefaults{Sampling: rollout.DefaultSampling, MaxNewTokens: 4096},
		func(rollout.AgentConfig) (rollout.Binding, error) { return scripted.Binding(), nil })
	if err != nil {
		b.Fatal(err)
	}
	wf, err := rollout.NewWorkflow("math-refine", mathrefine.DefaultOptions(), agents, exactScorer{})
	if err != nil {
		b.Fatal(err)
	}
	return wf, ts, respond
}

// BenchmarkSamplerOverhead measures everything the sampler does besides
// generation — rendering templates, chat and encoding, batching, decoding,
// parsing, scoring, building rows — for one Dr. MAS-sized math step
// (32 prompts × 8 trajectories, math-refine) with a scripted generator that
// costs almost nothing. Reported per step and per row.
func BenchmarkSamplerOverhead(b *testing.B) {
	wf, ts, respond := mathRefineStep(b)
	rows := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s := rollout.Sampler{Generators: map[string]rollout.Generator{"policy": scripted.New(respond)}, MaxBatchRows: 128}
		out, err := s.Run(wf, ts, 8, uint64(i))
		if err != nil {
			b.Fatal(err)
		}
		rows += len(out.Samples)
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(rows), "µs/row")
}

// BenchmarkSamplerEngineOverhead is the same step through the continuous
// path (Sampler.Engines): the host time the sampler spends per engine Step
// (advancing episodes, rendering and encoding the next prompts, decoding,
// parsing, scoring) with scripted engines that answer at once and hold each
// response for one Step per 16 tokens, as a real engine's sync_every does.
// On a GPU this time is the decode's idle gap between Steps unless it is
// well under the 16 decode steps' time.
func BenchmarkSamplerEngineOverhead(b *testing.B) {
	wf, ts, respond := mathRefineStep(b)
	rows, steps := 0, 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e := scripted.NewEngine(respond)
		e.TokensPerStep = 16
		s := rollout.Sampler{Engines: map[string]rollout.Engine{"policy": e}}
		out, err := s.Run(wf, ts, 8, uint64(i))
		if err != nil {
			b.Fatal(err)
		}
		rows += len(out.Samples)
		steps += e.Steps()
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(rows), "µs/row")
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(steps), "µs/engine-step")
}
