package ckpt

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"troupe/torch"
)

// A float16 export of weights beyond ±65504 is refused with the tensor
// named (it would hold infinities); within the range it goes ahead, and the
// narrowing conversions are described.
func TestExportFloat16Range(t *testing.T) {
	m := newModel(t, tinyConfig(), 5, torch.Float32)
	tok := writeTokenizer(t)
	if err := Export(filepath.Join(t.TempDir(), "f16"), m, tok, ExportOptions{DType: "float16"}); err != nil {
		t.Fatalf("weights within float16's range: %v", err)
	}
	norm := m.Params()[len(m.Params())-1]
	torch.NoGrad(func() { norm.T.Fill(7e4) })
	dst := filepath.Join(t.TempDir(), "f16")
	err := Export(dst, m, tok, ExportOptions{DType: "fp16"})
	if err == nil || !strings.Contains(err.Error(), "tensor "+norm.Name+" reaches |w| = 7e+04, beyond float16's ±65504") || !strings.Contains(err.Error(), "bfloat16") {
		t.Fatalf("export of 7e4 as float16: %v", err)
	}
	if _, err := os.Stat(dst); err == nil {
		t.Error("the refused export left a directory")
	}
	if err := Export(filepath.Join(t.TempDir(), "bf16"), m, tok, ExportOptions{DType: "bfloat16"}); err != nil {
		t.Errorf("bfloat16 keeps the range: %v", err)
	}
	for _, c := range []struct {
		from torch.DType
		to   string
		want string
	}{
		{torch.Float32, "float16", "narrows their range to ±65504"},
		{torch.BFloat16, "fp16", "bfloat16 keeps bfloat16's range"},
		{torch.Float32, "bf16", "rounds each to 8 significant bits"},
		{torch.Float32, "", ""},
		{torch.Float32, "float32", ""},
		{torch.BFloat16, "float32", ""},
		{torch.Float16, "float16", ""},
	} {
		if got := NarrowingNote(c.from, c.to); c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("%v → %q: %q, want %q", c.from, c.to, got, c.want)
		}
	}
}
