package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"troupe/ckpt"
	"troupe/internal/metrics"
	"troupe/model"
	"troupe/torch"
)

// adapterLogits loads base with the PEFT adapter in dir and returns the
// logits of seq through it.
func adapterLogits(t *testing.T, base, dir string, seq []int) []float32 {
	t.Helper()
	m, err := model.Load(base, model.Options{DType: torch.Float32, Device: torch.CPU})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Free()
	a, err := m.LoadAdapter(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := torch.NewScope()
	defer s.Close()
	in, err := model.Pack([][]int{seq}, model.PadRight, torch.CPU)
	if err != nil {
		t.Fatal(err)
	}
	lg, err := a.Model().Logits(in)
	if err != nil {
		t.Fatal(err)
	}
	return lg.Float32s()
}

// Two agents, each with its own adapter on one frozen base: the run trains
// only the adapters (the KL reference is the base itself), rollouts of both
// agents share one engine, a resumed run is bit-identical to a straight one,
// and the export is a PEFT directory that reloads on the base with the
// checkpoint's logits, plus a merged full model on request.
func TestEndToEndLoRA(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end training run; skipped with -short")
	}
	before := torch.LiveTensors()
	dir := t.TempDir()
	cfgPath, sft := warmModel(t, dir)
	runA, runB := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	common := []string{"-c", cfgPath, "-q", "--set", "models.tiny.path=" + sft, "--set", "assignment=lora",
		"--set", "lora.rank=4", "--set", "lora.alpha=8", "--set", "optim.lr=1e-2", "--set", "agents.1.lora.rank=2",
		"--set", "agents.1.lora.targets=[q_proj,v_proj]", "--set", "agents.1.optim.kl_coef=0.05", "--set", "export.merge_adapters=true"}

	cli(t, append(common, "--set", "run.output_dir="+runA, "--set", "run.steps=4")...)
	cli(t, append(common, "--set", "run.output_dir="+runB, "--set", "run.steps=2")...)
	out := cli(t, append(common, "--set", "run.output_dir="+runB, "--set", "run.steps=4", "--resume")...)
	if !strings.Contains(out, "at step 2") {
		t.Fatalf("resume did not continue at step 2:\n%s", tail(out, 800))
	}
	for _, m := range []string{"solver", "verifier"} {
		for _, f := range []string{model.AdapterWeightsFile, model.AdapterConfigFile, ckpt.OptimizerFileName} {
			p := filepath.Join("checkpoints", ckpt.DirName(4), "models", m, f)
			if !bytes.Equal(readFile(t, filepath.Join(runA, p)), readFile(t, filepath.Join(runB, p))) {
				t.Fatalf("%s differs between 4 straight steps and 2 + resume + 2", p)
			}
		}
		if _, err := os.Stat(filepath.Join(runA, "checkpoints", ckpt.DirName(4), "models", m, "model.safetensors")); err == nil {
			t.Fatalf("the checkpoint of adapter %s holds full weights", m)
		}
	}

	// the agents' own adapter shapes, in PEFT's config
	var pc map[string]any
	if err := json.Unmarshal(readFile(t, filepath.Join(runA, "export", "verifier", model.AdapterConfigFile)), &pc); err != nil {
		t.Fatal(err)
	}
	if pc["r"] != 2.0 || pc["lora_alpha"] != 8.0 || pc["base_model_name_or_path"] != sft {
		t.Fatalf("verifier's adapter_config.json: %v", pc)
	}

	// metrics: both agents trained, one engine on the base served both
	recs, err := metrics.ReadJSONL(filepath.Join(runB, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	last := recs[len(recs)-1].Values
	for _, k := range []string{"policy/solver/loss", "policy/verifier/loss", "grad_norm/solver", "grad_norm/verifier", "engine/tiny/decode_steps"} {
		if _, ok := last[k]; !ok {
			t.Fatalf("no %s in the metrics", k)
		}
	}
	if _, ok := last["engine/solver/decode_steps"]; ok {
		t.Fatal("an engine per adapter: the adapters should share the base's")
	}

	// the export reloads on the base with the checkpoint's logits; the
	// adapters changed them; the merged model agrees
	seq := []int{1, 5, 9, 200, 13, 40}
	base := logitsOf(t, sft, seq)
	for _, m := range []string{"solver", "verifier"} {
		ck := adapterLogits(t, sft, filepath.Join(runA, "checkpoints", ckpt.DirName(4), "models", m), seq)
		ex := adapterLogits(t, sft, filepath.Join(runA, "export", m), seq)
		merged := logitsOf(t, filepath.Join(runA, "export", m+"-merged"), seq)
		// the same weights give the same logits up to the CPU's summation
		// order, which is not bit-stable on a busy machine (threads)
		changed := false
		for i := range ck {
			if d := math.Abs(float64(ck[i] - ex[i])); d > 1e-6*math.Max(1, math.Abs(float64(ck[i]))) {
				t.Fatalf("%s: the exported adapter does not reproduce the checkpoint's logits (logit %d: %g vs %g)", m, i, ex[i], ck[i])
			}
			changed = changed || math.Abs(float64(ck[i]-base[i])) > 1e-4
		}
		if !changed {
			t.Fatalf("%s: RL left the adapter's logits equal to the base's", m)
		}
		if e := maxAbsDiff(merged, ex); e > 1e-4 {
			t.Fatalf("%s: merged export vs adapter: max difference %g", m, e)
		}
	}

	// train generate through the exported adapter samples what the merged
	// model does (greedy); an adapter for another base is refused
	gen := func(args ...string) string {
		return cli(t, append([]string{"generate", "--temperature", "0", "--max-new-tokens", "12", "--raw"}, append(args, "1 2 3")...)...)
	}
	viaAdapter := gen("--model", sft, "--adapter", filepath.Join(runA, "export", "solver"))
	if merged := gen("--model", filepath.Join(runA, "export", "solver-merged")); viaAdapter != merged {
		t.Fatalf("generate through the adapter %q, through the merged model %q", viaAdapter, merged)
	}
	if base := gen("--model", sft); base == viaAdapter {
		t.Logf("note: the adapter's greedy continuation equals the base's here (%q)", base)
	}
	other := filepath.Join(dir, "other-base")
	cli(t, "init", other, "--seed", "9", "--hidden", "48")
	if msg := failCode(t, "generate", "--model", other, "--adapter", filepath.Join(runA, "export", "solver"), "hi"); !strings.Contains(msg, "--adapter") || !strings.Contains(msg, "shape") {
		t.Fatalf("an adapter on another base: %q", msg)
	}

	// train export from a checkpoint writes the same adapter, and refuses to
	// replace it without --force
	exp := filepath.Join(dir, "exp")
	cp := filepath.Join(runA, "checkpoints", ckpt.DirName(4))
	cli(t, "export", "--checkpoint", cp, "--out", exp, "--merge")
	if !bytes.Equal(readFile(t, filepath.Join(exp, "solver", model.AdapterWeightsFile)), readFile(t, filepath.Join(runA, "export", "solver", model.AdapterWeightsFile))) {
		t.Fatal("train export wrote another adapter than the run's export")
	}
	if _, err := os.Stat(filepath.Join(exp, "solver-merged", "model.safetensors")); err != nil {
		t.Fatalf("train export --merge: %v", err)
	}
	if msg := failCode(t, "export", "--checkpoint", cp, "--out", exp); !strings.Contains(msg, "--force") {
		t.Fatalf("export over an existing one: %q", msg)
	}
	if after := torch.LiveTensors(); after != before {
		t.Fatalf("live tensors: %d before the runs, %d after", before, after)
	}
}

func maxAbsDiff(a, b []float32) float64 {
	m := 0.0
	for i := range a {
		d := float64(a[i] - b[i])
		if d < 0 {
			d = -d
		}
		m = max(m, d)
	}
	return m
}
