package main

// One writer per run directory: while a process holds a run directory, a
// second run into it — fresh, resumed, or started as several data-parallel
// ranks — is refused on every rank with a line naming the holder, and
// nothing is written.

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"troupe/ckpt"
	"troupe/internal/dirlock"
)

func TestRunDirectoryHasOneWriter(t *testing.T) {
	d := t.TempDir()
	base := filepath.Join(d, "tiny")
	cli(t, "init", base, "--merges", "0")
	cfg := filepath.Join(d, "run.yaml")
	writeTestFile(t, cfg, []byte(strings.ReplaceAll(strings.ReplaceAll(e2eConfig, "OUT", filepath.Join(d, "out")), "MODEL", base)))
	held := filepath.Join(d, "held")
	if err := os.MkdirAll(held, 0o755); err != nil {
		t.Fatal(err)
	}
	lock, err := dirlock.Acquire(held)
	if err != nil {
		t.Fatal(err)
	}
	want := "run.output_dir " + held + " is being written by another run (pid " + strconv.Itoa(os.Getpid())
	// a fresh run
	if msg := failCode(t, "-c", cfg, "-q", "--set", "run.output_dir="+held); !strings.Contains(msg, want) {
		t.Errorf("a fresh run into a held directory: %q, want %q", msg, want)
	}
	// two ranks started by hand, as torchrun on two nodes would: each must
	// say why, not only the rank that holds the directory
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	var wg sync.WaitGroup
	stderr := make([]bytes.Buffer, 2)
	for r := range 2 {
		cmd := exec.Command(os.Args[0], "-c", cfg, "-q", "--set", "batch.prompts_per_step=4", "--set", "run.output_dir="+held)
		cmd.Env = append(os.Environ(), asTrainEnv+"=1", "WORLD_SIZE=2", "RANK="+strconv.Itoa(r), "MASTER_ADDR=127.0.0.1",
			"MASTER_PORT="+strconv.Itoa(port), "TROUPE_DIST_TIMEOUT=60s", "TROUPE_THREADS=1")
		cmd.Stderr = &stderr[r]
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := cmd.Run(); err == nil {
				t.Errorf("rank %d: exit 0 into a held directory", r)
			}
		}()
	}
	wg.Wait()
	for r := range 2 {
		if !strings.Contains(stderr[r].String(), want) {
			t.Errorf("rank %d: want the holder's line, got %q", r, stderr[r].String())
		}
	}
	entries, _ := os.ReadDir(held)
	if len(entries) != 1 || entries[0].Name() != dirlock.Name {
		t.Errorf("the refused run wrote into the held directory: %v", entries)
	}
	lock.Release()
	cli(t, "-c", cfg, "-q", "--set", "run.output_dir="+held, "--set", "run.steps=1", "--set", "checkpoint.every=1", "--set", "export.at_end=false")
	if _, err := os.Stat(filepath.Join(held, "checkpoints", "step-000001")); err != nil {
		t.Errorf("after the holder let go, the run did not write: %v", err)
	}
}

// A run directory renamed, deleted, or renamed and replaced by another
// directory mid-run stops the run with one line (exit 1): nothing is
// written under the old name (no recreated checkpoints/, nothing in the
// directory now there), and what the run wrote stays where the directory
// went. Before, the run kept writing by path and could exit 0.
func TestRunDirectoryMovedMidRun(t *testing.T) {
	d := t.TempDir()
	base := filepath.Join(d, "tiny")
	cli(t, "init", base, "--merges", "0")
	cfg := filepath.Join(d, "run.yaml")
	writeTestFile(t, cfg, []byte(strings.ReplaceAll(strings.ReplaceAll(e2eConfig, "OUT", filepath.Join(d, "out")), "MODEL", base)))
	for _, what := range []string{"renamed", "deleted", "replaced"} {
		t.Run(what, func(t *testing.T) {
			out := filepath.Join(d, what)
			moved := out + "-moved"
			stop := make(chan struct{})
			done := make(chan error, 1)
			go func() { // once a step is checkpointed (the next one is logged), move the directory away
				for {
					select {
					case <-stop:
						done <- nil
						return
					case <-time.After(20 * time.Millisecond):
					}
					if data, err := os.ReadFile(filepath.Join(out, "metrics.jsonl")); err == nil && bytes.Count(data, []byte("\n")) >= 2 {
						var err error
						switch what {
						case "deleted": // out of sight at once, then deleted (rm -r alone is not atomic: a save it races fails on its own)
							if err = os.Rename(out, moved); err == nil {
								err = os.RemoveAll(moved)
							}
						default:
							if err = os.Rename(out, moved); err == nil && what == "replaced" {
								err = os.Mkdir(out, 0o755) // another run's directory at the old name
							}
						}
						done <- err
						return
					}
				}
			}()
			var o, e bytes.Buffer
			code := execute([]string{"-c", cfg, "-q", "--set", "run.output_dir=" + out, "--set", "run.steps=500", "--set", "checkpoint.every=1",
				"--set", "max_new_tokens=8", "--set", "batch.prompts_per_step=1"}, &o, &e)
			close(stop)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			msg := e.String()
			if code != 1 || strings.Count(msg, "\n") != 1 || !strings.Contains(msg, "run.output_dir "+out+" was renamed or deleted during the run") {
				t.Fatalf("exit %d, stderr %q; want exit 1 and one line saying the directory was moved", code, msg)
			}
			switch what {
			case "deleted":
				if _, err := os.Lstat(out); err == nil {
					t.Errorf("the deleted directory was recreated")
				}
			case "replaced":
				if entries, _ := os.ReadDir(out); len(entries) != 0 {
					t.Errorf("the run wrote into the directory now at its old name: %v", entries)
				}
			}
			if what != "deleted" {
				if _, err := ckpt.Latest(filepath.Join(moved, "checkpoints")); err != nil {
					t.Errorf("the moved directory has no good checkpoint: %v", err)
				}
			}
		})
	}
}
