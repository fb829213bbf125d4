package main

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"troupe/ckpt"
	"troupe/dist"
	runpkg "troupe/run"
)

// outputs runs a command line and returns its exit status, stdout and stderr.
func outputs(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := execute(args, &out, &errb)
	return code, out.String(), errb.String()
}

// Where a torchrun job starts again (2 ranks, its variables set as torchrun
// sets them): rank 0 chooses the checkpoint and rank 1 follows it although
// its view of the directory lags (a node's NFS cache, by a hook hiding the
// newest checkpoint from it for 8 s); a newest checkpoint that does not
// verify is passed over for the one before it, saying so, and saved again;
// on a new start of the job (restart count 0) an explicit --resume wins
// over the job's newest checkpoint.
func TestRestartChoosesTheCheckpoint(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end training runs; skipped with -short")
	}
	dir := t.TempDir()
	cfgPath, sft := warmModel(t, dir)
	run := filepath.Join(dir, "run")
	args := append(dpArgs(cfgPath, sft), "--nproc", "2", "--set", "run.output_dir="+run)
	t.Setenv("TROUPE_THREADS", "1")
	t.Setenv(dist.LauncherRunEnv, "job-a")
	step := func(n int) string { return filepath.Join(run, "checkpoints", ckpt.DirName(n)) }

	// the job's first start: rank 1 dies in step 3, after steps 1 and 2 were saved
	t.Setenv(dist.RankExitEnv, "3:1")
	failCode(t, args...)
	os.Unsetenv(dist.RankExitEnv)

	// restart 1: rank 1 does not see step 2 for 8 s
	t.Setenv("TORCHELASTIC_RESTART_COUNT", "1")
	t.Setenv(runpkg.HideNewestEnv, "8")
	code, out, errs := outputs(args...)
	if code != 0 || !strings.Contains(out, "torchrun started the group again (job job-a): resuming from its newest checkpoint, "+step(2)) {
		t.Fatalf("restart 1 did not resume from step 2 on both ranks (exit %d):\n%s\n%s", code, tail(out, 1500), errs)
	}
	os.Unsetenv(runpkg.HideNewestEnv)

	// restart 2, after step 3's checkpoint went bad
	weights := filepath.Join(step(3), "models", "solver", "model.safetensors")
	b := readFile(t, weights)
	b[len(b)-1] ^= 0xff
	if err := os.WriteFile(weights, b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TORCHELASTIC_RESTART_COUNT", "2")
	code, out, errs = outputs(args...)
	want := "its newest checkpoint does not verify, so it resumes from the newest that does, " + step(2) + "; passed over (and replaced as the run saves again): " + ckpt.DirName(3)
	if code != 0 || !strings.Contains(out, want) || !strings.Contains(out, "sha256") {
		t.Fatalf("restart 2 did not pass over the bad step 3 (want %q; exit %d):\n%s\n%s", want, code, tail(out, 1500), errs)
	}
	if _, err := ckpt.Open(step(3)); err != nil {
		t.Fatalf("step 3 was not saved again: %v", err)
	}
	if got := metricSteps(t, run); !reflect.DeepEqual(got, []int{1, 2, 3}) {
		t.Fatalf("metrics.jsonl has the steps %v, want [1 2 3]", got)
	}

	// a new start of the job with --resume of step 1: it starts there (and stops in step 2)
	t.Setenv("TORCHELASTIC_RESTART_COUNT", "0")
	t.Setenv(dist.RankExitEnv, "2:1")
	code, out, errs = outputs("--resume="+step(1), "-q", "--force", "--nproc", "2")
	if code == 0 || !strings.Contains(out, "resumed from "+step(1)+" at step 1") || !strings.Contains(out, "as --resume says, although this torchrun job (TORCHELASTIC_RUN_ID=job-a) has a newer checkpoint, step 3") {
		t.Fatalf("an explicit --resume on the job's new start was not followed (exit %d):\n%s\n%s", code, tail(out, 1500), errs)
	}
}
