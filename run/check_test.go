package run

import (
	"os"
	"path/filepath"
	"slices"
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
