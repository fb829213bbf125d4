package main

// TestBadInputTable runs every row of testdata/bad-input.txt: each bad
// input must end with the row's exit code and one line on stderr that
// contains the row's text. New cases go into the table, not into code.

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	runpkg "troupe/run"

	"troupe/ckpt"
	"troupe/internal/dirlock"
	"troupe/safetensors"
)

// configOnly: args are a fresh run's config and nothing else (-c FILE, -q,
// --set KEY=VALUE), which train check takes as they are.
func configOnly(args []string) bool {
	if len(args) < 2 || args[0] != "-c" {
		return false
	}
	for i := 2; i < len(args); i++ {
		switch {
		case args[i] == "-q":
		case args[i] == "--set" && i+1 < len(args):
			i++
		default:
			return false
		}
	}
	return true
}

// runOnlyMark starts the text of a row that train check cannot see: the
// run refuses it once it reads the weights.
const runOnlyMark = "run only: "

type badInput struct {
	line int
	exit int
	want string
	args []string
}

func readBadInputs(t *testing.T, path string) []badInput {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []badInput
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cols := strings.SplitN(line, "|", 3)
		if len(cols) != 3 {
			t.Fatalf("%s:%d: want exit | text | arguments", path, n)
		}
		code, err := strconv.Atoi(strings.TrimSpace(cols[0]))
		if err != nil {
			t.Fatalf("%s:%d: exit code: %v", path, n, err)
		}
		out = append(out, badInput{line: n, exit: code, want: strings.TrimSpace(cols[1]), args: strings.Fields(cols[2])})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func writeTestFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

func readFileString(t *testing.T, path string) string { return string(readFile(t, path)) }

// editTrainState sets the step recorded in a checkpoint's train state and
// rehashes its manifest, as a hand edit that "fixes" the hashes would.
func editTrainState(t *testing.T, dir string, step int) {
	t.Helper()
	editTrainStateWith(t, dir, func(st map[string]any) { st["step"] = step })
}

// editTrainStateWith changes a checkpoint's train state by edit and
// rehashes its manifest.
func editTrainStateWith(t *testing.T, dir string, edit func(map[string]any)) {
	t.Helper()
	var st map[string]any
	if err := json.Unmarshal(readFile(t, filepath.Join(dir, runpkg.StateFile)), &st); err != nil {
		t.Fatal(err)
	}
	edit(st)
	raw, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, filepath.Join(dir, runpkg.StateFile), raw)
	var m ckpt.Manifest
	if err := json.Unmarshal(readFile(t, filepath.Join(dir, ckpt.ManifestName)), &m); err != nil {
		t.Fatal(err)
	}
	for i, f := range m.Files {
		if f.Name == runpkg.StateFile {
			sum := sha256.Sum256(raw)
			m.Files[i].Size, m.Files[i].SHA256 = int64(len(raw)), hex.EncodeToString(sum[:])
		}
	}
	if raw, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, filepath.Join(dir, ckpt.ManifestName), raw)
}

// writeEditedModel copies the model directory src to dst with one tensor of
// model.safetensors replaced by what edit makes of it.
func writeEditedModel(t *testing.T, src, dst, name string, edit func(safetensors.DType, []byte) (safetensors.DType, []byte)) {
	t.Helper()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	f, err := safetensors.Open(filepath.Join(src, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []safetensors.Tensor
	for _, n := range f.Names() {
		info, _ := f.Info(n)
		data, err := f.Bytes(n)
		if err != nil {
			t.Fatal(err)
		}
		dt, data := info.DType, append([]byte(nil), data...)
		if n == name {
			dt, data = edit(dt, data)
		}
		out = append(out, safetensors.TensorFromBytes(n, dt, info.Shape, data))
	}
	if err := safetensors.Write(filepath.Join(dst, "model.safetensors"), out, map[string]string{"format": "pt"}); err != nil {
		t.Fatal(err)
	}
}

func TestBadInputTable(t *testing.T) {
	cases := readBadInputs(t, filepath.Join("testdata", "bad-input.txt"))
	d := t.TempDir()
	base := filepath.Join(d, "tiny")
	cli(t, "init", base, "--merges", "0")
	cli(t, "init", filepath.Join(d, "big"))
	cfg := filepath.Join(d, "run.yaml")
	writeTestFile(t, cfg, []byte(strings.ReplaceAll(strings.ReplaceAll(e2eConfig, "OUT", filepath.Join(d, "out")), "MODEL", base)))
	run := filepath.Join(d, "run")
	cli(t, "-c", cfg, "-q", "--set", "run.output_dir="+run, "--set", "run.steps=2", "--set", "checkpoint.every=1")

	writeTestFile(t, filepath.Join(d, "random.parquet"), randomBytes(3000))
	writeTestFile(t, filepath.Join(d, "bad.jsonl"), []byte("{not json\n"))
	writeTestFile(t, filepath.Join(d, "noanswer.jsonl"), []byte(`{"question": "What is 1 + 1?"}`+"\n"))
	writeTestFile(t, filepath.Join(d, "emptyanswer.jsonl"), []byte(`{"question": "What is 1 + 1?", "answer": "2"}`+"\n"+`{"question": "What is 2 + 2?", "answer": " "}`+"\n"))
	writeTestFile(t, filepath.Join(d, "bad.yaml"), []byte("run: {steps: [\n"))
	writeTestFile(t, filepath.Join(d, "twodocs.yaml"), append(readFile(t, cfg), "---\nrun: {steps: 9}\n"...))
	writeTestFile(t, filepath.Join(d, "failcode.jsonl"), []byte(`{"task_id": "wrong/1", "prompt": "def sub(a, b):\n", "canonical_solution": "    return a + b\n", "entry_point": "sub", "test": "def check(candidate):\n    assert candidate(3, 1) == 2\n"}`+"\n"))
	config := readFile(t, filepath.Join(base, "config.json"))
	weights := readFile(t, filepath.Join(base, "model.safetensors"))
	writeTestFile(t, filepath.Join(d, "badmodel", "config.json"), config)
	writeTestFile(t, filepath.Join(d, "badmodel", "model.safetensors"), randomBytes(4096))
	writeTestFile(t, filepath.Join(d, "truncmodel", "config.json"), config)
	writeTestFile(t, filepath.Join(d, "truncmodel", "model.safetensors"), weights[:len(weights)/2])
	writeTestFile(t, filepath.Join(d, "badtok", "tokenizer.json"), []byte("{"))
	writeTestFile(t, filepath.Join(d, "notckpt", "train_state.json"), []byte("{}"))
	step1 := filepath.Join(run, "checkpoints", "step-000001")
	for _, name := range []string{"badmanifest", "tamperedckpt"} {
		if err := os.CopyFS(filepath.Join(d, name), os.DirFS(step1)); err != nil {
			t.Fatal(err)
		}
	}
	writeTestFile(t, filepath.Join(d, "badmanifest", ckpt.ManifestName), []byte("{"))
	state := filepath.Join(d, "tamperedckpt", runpkg.StateFile)
	writeTestFile(t, state, append(readFile(t, state), ' '))

	// a single-agent config writing to the finished run (resumed as another workflow)
	single := strings.Replace(readFileString(t, cfg), "  - {name: verifier, model: tiny, preset: math-verifier, format_penalty: 0.1, optim: {lr: 5e-4}}\n", "", 1)
	single = regexp.MustCompile(`(?m)^workflow: .*$`).ReplaceAllString(single, "workflow: {name: single}")
	writeTestFile(t, filepath.Join(d, "single.yaml"), []byte(strings.Replace(single, filepath.Join(d, "out"), run, 1)))
	// copies of the run: one whose newest manifest is empty, one cut short,
	// and one whose train state was edited and its manifest rehashed
	for _, name := range []string{"emptyrun", "cutrun", "rehashed"} {
		if err := os.CopyFS(filepath.Join(d, name), os.DirFS(run)); err != nil {
			t.Fatal(err)
		}
	}
	manifest2 := filepath.Join("checkpoints", "step-000002", ckpt.ManifestName)
	writeTestFile(t, filepath.Join(d, "emptyrun", manifest2), nil)
	writeTestFile(t, filepath.Join(d, "cutrun", manifest2), readFile(t, filepath.Join(run, manifest2))[:100])
	editTrainState(t, filepath.Join(d, "rehashed", "checkpoints", "step-000002"), 5)
	// a copy whose step-2 train state counts other optimizer steps than its
	// optimizer file (rehashed), and one whose step-2 checkpoint holds a
	// file its manifest does not list
	for _, name := range []string{"mixedrun", "extrarun"} {
		if err := os.CopyFS(filepath.Join(d, name), os.DirFS(run)); err != nil {
			t.Fatal(err)
		}
	}
	editTrainStateWith(t, filepath.Join(d, "mixedrun", "checkpoints", "step-000002"), func(st map[string]any) {
		st["trainers"].(map[string]any)["solver"].(map[string]any)["optimizer_steps"] = 99
	})
	writeTestFile(t, filepath.Join(d, "extrarun", "checkpoints", "step-000002", "models", "solver", "chat_template.jinja"), []byte("{{ messages }}"))

	// weights a model cannot use: a NaN in the final norm, an embedding
	// stored as int32, copies of $BASE otherwise
	writeEditedModel(t, base, filepath.Join(d, "nanmodel"), "model.norm.weight", func(dt safetensors.DType, b []byte) (safetensors.DType, []byte) {
		binary.LittleEndian.PutUint32(b[4*3:], math.Float32bits(float32(math.NaN())))
		return dt, b
	})
	writeEditedModel(t, base, filepath.Join(d, "intmodel"), "model.embed_tokens.weight", func(_ safetensors.DType, b []byte) (safetensors.DType, []byte) {
		return safetensors.I32, b
	})
	writeTestFile(t, filepath.Join(d, "empty.jsonl"), nil)
	writeTestFile(t, filepath.Join(d, "array.jsonl"), []byte(`["What is 1 + 1?", "2"]`+"\n"))
	writeTestFile(t, filepath.Join(d, "bom.jsonl"), []byte("\ufeff"+`{"question": "What is 1 + 1?", "answer": "2"}`+"\n42\n"))
	writeTestFile(t, filepath.Join(d, "blank.jsonl"), []byte("\n  \n"))
	writeTestFile(t, filepath.Join(d, "notprofile.cpu.pprof"), []byte("not a profile\n"))
	if err := os.Symlink(run, filepath.Join(d, "runlink")); err != nil {
		t.Fatal(err)
	}

	// a run directory whose run.lock is a link to a file the run must not
	// write, and one holding an earlier run's logs but no checkpoint
	writeTestFile(t, filepath.Join(d, "victim"), []byte("precious\n"))
	if err := os.MkdirAll(filepath.Join(d, "linklock"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(d, "victim"), filepath.Join(d, "linklock", dirlock.Name)); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, filepath.Join(d, "logsonly", "metrics.jsonl"), readFile(t, filepath.Join(run, "metrics.jsonl")))

	// a copy of the run whose directory this process holds, as a second
	// writer would
	if err := os.CopyFS(filepath.Join(d, "heldrun"), os.DirFS(run)); err != nil {
		t.Fatal(err)
	}
	held, err := dirlock.Acquire(filepath.Join(d, "heldrun"))
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()

	// the finished run's records, to compare after the table
	records := func() map[string]string {
		out := map[string]string{}
		for _, name := range []string{"config.yaml", "config-changes.log", "metrics.jsonl", "samples.jsonl"} {
			b, err := os.ReadFile(filepath.Join(run, name))
			if err != nil {
				b = []byte("(absent)")
			}
			out[name] = string(b)
		}
		return out
	}
	before := records()

	// a model whose tokenizer has no chat template
	if err := os.CopyFS(filepath.Join(d, "notemplate"), os.DirFS(base)); err != nil {
		t.Fatal(err)
	}
	var tc map[string]any
	if err := json.Unmarshal(readFile(t, filepath.Join(base, "tokenizer_config.json")), &tc); err != nil {
		t.Fatal(err)
	}
	delete(tc, "chat_template")
	raw, err := json.Marshal(tc)
	if err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, filepath.Join(d, "notemplate", "tokenizer_config.json"), raw)

	port, heldPort := freeTCPPort(t), otherProgramsPort(t)
	expand := strings.NewReplacer("$D", d, "$BASE", base, "$CFG", cfg, "$RUN", run, "$HELDPORT", heldPort, "$PORT", port)
	checked := 0
	for _, c := range cases {
		args := make([]string, len(c.args))
		for i, a := range c.args {
			args[i] = expand.Replace(a)
		}
		env := 0 // leading VAR=VALUE words: the row's environment
		for env < len(args) && envWord.MatchString(args[env]) {
			env++
		}
		restore := setRowEnv(args[:env])
		args = args[env:]
		runOnly := strings.HasPrefix(c.want, runOnlyMark)
		c.want = strings.TrimPrefix(c.want, runOnlyMark)
		var out, errb bytes.Buffer
		code := execute(args, &out, &errb)
		restore()
		msg := errb.String()
		// what a fresh run refuses, train check refuses with the same line
		// (both go through config.Load and preflight.go) — unless only the
		// weights show it, or the launcher's variables (check reads none)
		if code == 1 && !runOnly && env == 0 && configOnly(args) {
			checked++
			var cout, cerr bytes.Buffer
			ccode := execute(append([]string{"check"}, slices.DeleteFunc(slices.Clone(args), func(a string) bool { return a == "-q" })...), &cout, &cerr)
			if ccode != 1 || cerr.String() != msg {
				t.Errorf("bad-input.txt:%d: train check %s: exit %d with %q; the run exits 1 with %q (check must refuse what the run refuses, with its line; mark the row %q if only the weights show it)",
					c.line, strings.Join(c.args, " "), ccode, strings.TrimSpace(cerr.String()), strings.TrimSpace(msg), runOnlyMark)
			}
		}
		switch {
		case code != c.exit:
			t.Errorf("bad-input.txt:%d: train %s: exit %d, want %d\nstderr: %s", c.line, strings.Join(c.args, " "), code, c.exit, msg)
		case c.exit != 0 && (strings.Count(msg, "\n") != 1 || !strings.HasPrefix(msg, "train: ")):
			t.Errorf("bad-input.txt:%d: train %s: want one line on stderr, got %q", c.line, strings.Join(c.args, " "), msg)
		case !strings.Contains(msg, expand.Replace(c.want)):
			t.Errorf("bad-input.txt:%d: train %s: the error should contain %q, got %q", c.line, strings.Join(c.args, " "), c.want, strings.TrimSpace(msg))
		}
		if testing.Verbose() {
			t.Logf("bad-input.txt:%d: %s", c.line, strings.TrimSpace(strings.ReplaceAll(msg, d, "$D")))
		}
	}
	if checked < 20 {
		t.Errorf("only %d rows were also run through train check", checked)
	}
	// Nothing above touched the finished run: its export and checkpoints
	// are as they were (a refused command loses nothing).
	if _, err := ckpt.Open(filepath.Join(run, "checkpoints", "step-000002")); err != nil {
		t.Errorf("the run's newest checkpoint no longer verifies: %v", err)
	}
	if _, err := os.Stat(filepath.Join(base, "model.safetensors")); err != nil {
		t.Errorf("the base model is gone: %v", err)
	}
	if b := readFileString(t, filepath.Join(d, "victim")); b != "precious\n" {
		t.Errorf("the file behind linklock/run.lock was written: %q", b)
	}
	// and no refused command recorded anything in it
	for name, was := range before {
		if now := records()[name]; now != was {
			t.Errorf("a refused command changed the run's %s:\nwas %.300q\nnow %.300q", name, was, now)
		}
	}
}

// envWord is a VAR=VALUE word that starts a row: the row's environment.
var envWord = regexp.MustCompile(`^[A-Z][A-Z0-9_]*=`)

// setRowEnv sets a row's VAR=VALUE words and returns what restores the
// environment.
func setRowEnv(words []string) (restore func()) {
	var undo []func()
	for _, w := range words {
		k, v, _ := strings.Cut(w, "=")
		if was, ok := os.LookupEnv(k); ok {
			undo = append(undo, func() { os.Setenv(k, was) })
		} else {
			undo = append(undo, func() { os.Unsetenv(k) })
		}
		os.Setenv(k, v)
	}
	return func() {
		for _, u := range undo {
			u()
		}
	}
}

// freeTCPPort is a port nothing listens on ($PORT).
func freeTCPPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// otherProgramsPort is a port another program holds for the test's life
// ($HELDPORT): it answers every connection with an SSH server's banner and
// keeps it open.
func otherProgramsPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("SSH-2.0-OpenSSH_9.2\r\n"))
			t.Cleanup(func() { c.Close() })
		}
	}()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}
