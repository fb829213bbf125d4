package main

// BenchmarkShardedUpdate: what sharding costs in update time on CPU, where
// the collectives are Gloo over loopback. A 3.5M-parameter Qwen3-shaped
// model (hidden 256, 4 layers) trains 5 steps of the end-to-end test's
// task on 2 ranks, unsharded and at each shard level (buckets of 1 MiB,
// activation checkpointing in every run); the figures reported are the
// update's seconds per step (metrics time/update_s of steps 2–5: the
// fastest, which other work on the machine disturbs least, and the mean),
// beside the bytes each rank holds of masters, moments and grads. Run with
// `go test ./cmd/train -run '^$' -bench ShardedUpdate -benchtime 1x`.

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"troupe/internal/metrics"
)

func BenchmarkShardedUpdate(b *testing.B) {
	dir := b.TempDir()
	base := filepath.Join(dir, "base")
	benchCLI(b, "init", base, "--seed", "5", "--hidden", "256", "--layers", "4", "--intermediate", "768", "--heads", "8", "--kv-heads", "4", "--head-dim", "32")
	cfgPath := filepath.Join(dir, "run.yaml")
	cfg := strings.ReplaceAll(strings.ReplaceAll(e2eConfig, "OUT", filepath.Join(dir, "unused")), "MODEL", base)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		b.Fatal(err)
	}
	b.Setenv("TROUPE_THREADS", "1")
	for level := range 4 {
		b.Run(fmt.Sprintf("shard=%d", level), func(b *testing.B) {
			for range b.N {
				out, err := os.MkdirTemp(dir, fmt.Sprintf("shard%d-", level))
				if err != nil {
					b.Fatal(err)
				}
				benchCLI(b, "-c", cfgPath, "-q", "--nproc", "2", "--set", "run.output_dir="+out, "--set", "batch.prompts_per_step=4",
					"--set", "run.steps=5", "--set", "checkpoint.every=0", "--set", "checkpoint.at_end=false", "--set", "export.at_end=false",
					"--set", "optim.micro_batch_size=4", "--set", "optim.activation_checkpointing=true",
					"--set", fmt.Sprintf("models.tiny.shard=%d", level), "--set", "models.tiny.shard_bucket_mib=1")
				recs, err := metrics.ReadJSONL(filepath.Join(out, "metrics.jsonl"))
				if err != nil || len(recs) != 5 {
					b.Fatalf("metrics: %v (%d lines)", err, len(recs))
				}
				fastest, sum := math.Inf(1), 0.0
				for _, r := range recs[1:] {
					fastest, sum = math.Min(fastest, r.Values["time/update_s"]), sum+r.Values["time/update_s"]
				}
				v := recs[4].Values
				b.ReportMetric(fastest, "min-update-s/step")
				b.ReportMetric(sum/4, "mean-update-s/step")
				b.ReportMetric(v["memory/solver/master_bytes"]+v["memory/solver/moment_bytes"], "state-B/rank")
				b.ReportMetric(v["memory/solver/grad_bytes"], "grad-B/rank")
			}
		})
	}
}

// benchCLI runs the command line and fails the benchmark on an error.
func benchCLI(tb testing.TB, args ...string) {
	tb.Helper()
	var out, errb bytes.Buffer
	if code := execute(args, &out, &errb); code != 0 {
		tb.Fatalf("train %s: exit %d\n%s\n%s", strings.Join(args, " "), code, errb.String(), tail(out.String(), 1500))
	}
}
