package run

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"troupe/config"
	"troupe/torch"
)

// train check shows each agent's adapter at its effective shape: the lora
// section's fields it inherits filled in, its own overrides kept.
func TestEffectiveConfigFillsAgentLoRA(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"config.json", "tokenizer.json"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := config.LoadForPlan(filepath.Join("..", "configs", "lora-magrpo-writing-tiny.yaml"),
		[]string{"models.tiny.path=" + dir, "agents[1].lora.rank=4"})
	if err != nil {
		t.Fatal(err)
	}
	eff := effectiveConfig(cfg)
	first, second := eff.Agents[0].LoRA, eff.Agents[1].LoRA
	if first.Rank != 8 || first.Alpha != 16 || len(first.Targets) != 7 || first.RSLoRA == nil || *first.RSLoRA {
		t.Errorf("first agent's adapter %+v, want the lora section's rank 8, alpha 16, 7 targets, rslora false", first)
	}
	if second.Rank != 4 || second.Alpha != 16 || !slices.Equal(second.Targets, first.Targets) {
		t.Errorf("second agent's adapter %+v, want its own rank 4 and the section's alpha and targets", second)
	}
	if cfg.Agents[0].LoRA.Rank != 0 {
		t.Errorf("effectiveConfig changed the config it was given: %+v", cfg.Agents[0].LoRA)
	}
}

// train check names the recipe, the reference files it comes from, and the
// keys the config kept over it; the resolved config shows the recipe's
// values.
func TestCheckShowsTheRecipe(t *testing.T) {
	dir := t.TempDir()
	initTiny(t, dir, 1)
	var out strings.Builder
	c := &Check{Config: filepath.Join("..", "configs", "magrpo-writing-qwen3-1.7b.yaml"), Sets: []string{"models.qwen3.path=" + dir, "env.writing.source=procedural",
		"run.device=cpu"}} // check answers for this machine, which has no GPU
	if err := c.Run(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"recipe: magrpo-comlrl (OpenMLRL/LLM_Collab_Writing configs/magrpo_tldr_config.yaml", "keys set from it", "logprob_temperature: raw"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("train check's output lacks %q:\n%s", want, out.String())
		}
	}
}

// On a machine that sees no CUDA device (a login node), train check of a
// CUDA config checks everything but the devices, says in one line that
// they were not checked, and passes; its memory plan still gates on
// --gpu-gib: a plan that does not fit fails the check, naming remedies.
func TestCheckOffTheGPUNode(t *testing.T) {
	if torch.CUDADeviceCount() > 0 {
		t.Skip("this machine sees CUDA devices: train check checks them here")
	}
	dir := t.TempDir()
	initTiny(t, dir, 1)
	sets := []string{"models.qwen3.path=" + dir, "env.writing.source=procedural"}
	file := filepath.Join("..", "configs", "magrpo-writing-qwen3-1.7b.yaml")
	var out strings.Builder
	if err := (&Check{Config: file, Sets: sets}).Run(&out); err != nil {
		t.Fatalf("check of a cuda config off the GPU node: %v", err)
	}
	if n := strings.Count(out.String(), "Not checked here: the devices cuda:0 (this machine sees no CUDA device)"); n != 1 {
		t.Fatalf("want one line saying cuda:0 was not checked, got %d:\n%s", n, out.String())
	}
	// the same config on a device index the run would refuse on a GPU node
	// is still only unchecked here; a 1 GiB GPU fails the memory plan
	out.Reset()
	err := (&Check{Config: file, Sets: sets, GpuGiB: 1}).Run(&out)
	if err == nil || !strings.Contains(err.Error(), "does not fit 1.0 GiB") || !strings.Contains(out.String(), "--set assignment=lora") && !strings.Contains(out.String(), "lower the peak most") {
		t.Fatalf("check against 1 GiB GPUs: %v, want the plan's refusal with remedies\n%s", err, out.String())
	}
	// the run itself still refuses the device, naming the GPU build
	cfg, lerr := config.Load(file, sets)
	if lerr != nil {
		t.Fatal(lerr)
	}
	if _, err := preflight(cfg, false); err == nil || !strings.Contains(err.Error(), "make gpu") && !strings.Contains(err.Error(), "CUDA devices") {
		t.Fatalf("a run's preflight on this machine: %v, want the device refused", err)
	}
}
