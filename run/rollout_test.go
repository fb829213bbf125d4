package run

import (
	"strings"
	"testing"

	"troupe/rollout"
	"troupe/torch"
)

// A tiny random model runs math-refine (thinking off: the Qwen3 template
// closes an empty think block after the assistant tag) for a batch end to end through the
// real wiring (tokenizer chat template → model.Generate → rollout), and
// every row's token ids decode to its rendered prompt and its response.
func TestRealModelRolloutRowsDecode(t *testing.T) {
	before := torch.LiveTensors()
	team := tinyTeam(t, 9, "max_new_tokens=12")
	defer func() { team.free() }()
	tasks := []rollout.Task{team.train.Task(0), team.train.Task(1)}
	ro, err := team.sampler.Run(team.workflow, tasks, 3, 42)
	if err != nil {
		t.Fatal(err)
	}
	if len(ro.Episodes) != 6 || len(ro.Samples) < 6 {
		t.Fatalf("%d episodes, %d rows", len(ro.Episodes), len(ro.Samples))
	}
	agents := map[string]bool{}
	for i, s := range ro.Samples {
		tok := team.tokenizers[s.Model]
		if got := tok.Decode(s.PromptTokens); got != s.PromptText {
			t.Fatalf("row %d: prompt ids decode to %q, rendered prompt is %q", i, got, s.PromptText)
		}
		if !strings.Contains(s.PromptText, tasks[s.Prompt].Question) || !strings.HasSuffix(s.PromptText, "<|im_start|>assistant\n<think>\n\n</think>\n\n") {
			t.Fatalf("row %d: the prompt is not a chat asking the task's question:\n%s", i, s.PromptText)
		}
		resp := s.ResponseTokens
		if !s.Truncated && len(resp) > 0 {
			resp = resp[:len(resp)-1] // the stop token stays in the ids, not in the text
		}
		if got := tok.Decode(resp); got != s.ResponseText {
			t.Fatalf("row %d: response ids decode to %q, response text is %q", i, got, s.ResponseText)
		}
		if len(s.SampleLogProbs) != len(s.ResponseTokens) || len(s.ResponseTokens) == 0 || len(s.ResponseTokens) > 12 {
			t.Fatalf("row %d: %d tokens, %d log-probs", i, len(s.ResponseTokens), len(s.SampleLogProbs))
		}
		if s.Model != s.Agent { // assignment: separate
			t.Fatalf("row %d: agent %s acted with model %s", i, s.Agent, s.Model)
		}
		agents[s.Agent] = true
	}
	if !agents["solver"] || !agents["verifier"] {
		t.Fatalf("rows from agents %v, want solver and verifier", agents)
	}
	// the same seed gives the same episodes with the real model
	again, err := team.sampler.Run(team.workflow, tasks, 3, 42)
	if err != nil {
		t.Fatal(err)
	}
	for i := range ro.Samples {
		if ro.Samples[i].ResponseText != again.Samples[i].ResponseText {
			t.Fatalf("row %d differs between two runs with the same seed", i)
		}
	}
	team.free()
	team = nil
	if after := torch.LiveTensors(); after != before {
		t.Fatalf("live tensors: %d before, %d after", before, after)
	}
}
