package ckpt

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// save commits a checkpoint of step holding files (name → content).
func save(t *testing.T, root string, step int, files map[string]string) *Checkpoint {
	t.Helper()
	w, err := Begin(root, step)
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, w, files)
	cp, err := w.Commit()
	if err != nil {
		t.Fatal(err)
	}
	return cp
}

func writeFiles(t *testing.T, w *Writer, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := w.Path(name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func steps(t *testing.T, root string) []int {
	t.Helper()
	all, err := List(root)
	if err != nil {
		t.Fatal(err)
	}
	out := []int{}
	for _, e := range all {
		out = append(out, e.Step)
	}
	return out
}

func rootEntries(t *testing.T, root string) []string {
	t.Helper()
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestCommitWritesVerifiedManifest(t *testing.T) {
	root := filepath.Join(t.TempDir(), "checkpoints")
	cp := save(t, root, 7, map[string]string{
		"train_state.json":                `{"step":7}`,
		"models/solver/model.safetensors": "weights",
		"hello.txt":                       "hello\n",
		"empty.bin":                       "",
	})
	if cp.Dir != filepath.Join(root, "step-000007") || cp.Step != 7 {
		t.Fatalf("committed %s step %d", cp.Dir, cp.Step)
	}
	raw, err := os.ReadFile(filepath.Join(cp.Dir, ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	var m Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	if m.FormatVersion != FormatVersion || m.Step != 7 || m.Created.IsZero() {
		t.Errorf("manifest header %+v", m)
	}
	var names []string
	for _, f := range m.Files {
		names = append(names, f.Name)
	}
	want := []string{"empty.bin", "hello.txt", "models/solver/model.safetensors", "train_state.json"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("manifest files %v, want %v", names, want)
	}
	// Digests from coreutils' sha256sum of the same bytes.
	known := map[string]FileEntry{
		"hello.txt": {Name: "hello.txt", Size: 6, SHA256: "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"},
		"empty.bin": {Name: "empty.bin", Size: 0, SHA256: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
	}
	for _, f := range m.Files {
		if k, ok := known[f.Name]; ok && f != k {
			t.Errorf("manifest entry %+v, want %+v", f, k)
		}
	}
	if got := rootEntries(t, root); !reflect.DeepEqual(got, []string{"step-000007"}) {
		t.Errorf("root holds %v, want only step-000007", got)
	}
	opened, err := Open(cp.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if !opened.Has("models/solver/model.safetensors") || opened.Has("nope") {
		t.Error("Has does not reflect the manifest")
	}
}

// A save in progress is its writer's: another writer's Begin (a second
// process writing the same checkpoints/ through another name of the
// directory) leaves it alone, and it still commits whole. Its name carries
// the writer's pid.
func TestLiveSaveSurvivesAnotherBegin(t *testing.T) {
	root := t.TempDir()
	live, err := Begin(root, 2)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(filepath.Base(live.Dir()), ".tmp-step-000002-"+strconv.Itoa(os.Getpid())+".") {
		t.Errorf("the temporary %s is not named after its writer (pid %d)", live.Dir(), os.Getpid())
	}
	writeFiles(t, live, map[string]string{"a": "two"})
	other, err := Begin(root, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(other.Cleaned()) != 0 {
		t.Errorf("another writer's Begin cleaned up a live save: %v", other.Cleaned())
	}
	other.Abort()
	cp, err := live.Commit()
	if err != nil {
		t.Fatalf("the live save, after another writer's Begin: %v", err)
	}
	if _, err := Open(cp.Dir); err != nil {
		t.Fatal(err)
	}
}

// A save that never commits is invisible: Latest returns the previous
// checkpoint, and the next save removes the leftover and says so.
func TestCrashBeforeCommit(t *testing.T) {
	root := t.TempDir()
	save(t, root, 1, map[string]string{"a": "one"})

	crashed, err := Begin(root, 2)
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, crashed, map[string]string{"a": "two, half written"})
	// The process dies here: no Commit, no Abort; the kernel drops its
	// hold on the temporary.
	crashed.hold.Release()

	latest, err := Latest(root)
	if err != nil {
		t.Fatal(err)
	}
	if latest.Step != 1 {
		t.Errorf("Latest = step %d, want 1", latest.Step)
	}
	if got := steps(t, root); !reflect.DeepEqual(got, []int{1}) {
		t.Errorf("List = %v, want [1]", got)
	}

	next, err := Begin(root, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(next.Cleaned()) != 1 || !strings.Contains(next.Cleaned()[0], filepath.Base(crashed.Dir())) {
		t.Errorf("Cleaned = %v, want one line naming %s", next.Cleaned(), filepath.Base(crashed.Dir()))
	}
	if _, err := os.Stat(crashed.Dir()); !os.IsNotExist(err) {
		t.Errorf("stale %s still exists (%v)", crashed.Dir(), err)
	}
	writeFiles(t, next, map[string]string{"a": "two"})
	if _, err := next.Commit(); err != nil {
		t.Fatal(err)
	}
	if latest, _ := Latest(root); latest == nil || latest.Step != 2 {
		t.Errorf("Latest after the retried save = %+v, want step 2", latest)
	}
}

func TestCorruptionIsRefused(t *testing.T) {
	cases := []struct {
		name   string
		damage func(dir string) error
		want   []string
	}{
		{"flipped byte", func(dir string) error {
			p := filepath.Join(dir, "weights.bin")
			b, _ := os.ReadFile(p)
			b[3] ^= 0x01
			return os.WriteFile(p, b, 0o644)
		}, []string{"weights.bin", "sha256", "the manifest says"}},
		{"truncated file", func(dir string) error {
			return os.Truncate(filepath.Join(dir, "weights.bin"), 5)
		}, []string{"weights.bin", "is 5 bytes", "says 8"}},
		{"missing file", func(dir string) error {
			return os.Remove(filepath.Join(dir, "state/rng.json"))
		}, []string{"state/rng.json", "missing"}},
		{"missing manifest", func(dir string) error {
			return os.Remove(filepath.Join(dir, ManifestName))
		}, []string{ManifestName, "not a training checkpoint"}},
		{"unknown format version", func(dir string) error {
			p := filepath.Join(dir, ManifestName)
			b, _ := os.ReadFile(p)
			return os.WriteFile(p, []byte(strings.Replace(string(b), `"format_version": 1`, `"format_version": 9`, 1)), 0o644)
		}, []string{"format_version 9"}},
		{"manifest path escaping the directory", func(dir string) error {
			p := filepath.Join(dir, ManifestName)
			b, _ := os.ReadFile(p)
			return os.WriteFile(p, []byte(strings.Replace(string(b), `"weights.bin"`, `"../weights.bin"`, 1)), 0o644)
		}, []string{"../weights.bin", "relative path inside"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			save(t, root, 1, map[string]string{"weights.bin": "abcdefgh"})
			cp := save(t, root, 2, map[string]string{"weights.bin": "ABCDEFGH", "state/rng.json": "{}"})
			if err := c.damage(cp.Dir); err != nil {
				t.Fatal(err)
			}
			for what, err := range map[string]error{"Open": second(Open(cp.Dir)), "Latest": second(Latest(root))} {
				if err == nil {
					t.Fatalf("%s accepted the damaged checkpoint", what)
				}
				for _, w := range append([]string{cp.Dir}, c.want...) {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("%s error %q does not contain %q", what, err, w)
					}
				}
			}
			if _, err := Open(filepath.Join(root, DirName(1))); err != nil {
				t.Errorf("the undamaged step 1 is refused too: %v", err)
			}
		})
	}
}

func second(_ *Checkpoint, err error) error { return err }

func TestOpenRefusesRenamedDirectory(t *testing.T) {
	root := t.TempDir()
	cp := save(t, root, 3, map[string]string{"a": "x"})
	renamed := filepath.Join(root, DirName(4))
	if err := os.Rename(cp.Dir, renamed); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(renamed); err == nil || !strings.Contains(err.Error(), "step 4") || !strings.Contains(err.Error(), "says 3") {
		t.Errorf("error = %v, want one naming both steps", err)
	}
}

func TestRetention(t *testing.T) {
	root := t.TempDir()
	for step := 10; step <= 50; step += 10 {
		cp := save(t, root, step, map[string]string{"s": "x"})
		if _, err := Prune(root, 2, cp.Dir); err != nil {
			t.Fatal(err)
		}
	}
	if got := steps(t, root); !reflect.DeepEqual(got, []int{40, 50}) {
		t.Fatalf("after keep=2: %v, want [40 50]", got)
	}
	// A resumed run re-saving an earlier step keeps it even though older
	// than the newest two.
	cp := save(t, root, 20, map[string]string{"s": "y"})
	removed, err := Prune(root, 2, cp.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 0 {
		t.Errorf("removed %v, want nothing", removed)
	}
	if got := steps(t, root); !reflect.DeepEqual(got, []int{20, 40, 50}) {
		t.Errorf("after saving step 20: %v, want [20 40 50]", got)
	}
	removed, err = Prune(root, 1, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(root, DirName(20)), filepath.Join(root, DirName(40))}
	if !reflect.DeepEqual(removed, want) {
		t.Errorf("removed %v, want %v", removed, want)
	}
	if got := rootEntries(t, root); !reflect.DeepEqual(got, []string{DirName(50)}) {
		t.Errorf("root holds %v, want only %s (no .tmp-prune leftovers)", got, DirName(50))
	}
	for _, keep := range []int{0, -1} {
		if removed, _ := Prune(root, keep, ""); len(removed) != 0 {
			t.Errorf("keep=%d removed %v", keep, removed)
		}
	}
}

func TestRecommitSameStepReplacesAtomically(t *testing.T) {
	root := t.TempDir()
	save(t, root, 5, map[string]string{"w": "old", "only-old": "1"})
	cp := save(t, root, 5, map[string]string{"w": "new"})
	got, err := os.ReadFile(cp.Path("w"))
	if err != nil || string(got) != "new" {
		t.Errorf("w = %q, %v; want new", got, err)
	}
	if _, err := os.Stat(cp.Path("only-old")); !os.IsNotExist(err) {
		t.Error("a file of the replaced checkpoint survived")
	}
	if entries := rootEntries(t, root); !reflect.DeepEqual(entries, []string{DirName(5)}) {
		t.Errorf("root holds %v, want only %s", entries, DirName(5))
	}
	if _, err := Open(cp.Dir); err != nil {
		t.Error(err)
	}
}

// A crash between the two renames of a re-commit leaves the old checkpoint
// under .old-*; the next Begin puts it back.
func TestInterruptedRecommitIsRestored(t *testing.T) {
	root := t.TempDir()
	cp := save(t, root, 5, map[string]string{"w": "old"})
	aside := filepath.Join(root, oldPrefix+DirName(5)+"-123456")
	if err := os.Rename(cp.Dir, aside); err != nil {
		t.Fatal(err)
	}
	w, err := Begin(root, 6)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	if len(w.Cleaned()) != 1 || !strings.Contains(w.Cleaned()[0], "restored") {
		t.Errorf("Cleaned = %v, want one restore", w.Cleaned())
	}
	if restored, err := Open(cp.Dir); err != nil || restored.Step != 5 {
		t.Errorf("step 5 after restore: %v", err)
	}

	// With the final name present, an .old-* copy is simply removed.
	save(t, root, 7, map[string]string{"w": "x"})
	stale := filepath.Join(root, oldPrefix+DirName(7)+"-99")
	os.Mkdir(stale, 0o755)
	w2, err := Begin(root, 8)
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Abort()
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("%s survived", stale)
	}
}

func TestAbortAndMisuse(t *testing.T) {
	root := t.TempDir()
	w, err := Begin(root, 1)
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, w, map[string]string{"a": "x"})
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(w.Dir()); !os.IsNotExist(err) {
		t.Error("Abort left the temporary directory")
	}
	if _, err := w.Commit(); err == nil {
		t.Error("Commit after Abort succeeded")
	}
	if _, err := Latest(root); !errors.Is(err, ErrNoCheckpoint) {
		t.Errorf("Latest on an empty root: %v, want ErrNoCheckpoint", err)
	}
	if got, err := List(filepath.Join(root, "absent")); err != nil || len(got) != 0 {
		t.Errorf("List of a missing root = %v, %v", got, err)
	}
	if _, err := Begin(root, -1); err == nil {
		t.Error("Begin(-1) succeeded")
	}

	w, _ = Begin(root, 2)
	writeFiles(t, w, map[string]string{ManifestName: "mine"})
	if _, err := w.Commit(); err == nil || !strings.Contains(err.Error(), ManifestName) {
		t.Errorf("Commit with a caller-written manifest: %v", err)
	}
	if _, err := os.Stat(w.Dir()); !os.IsNotExist(err) {
		t.Error("a failed Commit left the temporary directory")
	}

	w, _ = Begin(root, 3)
	if err := os.Symlink("/etc/hostname", w.Path("link")); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(); err == nil || !strings.Contains(err.Error(), "link") {
		t.Errorf("Commit with a symlink: %v", err)
	}
	if got := steps(t, root); len(got) != 0 {
		t.Errorf("failed commits left checkpoints %v", got)
	}
}

func TestListSortsByStepNumber(t *testing.T) {
	root := t.TempDir()
	for _, step := range []int{100, 9, 1_000_000, 20} {
		save(t, root, step, map[string]string{"a": "x"})
	}
	os.Mkdir(filepath.Join(root, "step-abc"), 0o755)
	os.WriteFile(filepath.Join(root, "step-000001"), nil, 0o644) // a file, not a dir
	if got := steps(t, root); !reflect.DeepEqual(got, []int{9, 20, 100, 1_000_000}) {
		t.Errorf("List = %v", got)
	}
	if DirName(1_000_000) != "step-1000000" || DirName(42) != "step-000042" {
		t.Errorf("DirName: %s, %s", DirName(1_000_000), DirName(42))
	}
}

func BenchmarkCommitOpen64MiB(b *testing.B) {
	root := b.TempDir()
	data := make([]byte, 64<<20)
	for i := range data {
		data[i] = byte(i * 7)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		w, err := Begin(root, 1)
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(w.Path("weights.bin"), data, 0o644); err != nil {
			b.Fatal(err)
		}
		cp, err := w.Commit()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Open(cp.Dir); err != nil {
			b.Fatal(err)
		}
	}
}

// Abandon deletes the checkpoints after a step, keeps the others, and
// leaves nothing that List reports or a save trips over.
func TestAbandonDropsTheLaterSteps(t *testing.T) {
	root := t.TempDir()
	for _, step := range []int{1, 2, 3, 4} {
		w, err := Begin(root, step)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(w.Path("x"), []byte{byte(step)}, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	removed, err := Abandon(root, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 2 || filepath.Base(removed[0]) != DirName(3) || filepath.Base(removed[1]) != DirName(4) {
		t.Errorf("removed %v, want steps 3 and 4", removed)
	}
	entries, _ := List(root)
	if len(entries) != 2 || entries[1].Step != 2 {
		t.Errorf("left %v, want steps 1 and 2", entries)
	}
	all, _ := os.ReadDir(root)
	if len(all) != 2 {
		t.Errorf("the root holds %d entries, want the two checkpoints", len(all))
	}
	if removed, err := Abandon(root, 2); err != nil || len(removed) != 0 {
		t.Errorf("a second Abandon: %v %v, want nothing", removed, err)
	}
}

// A checkpoint holding a file its manifest does not list is refused by
// name (the loaders would read it unverified); dot files are let be.
func TestOpenRefusesUnlistedFiles(t *testing.T) {
	root := t.TempDir()
	w, err := Begin(root, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(w.Path("models/a"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(w.Path("models/a/tokenizer.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	cp, err := w.Commit()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cp.Path(".DS_Store"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(cp.Dir); err != nil {
		t.Fatalf("a dot file beside the manifest's files: %v", err)
	}
	if err := os.WriteFile(cp.Path("models/a/chat_template.jinja"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(cp.Dir); err == nil || !strings.Contains(err.Error(), "holds models/a/chat_template.jinja, which its manifest does not list") {
		t.Fatalf("an unlisted file: %v", err)
	}
}
