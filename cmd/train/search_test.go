package main

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"troupe/internal/metrics"
	"troupe/retrieval"
)

const searchConfig = `
run: {name: search-e2e, output_dir: OUT, seed: 2, steps: 2, log_samples: 4}
models:
  tiny: {path: MODEL}
assignment: shared
agents:
  - {name: verifier, model: tiny, preset: search-verifier, format_penalty: 0.1, max_new_tokens: 24}
  - {name: search, model: tiny, preset: search-search, format_penalty: 0.1, max_new_tokens: 32}
  - {name: answer, model: tiny, preset: search-answer, format_penalty: 0.1, max_new_tokens: 24}
workflow: {name: search, search: {max_steps: 2, missing_verdict: "no"}}   # an unwarmed verifier routes to search
env:
  name: search
  search:
    source: synthetic
    synthetic: {people: 40, max_hops: 2}
    retriever: {kind: bm25, topk: 2}
batch: {prompts_per_step: 2, n: 3, max_batch_rows: 32}
max_new_tokens: 32
advantage: {estimator: drmas}
optim: {lr: 1e-3, micro_batch_size: 8}
eval: {every: 2, tasks: 4, n: 2, ks: [1, 2]}
checkpoint: {every: 0}
export: {at_end: false}
`

// The search system end to end with the real parts: a tiny Qwen3 model and
// its tokenizer, oracle demonstrations through the workflow (train sft), an
// index built by `train index`, served over the retrieval API on loopback
// by the serve command's server, and two RL steps whose every search goes
// over HTTP.
func TestEndToEndSearchOverRetrievalServer(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "base")
	cli(t, "init", base, "--text", "search", "--seed", "3")
	cfgPath := filepath.Join(dir, "search.yaml")
	cfg := strings.ReplaceAll(strings.ReplaceAll(searchConfig, "OUT", filepath.Join(dir, "run")), "MODEL", base)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	out := cli(t, "sft", "-c", cfgPath, "--out", filepath.Join(dir, "sft"), "--steps", "80", "--tasks", "48", "--log-every", "80")
	if !strings.Contains(out, "demonstrations") {
		t.Fatalf("sft output: %s", out)
	}

	index := filepath.Join(dir, "world.bm25")
	cli(t, "index", "-c", cfgPath, "--out", index)
	if msg := failing(t, "index", "-c", cfgPath, "--out", index); !strings.Contains(msg, "--force") {
		t.Errorf("index over an existing file: %q", msg)
	}
	ix, err := retrieval.Open(index)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	counting := &countingRetriever{Retriever: ix}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- serveIndex(ctx, ln, counting) }()

	url := "http://" + ln.Addr().String() + "/retrieve"
	out = cli(t, "-c", cfgPath, "--set", "models.tiny.path="+filepath.Join(dir, "sft", "tiny"),
		"--set", "env.search.retriever.kind=http", "--set", "env.search.retriever.url="+url)
	cancel()
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	if counting.queries.Load() == 0 {
		t.Fatalf("no query reached the server; output:\n%s", tail(out, 2000))
	}
	recs, err := metrics.ReadJSONL(filepath.Join(dir, "run", "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	last := recs[len(recs)-1].Values
	for _, k := range []string{"eval/accuracy", "eval/avg_at_n", "eval/pass_at_1", "eval/pass_at_2", "eval/f1",
		"amplification/verifier", "amplification/search", "amplification/answer",
		"eval/valid/verifier", "eval/valid/search", "eval/valid/answer", "reward/agent/search", "loss/answer"} {
		if _, ok := last[k]; !ok {
			t.Errorf("the last metrics record has no %s", k)
		}
	}
	// the server is gone now: a run that needs it stops with one clear line
	msg := failing(t, "-c", cfgPath, "--set", "models.tiny.path="+filepath.Join(dir, "sft", "tiny"),
		"--set", "env.search.retriever.kind=http", "--set", "env.search.retriever.url="+url,
		"--set", "env.search.retriever.retries=0", "--set", "run.output_dir="+filepath.Join(dir, "run2"))
	if !strings.Contains(msg, url) || !strings.Contains(msg, "retrieval") {
		t.Errorf("with the server down: %q", msg)
	}
	t.Logf("%d queries served; eval accuracy %.3f f1 %.3f", counting.queries.Load(), last["eval/accuracy"], last["eval/f1"])
}

type countingRetriever struct {
	retrieval.Retriever
	queries atomic.Int64
}

func (c *countingRetriever) Retrieve(queries []string, k int) ([][]retrieval.Hit, error) {
	c.queries.Add(int64(len(queries)))
	return c.Retriever.Retrieve(queries, k)
}

// serveIndex serves ix on ln with the default limits and no token until
// ctx ends, then shuts down gracefully.
func serveIndex(ctx context.Context, ln net.Listener, ix retrieval.Retriever) error {
	srv, err := retrieval.NewServer(ix, retrieval.DefaultLimits(), "")
	if err != nil {
		return err
	}
	return srv.Serve(ctx, ln)
}
