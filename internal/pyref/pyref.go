// Package pyref lets tests run the Python reference environment: the pinned
// torch, transformers, peft, tensorboard, trl and verl that
// scripts/pyref/setup.sh installs (docs/references.md lists what each test
// compares). Tests call Python or Run; where the environment is absent they
// skip with one line saying so, unless TROUPE_PYREF_REQUIRED=1 (what
// `make test` sets once the environment installed), where they fail, so a
// machine that could run the checks never silently skips them.
//
// The interpreter is, in order: TROUPE_PYREF_PYTHON (any python with those
// packages, e.g. a GPU machine's python3), then scripts/pyref/python (the
// installed environment; it exits 2 when there is none).
//
// What it is not: an installer (that is scripts/pyref/setup.sh, which needs
// the network; tests never download), nor a place for comparisons (each test
// compares in its own package).
package pyref

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

const (
	// PythonEnv names an interpreter to use instead of scripts/pyref/python.
	PythonEnv = "TROUPE_PYREF_PYTHON"
	// RequiredEnv set to 1 turns a missing environment into a test failure.
	RequiredEnv = "TROUPE_PYREF_REQUIRED"
)

var (
	findOnce sync.Once
	found    string // the interpreter, when usable
	missing  string // why not, when not
)

// Root is the repository root: the nearest directory above the working
// directory (a test's package directory) that holds go.mod.
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("pyref: no go.mod above the working directory")
		}
		dir = parent
	}
}

// find locates the interpreter once per test binary.
func find() {
	if p := os.Getenv(PythonEnv); p != "" {
		found = p
		return
	}
	root, err := Root()
	if err != nil {
		missing = err.Error()
		return
	}
	py := filepath.Join(root, "scripts", "pyref", "python")
	out, err := exec.Command(py, "-c", "pass").CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		found = py
	case errors.As(err, &exit) && exit.ExitCode() == 2:
		missing = string(trimNewline(out))
	default:
		missing = fmt.Sprintf("%s: %v: %s", py, err, trimNewline(out))
	}
}

// Find returns the reference interpreter, or an error that says why there
// is none; for a test that runs a reference check as one part of a larger
// test (Python skips the whole test).
func Find() (string, error) {
	findOnce.Do(find)
	if found != "" {
		return found, nil
	}
	return "", errors.New(missing)
}

// Required reports whether a missing environment must fail tests
// (TROUPE_PYREF_REQUIRED=1).
func Required() bool { return os.Getenv(RequiredEnv) == "1" }

// Python returns the reference interpreter, or skips the test (fails it
// under TROUPE_PYREF_REQUIRED=1) when there is none.
func Python(t testing.TB) string {
	t.Helper()
	findOnce.Do(find)
	if found != "" {
		return found
	}
	if Required() {
		t.Fatalf("%s=1 but the Python reference environment is unusable: %s", RequiredEnv, missing)
	}
	t.Skipf("skipped, no Python reference environment: %s", missing)
	return ""
}

// Script is the absolute path of a file given relative to the repository
// root, e.g. "scripts/gpu/hf_reference.py".
func Script(t testing.TB, rel string) string {
	t.Helper()
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(root, filepath.FromSlash(rel))
	if _, err := os.Stat(p); err != nil {
		t.Fatal(err)
	}
	return p
}

// Run runs the reference interpreter on a script (relative to the
// repository root) with args and returns its combined output; a non-zero
// exit fails the test with that output.
func Run(t testing.TB, script string, args ...string) []byte {
	t.Helper()
	py := Python(t)
	cmd := exec.Command(py, append([]string{Script(t, script)}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s %v: %v\n%s", py, script, args, err, out)
	}
	return out
}

// RunJSON writes in as JSON to a temp file, runs the reference interpreter on
// script with that file's path, and decodes the script's standard output
// (one JSON value) into out; what it writes to standard error (library
// warnings) is only shown on failure.
func RunJSON(t testing.TB, script string, in, out any) {
	t.Helper()
	data, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "in.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	py := Python(t)
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(py, Script(t, script), path)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s%s", py, script, err, stdout.Bytes(), stderr.Bytes())
	}
	if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
		t.Fatalf("%s %s: its output is not the JSON expected: %v\n%s%s", py, script, err, stdout.Bytes(), stderr.Bytes())
	}
}

func trimNewline(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}
