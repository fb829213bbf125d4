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
