package datasets_test

// pyref_test.go — every converted file against the Python reference
// environment (scripts/pyref/datasets_reference.py): Hugging Face's
// datasets library choosing each split's files over the fixtures, Python's
// str(), re and strip on the values, the reference scripts' conversions,
// and pandas reading troupe's Parquet and JSONL back.

import (
	"path/filepath"
	"testing"

	"troupe/datasets"
	"troupe/internal/pyref"
)

func TestMatchesPythonReference(t *testing.T) {
	pyref.Python(t) // skips (or fails under TROUPE_PYREF_REQUIRED=1) without the environment
	h := newFakeHub(t)
	out := t.TempDir()
	for _, s := range datasets.Sets {
		write(t, h, s.Name, datasets.Options{Out: out})
	}
	abs, _ := filepath.Abs(fixtures)
	var res struct {
		Versions map[string]string
		Checks   map[string]struct {
			Rows int
			OK   bool
			Diff string
		}
	}
	pyref.RunJSON(t, "scripts/pyref/datasets_reference.py", map[string]string{"fixtures": abs, "out": out}, &res)
	t.Logf("reference: %v", res.Versions)
	if len(res.Checks) != 12 {
		t.Errorf("%d checks, want 12 (every converted file)", len(res.Checks))
	}
	for name, c := range res.Checks {
		if !c.OK {
			t.Errorf("%s: %s", name, c.Diff)
		} else {
			t.Logf("%s: %d rows as the reference makes them", name, c.Rows)
		}
	}
}
