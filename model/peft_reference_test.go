package model

// peft_reference_test.go — adapters written by PEFT itself load into troupe
// and give PEFT's logits. scripts/gpu/hf_reference.py peft-fixtures (run at
// test time by the Python reference environment, internal/pyref) builds tiny
// random Qwen2.5 and Qwen3 bases with transformers, adds LoRA adapters with
// get_peft_model (every projection; attention with rsLoRA on a base with
// attention bias; MLP only on a tied base), redraws their A and B, and saves
// them with PeftModel.save_pretrained; troupe loads each base with Load and
// its adapter with LoadAdapter, and its float32 logits over a padded batch
// must match the adapted model's within 1e-4 (the tolerance of
// reference_test.go). The other direction — troupe's exported adapters in
// PEFT — is ckpt's TestAdapterLoadsInPEFT.

import (
	"path/filepath"
	"testing"

	"troupe/internal/pyref"
	"troupe/torch"
)

func TestPEFTAdapterLoadsInTroupe(t *testing.T) {
	root := t.TempDir()
	t.Logf("%s", pyref.Run(t, "scripts/gpu/hf_reference.py", "peft-fixtures", root))
	dirs := refModelDirs(t, root)
	if len(dirs) != 3 {
		t.Errorf("want the 3 variants of hf_reference.py peft-fixtures, found %d: %v", len(dirs), dirs)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			ref := readRefFile(t, filepath.Join(dir, refFixtureFile))
			seqs := ref.seqs(t, "input_ids", "lengths")
			base := loadRefModel(t, filepath.Join(dir, "base"), Options{DType: torch.Float32, Device: torch.CPU})
			a, err := base.LoadAdapter(filepath.Join(dir, "adapter"))
			if err != nil {
				t.Fatal(err)
			}
			defer a.Free()
			V := base.Config.VocabSize
			d := compareLogits(realTokenLogits(t, a.Model(), seqs, PadRight), ref.logits(t, "logits", seqs, V), seqs, V)
			if !(d.maxAbs <= refF32Tol) {
				t.Errorf("logits through PEFT's adapter: %v exceeds the tolerance %g (the adapter moves PEFT's logits by up to %s)", d, refF32Tol, ref.meta["adapter_moves_logits_by"])
			} else {
				t.Logf("logits through PEFT's adapter: %v (tolerance %g; the adapter moves them by up to %s)", d, refF32Tol, ref.meta["adapter_moves_logits_by"])
			}
		})
	}
}
