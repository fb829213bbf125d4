package main

import (
	"os"
	"testing"

	"troupe/internal/pyref"
)

// tensorboardPython is the interpreter that runs check_tensorboard.py inside
// the end-to-end test: TROUPE_TENSORBOARD_PYTHON, else the Python reference
// environment (internal/pyref). Without either that one check is skipped,
// saying so, and the rest of the test runs; under TROUPE_PYREF_REQUIRED=1
// (make test) a missing environment fails the test.
func tensorboardPython(t *testing.T) string {
	t.Helper()
	if py := os.Getenv("TROUPE_TENSORBOARD_PYTHON"); py != "" {
		return py
	}
	py, err := pyref.Find()
	if err != nil {
		if pyref.Required() {
			t.Fatalf("%s=1 but the Python reference environment is unusable: %v", pyref.RequiredEnv, err)
		}
		t.Logf("TensorBoard's reader not run (no Python reference environment): %v", err)
	}
	return py
}
