package main

// Sharded training (models.<name>.shard) through the real command line, on
// 2 and 4 Gloo ranks: every level against the unsharded data-parallel run
// with the same ranks, the per-rank memory against the number of ranks,
// resumes (same ranks: bit-identical; other ranks and one unsharded
// process: they work), the export of a sharded run in transformers, and a
// rank killed in the middle of a sharded save.

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"troupe/ckpt"
	"troupe/internal/metrics"
	runpkg "troupe/run"
)

// shardLevels are the levels the tests train at.
var shardLevels = []int{1, 2, 3}

func TestShardedTraining(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end training runs; skipped with -short")
	}
	dir := t.TempDir()
	cfgPath, sft := warmModel(t, dir)
	t.Setenv("TROUPE_THREADS", "1")       // every rank one thread: BLAS sums one way
	t.Setenv("TROUPE_DIST_TIMEOUT", "2m") // ranks whose collectives do not match fail, not hang
	// buckets of 0.05 MiB: the tiny model's 131k weights make about a dozen;
	// two mini-batches per step: two optimizer steps in an update, and the
	// no-grad log-prob pass before them
	common := []string{"-c", cfgPath, "-q", "--set", "models.tiny.path=" + sft, "--set", "batch.prompts_per_step=4",
		"--set", "checkpoint.every=1", "--set", "export.at_end=false", "--set", "run.steps=3",
		"--set", "optim.activation_checkpointing=true", "--set", "optim.updates_per_step=2", "--set", "models.tiny.shard_bucket_mib=0.05"}
	train := func(name string, world, level int, extra ...string) (string, string) {
		out := filepath.Join(dir, name)
		if name == "" {
			out = filepath.Join(dir, fmt.Sprintf("w%d-shard%d", world, level))
		}
		args := append(append(slices.Clip(common), "--nproc", fmt.Sprint(world), "--set", "run.output_dir="+out,
			"--set", fmt.Sprintf("models.tiny.shard=%d", level)), extra...)
		return out, cli(t, args...)
	}
	last := filepath.Join("checkpoints", ckpt.DirName(3), "models")
	held := map[[2]int]map[string]float64{} // (ranks, level) → the solver's memory figures after step 3
	for _, world := range []int{2, 4} {
		base, _ := train("", world, 0)
		held[[2]int{world, 0}] = memoryOf(t, base)
		for _, level := range shardLevels {
			got, out := train("", world, level)
			if want := fmt.Sprintf("shard %d:", level); !strings.Contains(out, want) {
				t.Fatalf("W=%d shard %d: the run did not report its sharding:\n%s", world, level, tail(out, 800))
			}
			held[[2]int{world, level}] = memoryOf(t, got)
			for _, m := range []string{"solver", "verifier"} {
				rel := relativeDifference(t, filepath.Join(base, last, m, "model.safetensors"), filepath.Join(got, last, m, "model.safetensors"))
				t.Logf("W=%d shard %d, %s: weights differ from unsharded by %.3g relative", world, level, m, rel)
				if rel > 1e-6 {
					t.Fatalf("W=%d shard %d: %s's weights after 3 steps differ from the unsharded run's by %g relative", world, level, m, rel)
				}
				if level != 1 {
					continue
				}
				// level 1: the same summed grads, the same clip, an
				// elementwise step on slices: the same bits, and the same
				// checkpoint file once gathered
				for _, f := range []string{"model.safetensors", "optimizer.safetensors"} {
					if !bytes.Equal(readFile(t, filepath.Join(base, last, m, f)), readFile(t, filepath.Join(got, last, m, f))) {
						t.Fatalf("W=%d shard 1: %s/%s differs from the unsharded run's", world, m, f)
					}
				}
			}
		}
	}

	// level 3 changes where the weights live, not the arithmetic: the same
	// bits as level 2
	for _, world := range []int{2, 4} {
		sameCheckpoints(t, filepath.Join(dir, fmt.Sprintf("w%d-shard2", world)), filepath.Join(dir, fmt.Sprintf("w%d-shard3", world)), 3,
			fmt.Sprintf("W=%d: shard 3 against shard 2", world))
	}

	// bfloat16 weights (the GPU case: float32 masters rounded into the
	// weights): the unsharded run and level 1 sum whole bf16 grads with the
	// all-reduce (on Gloo in float32, rounded once), levels 2 and 3 in their
	// own collectives; level 1 equals the unsharded run, level 3 equals
	// level 2, and a resumed level 3 equals the straight one, masters
	// included
	bf0, _ := train("bf16-shard0", 2, 0, "--set", "run.dtype=bfloat16")
	bf1, _ := train("bf16-shard1", 2, 1, "--set", "run.dtype=bfloat16")
	sameCheckpoints(t, bf0, bf1, 3, "bf16, W=2: shard 1 against unsharded")
	bf2, _ := train("bf16-shard2", 2, 2, "--set", "run.dtype=bfloat16")
	bf3, _ := train("bf16-shard3", 2, 3, "--set", "run.dtype=bfloat16")
	sameCheckpoints(t, bf2, bf3, 3, "bf16, W=2: shard 3 against shard 2")
	bfResumed := filepath.Join(dir, "bf16-resumed")
	copyRunTo(t, bf3, bfResumed, 2)
	cli(t, "--resume="+filepath.Join(bfResumed, "checkpoints", ckpt.DirName(2)), "-q", "--nproc", "2")
	sameCheckpoints(t, bf3, bfResumed, 3, "bf16, shard 3, W=2 resumed at step 2 against 3 straight steps")
	if _, ok := tensorsOf(t, filepath.Join(bf3, last, "solver", "optimizer.safetensors"))["model.norm.weight.master"]; !ok {
		t.Fatal("a bf16 sharded checkpoint has no float32 master of model.norm.weight")
	}

	// per rank, the sharded state goes as 1/W: masters and moments from
	// level 1 on (an unsharded float32 model keeps no master: its weights
	// are; sharded, each rank keeps a float32 master of its 1/W)
	weights := held[[2]int{2, 0}]["param_bytes"]
	var unitZero, layer float64 // bytes of the weights outside the layers, and of the largest layer
	perLayer := map[string]float64{}
	for name, x := range tensorsOf(t, filepath.Join(sft, "model.safetensors")) {
		if rest, ok := strings.CutPrefix(name, "model.layers."); ok {
			perLayer[rest[:strings.Index(rest, ".")]] += float64(4 * len(x))
		} else {
			unitZero += float64(4 * len(x))
		}
	}
	for _, b := range perLayer {
		layer = max(layer, b)
	}
	for _, level := range shardLevels {
		for _, world := range []int{2, 4} {
			h := held[[2]int{world, level}]
			// padding: each bucket rounds its elements up to a multiple of W
			near := func(x, want float64) bool { return math.Abs(x-want) <= 0.002*want }
			if !near(h["master_bytes"]*float64(world), weights) {
				t.Fatalf("W=%d shard %d: masters hold %v bytes per rank, want 1/%d of %v", world, level, h["master_bytes"], world, weights)
			}
			if unsharded := held[[2]int{world, 0}]["moment_bytes"]; !near(h["moment_bytes"]*float64(world), unsharded) {
				t.Fatalf("W=%d shard %d: moments hold %v bytes per rank, want 1/%d of the unsharded %v", world, level, h["moment_bytes"], world, unsharded)
			}
			// levels 2 and 3: the grads kept across micro-batches are
			// float32 sums of 1/W (the whole grads of a layer and of the
			// embedding and head exist only until they are reduced)
			if sums := h["grad_sum_bytes"]; (level >= 2) != (sums > 0) || level >= 2 && !near(sums*float64(world), weights) {
				t.Fatalf("W=%d shard %d: the grad sums hold %v bytes per rank, want 1/%d of %v from level 2 on", world, level, sums, world, weights)
			}
			// level 3: the update holds the embedding, final norm and head
			// and one layer at a time, whatever W
			want := weights
			if level == 3 {
				want = unitZero + layer
			}
			if p := h["param_bytes"]; p != want {
				t.Fatalf("W=%d shard %d: the update held %v bytes of weights, want %v (the whole model: %v)", world, level, p, want, weights)
			}
		}
	}

	// resume with the same ranks: bit-identical to the straight run
	for _, level := range shardLevels {
		straight := filepath.Join(dir, fmt.Sprintf("w2-shard%d", level))
		resumed := filepath.Join(dir, fmt.Sprintf("resumed%d", level))
		copyRunTo(t, straight, resumed, 2)
		cli(t, "--resume="+filepath.Join(resumed, "checkpoints", ckpt.DirName(2)), "-q", "--nproc", "2")
		sameCheckpoints(t, straight, resumed, 3, fmt.Sprintf("shard %d, W=2 resumed at step 2 against 3 straight steps", level))
	}
	w2 := filepath.Join(dir, "w2-shard1")

	// resume with other ranks: it goes on, with the note
	four := filepath.Join(dir, "four")
	copyRunTo(t, w2, four, 2)
	out := cli(t, "--resume="+filepath.Join(four, "checkpoints", ckpt.DirName(2)), "--nproc", "4")
	if !strings.Contains(out, "written by 2 data-parallel ranks, this run has 4") {
		t.Fatalf("a W=2 checkpoint resumed on 4 ranks did not say so:\n%s", tail(out, 800))
	}

	// one unsharded process resumes a sharded checkpoint and exports it;
	// transformers loads the export
	one := filepath.Join(dir, "one")
	copyRunTo(t, filepath.Join(dir, fmt.Sprintf("w2-shard%d", shardLevels[len(shardLevels)-1])), one, 2)
	out = cli(t, "--resume="+filepath.Join(one, "checkpoints", ckpt.DirName(2)), "--set", "export.at_end=true")
	if !strings.Contains(out, "trains unsharded") {
		t.Fatalf("one process with models.tiny.shard set did not say it trains unsharded:\n%s", tail(out, 800))
	}
	checkExportInTransformers(t, filepath.Join(one, "export", "solver"), filepath.Join(one, "checkpoints", ckpt.DirName(3), "models", "solver"), "")

	// rank 0 killed (SIGKILL) while writing the sharded checkpoint of step
	// 2: the run fails, step 1's checkpoint is the newest and intact
	killed := filepath.Join(dir, "killed")
	t.Setenv(runpkg.SaveKillEnv, "2")
	msg := failCode(t, append(common, "--nproc", "2", "--set", "models.tiny.shard=1", "--set", "run.output_dir="+killed)...)
	os.Unsetenv(runpkg.SaveKillEnv)
	if !strings.Contains(msg, "rank 0 of 2") {
		t.Fatalf("the killed rank is not named:\n%s", msg)
	}
	cp, err := ckpt.Latest(filepath.Join(killed, "checkpoints"))
	if err != nil || cp.Step != 1 {
		t.Fatalf("after rank 0 died writing step 2, the newest checkpoint should be step 1, intact: %+v, %v", cp, err)
	}
	cli(t, "--resume="+cp.Dir, "-q", "--nproc", "2") // and it resumes
}

// sameCheckpoints fails unless two runs' checkpoints of step hold the same
// bytes of weights and optimizer state for both models.
func sameCheckpoints(t *testing.T, a, b string, step int, what string) {
	t.Helper()
	for _, m := range []string{"solver", "verifier"} {
		for _, f := range []string{"model.safetensors", "optimizer.safetensors"} {
			p := filepath.Join("checkpoints", ckpt.DirName(step), "models", m, f)
			if !bytes.Equal(readFile(t, filepath.Join(a, p)), readFile(t, filepath.Join(b, p))) {
				t.Fatalf("%s: %s/%s differs", what, m, f)
			}
		}
	}
}

// memoryOf is the solver's memory/… figures of a run's last metrics line.
func memoryOf(t *testing.T, run string) map[string]float64 {
	t.Helper()
	recs, err := metrics.ReadJSONL(filepath.Join(run, "metrics.jsonl"))
	if err != nil || len(recs) == 0 {
		t.Fatalf("%s: metrics: %v (%d lines)", run, err, len(recs))
	}
	out := map[string]float64{}
	for k, v := range recs[len(recs)-1].Values {
		if name, ok := strings.CutPrefix(k, "memory/solver/"); ok {
			out[name] = v
		}
	}
	return out
}

// relativeDifference is ‖a − b‖ / ‖a‖ over every tensor of two weight files.
func relativeDifference(t *testing.T, pathA, pathB string) float64 {
	t.Helper()
	a, b := tensorsOf(t, pathA), tensorsOf(t, pathB)
	var num, den float64
	for name, x := range a {
		y, ok := b[name]
		if !ok || len(y) != len(x) {
			t.Fatalf("%s: tensor %s missing or of another size in %s", pathA, name, pathB)
		}
		for i := range x {
			num += float64(x[i]-y[i]) * float64(x[i]-y[i])
			den += float64(x[i]) * float64(x[i])
		}
	}
	return math.Sqrt(num / den)
}

// copyRunTo copies a run directory and drops its checkpoints after step.
func copyRunTo(t *testing.T, from, to string, step int) {
	t.Helper()
	if err := os.CopyFS(to, os.DirFS(from)); err != nil {
		t.Fatal(err)
	}
	entries, err := ckpt.List(filepath.Join(to, "checkpoints"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Step > step {
			os.RemoveAll(e.Dir)
		}
	}
}
