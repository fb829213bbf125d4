package run

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"troupe/config"
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
