package config

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"troupe/optim"
	"troupe/rollout/workflow/joint"
)

// Every shipped MAGRPO config (configs/magrpo-*.yaml) trains as CoMLRL's
// trainer does (comlrl/trainers/reinforce/magrpo.py and the writing and
// code-generation configs): advantages normalised (advantage_normalization
// true), the loss −A · Σ_tokens log π averaged over responses
// (seq-mean-token-sum with the magrpo loss), torch's AdamW without gradient
// clipping; the coding configs end solved branches early.
func TestMAGRPOConfigsFollowTheReference(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join("..", "configs", "magrpo-*.yaml"))
	lora, _ := filepath.Glob(filepath.Join("..", "configs", "lora-magrpo-*.yaml"))
	paths = append(paths, lora...)
	if len(paths) < 4 {
		t.Fatalf("%d MAGRPO configs, want a tiny and a real-size one per task", len(paths))
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(filepath.Base(p), func(t *testing.T) {
			// the dataset files it names, empty, in a scratch directory (as
			// TestShippedConfigsValidate does)
			dir := t.TempDir()
			for _, m := range regexp.MustCompile(`(?m)^\s+(?:train|test):\s*(\S+)\s*$`).FindAllSubmatch(data, -1) {
				f := filepath.Join(dir, string(m[1]))
				os.MkdirAll(filepath.Dir(f), 0o755)
				os.WriteFile(f, nil, 0o644)
			}
			wd, _ := os.Getwd()
			if err := os.Chdir(dir); err != nil {
				t.Fatal(err)
			}
			defer os.Chdir(wd)
			c, err := parse(data, nil, noModels)
			if err != nil {
				t.Fatal(err)
			}
			o := c.Optim
			if o.Loss != optim.LossMAGRPO || o.LossAgg != optim.SeqMeanTokenSum || o.GradClip != 0 {
				t.Errorf("optim: loss %s, loss_agg %s, grad_clip %g; want magrpo, seq-mean-token-sum, 0", o.Loss, o.LossAgg, o.GradClip)
			}
			if c.Workflow.Name != "joint" {
				return // the single-agent baselines
			}
			if c.Advantage.Estimator != "magrpo" || !c.Advantage.MAGRPO.Normalize || c.Advantage.MAGRPO.Baseline != "mean" {
				t.Errorf("advantage: %s, normalize %v, baseline %s; want magrpo, true, mean", c.Advantage.Estimator, c.Advantage.MAGRPO.Normalize, c.Advantage.MAGRPO.Baseline)
			}
			w := c.Workflow.Options().(joint.Options)
			if w.Samples != 4 || w.Mode != joint.Aligned {
				t.Errorf("workflow.joint: samples %d, mode %s; want 4, aligned", w.Samples, w.Mode)
			}
			if c.Env.Name == "coding" && (w.TerminationThreshold == nil || *w.TerminationThreshold != 3.8 || w.Turns != 2) {
				t.Errorf("coding: turns %d, termination_threshold %v; want 2 and 3.8", w.Turns, w.TerminationThreshold)
			}
			if c.Env.Name == "writing" && w.Turns != 1 {
				t.Errorf("writing: turns %d, want 1 (the reference's writing is single-turn)", w.Turns)
			}
		})
	}
}

// The joint mode is configured once, as workflow.joint.mode:
// advantage.magrpo.joint follows it unless a file sets it, and one that
// sets it must agree.
func TestJointModeIsConfiguredOnce(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "configs", "magrpo-writing-tiny.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"aligned", "cross"} {
		c, err := parse(data, []string{"workflow.joint.mode=" + mode}, noModels)
		if err != nil {
			t.Fatalf("mode %s: %v", mode, err)
		}
		if c.Advantage.MAGRPO.Joint != mode {
			t.Errorf("workflow.joint.mode %s: advantage.magrpo.joint is %q, want it to follow", mode, c.Advantage.MAGRPO.Joint)
		}
	}
	_, err = parse(data, []string{"workflow.joint.mode=cross", "advantage.magrpo.joint=aligned"}, noModels)
	if err == nil || !regexp.MustCompile(`advantage\.magrpo\.joint.*workflow\.joint\.mode`).MatchString(err.Error()) {
		t.Errorf("a file that sets both to different modes: want a refusal naming both keys, got %v", err)
	}
}
