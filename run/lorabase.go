package run

// lorabase.go — the frozen base of a LoRA run, which a checkpoint does not
// hold: its adapters mean something only on the weights they were trained
// on. Every checkpoint records each base's identity in train_state.json
// (its absolute path and its weights' fingerprint, safetensors'
// Fingerprint); a resume, an evaluation or an export of the checkpoint
// loads the base from models.<name>.path — or, when that path (relative to
// another working directory, say) has no model, from the recorded
// absolute path — and refuses one whose fingerprint differs, by name.
//
// What it is not: a check of full models' KL references (the base of a
// full fine-tune is only read for the KL term), or of checkpoints written
// before the record existed (their base is taken on trust, as before).

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"troupe/ckpt"
	"troupe/config"
	"troupe/safetensors"
)

// baseRecord is a LoRA base as a checkpoint records it.
type baseRecord struct {
	Path        string `json:"path"`        // absolute, at save time
	Fingerprint string `json:"fingerprint"` // safetensors.ModelDir.Fingerprint
}

// fingerprintBase returns the fingerprint of the weights in dir.
func fingerprintBase(dir string) (string, error) {
	m, err := safetensors.OpenModelDir(dir)
	if err != nil {
		return "", err
	}
	defer m.Close()
	return m.Fingerprint()
}

// recordedBases reads the bases a checkpoint recorded (none for one saved
// before they were, or for a run without adapters).
func recordedBases(cpDir string) (map[string]baseRecord, error) {
	var st trainState
	if err := ckpt.LoadJSON(filepath.Join(cpDir, StateFile), &st); err != nil {
		return nil, err
	}
	return st.Bases, nil
}

// resolveBase finds the base of models.<tr.Source> for the checkpoint
// cpDir ("" for a fresh run) and returns its path and record: the
// configured path, else the recorded one when the configured path holds
// no model, refused when its fingerprint is not the recorded one.
func resolveBase(tr config.Trained, cpDir string) (string, baseRecord, error) {
	path := tr.Model.Path
	var want baseRecord
	if cpDir != "" {
		bases, err := recordedBases(cpDir)
		if err != nil {
			return "", baseRecord{}, err
		}
		want = bases[tr.Source]
		if _, err := os.Stat(filepath.Join(path, "config.json")); errors.Is(err, fs.ErrNotExist) && want.Path != "" {
			path = want.Path
		}
	}
	fp, err := fingerprintBase(path)
	if err != nil {
		return "", baseRecord{}, fmt.Errorf("models.%s (the frozen base of the adapters): %w", tr.Source, err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	got := baseRecord{Path: abs, Fingerprint: fp}
	if want.Fingerprint != "" && want.Fingerprint != fp {
		return "", baseRecord{}, fmt.Errorf("models.%s.path %s is not the base the checkpoint's adapters were trained on: its weights' fingerprint is %.12s…, the checkpoint's base (%s) had %.12s…; set models.%s.path to that model (--set models.%s.path=DIR)",
			tr.Source, abs, fp, want.Path, want.Fingerprint, tr.Source, tr.Source)
	}
	return path, got, nil
}
