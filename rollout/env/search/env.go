// Package search is the search environment and Dr. MAS's search orchestra
// (Verifier → Search → Answer) over a real retriever.
//
// Files: env.go (configuration, tasks, retrieval, the exact-match reward),
// normalize.go (QA normalisation, EM, F1), synthetic.go (an offline
// multi-hop QA world), workflow.go (the orchestra, its parsers and prompt
// presets, registered with rollout on import), oracle.go (train sft's
// demonstrations of the orchestra), register.go (the environment's
// registration).
//
// What it deliberately is not: a retriever. Retrieval is package
// retrieval's: an embedded BM25 index, or any Search-R1-compatible server.
package search

import (
	"fmt"
	"strings"
	"time"

	"troupe/retrieval"
	"troupe/rollout"
	"troupe/rollout/answer"
	mathenv "troupe/rollout/env/math"
)

// Config configures the search environment.
type Config struct {
	Source    string          `yaml:"source"`    // "synthetic" or "file"
	Train     string          `yaml:"train"`     // dataset file of the train split (source: file; Search-R1 NQ/HotpotQA .parquet or .jsonl)
	Test      string          `yaml:"test"`      // dataset file of the test split
	Fields    mathenv.Fields  `yaml:"fields"`    // field paths; defaults read question and golden_answers
	Synthetic SyntheticConfig `yaml:"synthetic"` // the procedural world (source: synthetic)
	Retriever RetrieverConfig `yaml:"retriever"` // where passages come from
}

// RetrieverConfig selects the retriever.
type RetrieverConfig struct {
	Kind             string  `yaml:"kind"`               // "bm25" (embedded) or "http" (a Search-R1 retrieval server)
	Corpus           string  `yaml:"corpus"`             // bm25: JSONL corpus to index at start ("" with source synthetic: the world's corpus)
	Index            string  `yaml:"index"`              // bm25: an index file saved by `train index` (instead of corpus)
	URL              string  `yaml:"url"`                // http: e.g. http://127.0.0.1:8000/retrieve
	TopK             int     `yaml:"topk"`               // passages per search
	TimeoutSeconds   float64 `yaml:"timeout_s"`          // http: per attempt
	Retries          int     `yaml:"retries"`            // http: further attempts after a failure that may pass
	MaxResponseBytes int64   `yaml:"max_response_bytes"` // http: largest accepted answer
	TokenFile        string  `yaml:"token_file"`         // http: file holding the server's bearer token (train serve --token-file)
}

// DefaultConfig is the offline setting: the synthetic world, embedded BM25,
// top 3 passages.
func DefaultConfig() Config {
	return Config{
		Source:    "synthetic",
		Synthetic: DefaultSyntheticConfig(),
		Retriever: RetrieverConfig{Kind: "bm25", TopK: 3, TimeoutSeconds: 30, Retries: 2, MaxResponseBytes: 64 << 20},
	}
}

// Validate checks the settings; errors name the key and the fix.
func (c Config) Validate() error {
	switch c.Source {
	case "synthetic":
		if err := c.Synthetic.Validate(); err != nil {
			return err
		}
	case "file":
		if c.Train == "" && c.Test == "" {
			return fmt.Errorf("env.search.train: source is file but neither train nor test names a dataset file (.parquet, .jsonl or .json)")
		}
	default:
		return fmt.Errorf("env.search.source: must be \"synthetic\" or \"file\", got %q", c.Source)
	}
	r := c.Retriever
	switch r.Kind {
	case "bm25":
		if r.Corpus != "" && r.Index != "" {
			return fmt.Errorf("env.search.retriever: set corpus or index, not both")
		}
		if c.Source == "file" && r.Corpus == "" && r.Index == "" {
			return fmt.Errorf("env.search.retriever.corpus: a file dataset needs a corpus (JSONL of {\"id\", \"contents\"}) or a saved index; or use kind: http with a url")
		}
	case "http":
		if _, err := retrieval.NewClient(r.URL, retrieval.ClientOptions{}); err != nil {
			return fmt.Errorf("env.search.retriever.url: %w", err)
		}
	default:
		return fmt.Errorf("env.search.retriever.kind: must be \"bm25\" or \"http\", got %q", r.Kind)
	}
	switch {
	case r.TokenFile != "" && r.Kind != "http":
		return fmt.Errorf("env.search.retriever.token_file: set for kind %q; a token is for kind: http (a retrieval server started with --token-file)", r.Kind)
	case r.TopK < 1 || r.TopK > retrieval.MaxTopK:
		return fmt.Errorf("env.search.retriever.topk: must be in [1, %d], got %d", retrieval.MaxTopK, r.TopK)
	case !(r.TimeoutSeconds > 0):
		return fmt.Errorf("env.search.retriever.timeout_s: must be > 0, got %g", r.TimeoutSeconds)
	case r.Retries < 0:
		return fmt.Errorf("env.search.retriever.retries: must be >= 0, got %d", r.Retries)
	case r.MaxResponseBytes < 1024:
		return fmt.Errorf("env.search.retriever.max_response_bytes: must be >= 1024, got %d", r.MaxResponseBytes)
	}
	return nil
}

// Splits.
const (
	SplitTrain = "train"
	SplitTest  = "test"
)

// Env is the search environment for one split: tasks, a retriever and the
// exact-match scorer. It implements rollout.Environment and Searcher.
type Env struct {
	rollout.TaskSource
	retriever retrieval.Retriever
	topK      int
}

// Searcher is what the search workflow needs of its environment.
type Searcher interface {
	rollout.Scorer
	// Search returns the <information> text for a query.
	Search(query string) (string, error)
}

func (*Env) Name() string { return "search" }

// Envs builds both splits; they share one retriever. test is nil when the
// configuration has no test split.
func Envs(cfg Config) (train, test *Env, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, nil, err
	}
	var trainTasks, testTasks rollout.SliceSource
	var corpus []retrieval.Document
	switch cfg.Source {
	case "synthetic":
		w, err := NewWorld(cfg.Synthetic)
		if err != nil {
			return nil, nil, err
		}
		trainTasks, testTasks, corpus = w.Train, w.Test, w.Corpus
	case "file":
		for _, s := range []struct {
			path string
			dst  *rollout.SliceSource
		}{{cfg.Train, &trainTasks}, {cfg.Test, &testTasks}} {
			if s.path == "" {
				continue
			}
			if *s.dst, err = mathenv.Load(s.path, cfg.Fields); err != nil {
				return nil, nil, fmt.Errorf("search: %w", err)
			}
		}
	}
	r, err := newRetriever(cfg.Retriever, corpus)
	if err != nil {
		return nil, nil, err
	}
	mk := func(ts rollout.SliceSource) *Env {
		if len(ts) == 0 {
			return nil
		}
		return &Env{TaskSource: ts, retriever: r, topK: cfg.Retriever.TopK}
	}
	return mk(trainTasks), mk(testTasks), nil
}

func newRetriever(c RetrieverConfig, corpus []retrieval.Document) (retrieval.Retriever, error) {
	if c.Kind == "http" {
		retries := c.Retries
		if retries == 0 {
			retries = -1 // the client reads 0 as its default
		}
		var token string
		if c.TokenFile != "" {
			var err error
			if token, err = retrieval.ReadTokenFile(c.TokenFile); err != nil {
				return nil, fmt.Errorf("env.search.retriever.token_file: %w", err)
			}
		}
		return retrieval.NewClient(c.URL, retrieval.ClientOptions{
			Timeout:  time.Duration(c.TimeoutSeconds * float64(time.Second)),
			Retries:  retries,
			MaxBytes: c.MaxResponseBytes,
			Token:    token,
		})
	}
	return bm25(c, corpus)
}

// bm25 opens the retriever's index file, else indexes its corpus file,
// else corpus.
func bm25(c RetrieverConfig, corpus []retrieval.Document) (*retrieval.Index, error) {
	switch {
	case c.Index != "":
		return retrieval.Open(c.Index)
	case c.Corpus != "":
		docs, err := retrieval.LoadCorpus(c.Corpus)
		if err != nil {
			return nil, err
		}
		corpus = docs
	}
	return retrieval.Build(corpus)
}

// OpenIndex opens or builds the BM25 index of this configuration, for
// `train index -c` and `train serve -c`: the retriever's index file, else
// its corpus file, else the synthetic world's documents. source says what
// was indexed (name: the config file the section came from). It returns a
// nil index and no error when the configuration has nothing to index.
func (c Config) OpenIndex(name string) (ix *retrieval.Index, source string, err error) {
	r := c.Retriever
	switch {
	case r.Index != "":
		ix, err = bm25(r, nil)
		return ix, r.Index, err
	case r.Corpus != "":
		ix, err = bm25(r, nil)
		return ix, r.Corpus, err
	case c.Source == "synthetic":
		w, err := NewWorld(c.Synthetic)
		if err != nil {
			return nil, "", err
		}
		ix, err := retrieval.Build(w.Corpus)
		return ix, fmt.Sprintf("the synthetic world of %s (seed %d)", name, c.Synthetic.Seed), err
	}
	return nil, "", nil
}

// Search retrieves the top passages for a query and formats them the
// Search-R1 way: "Doc i(Title: t) text" lines inside <information>.
func (e *Env) Search(query string) (string, error) {
	query = strings.TrimSpace(query)
	if query == "" {
		return "<information>No query was given. Write the query inside <search> and </search>.</information>", nil
	}
	hits, err := e.retriever.Retrieve([]string{query}, e.topK)
	if err != nil {
		return "", err
	}
	return FormatInformation(hits[0]), nil
}

// FormatInformation renders retrieved passages.
func FormatInformation(hits []retrieval.Hit) string {
	var b strings.Builder
	b.WriteString("<information>")
	if len(hits) == 0 {
		b.WriteString("No document matched the query.")
	}
	for i, h := range hits {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "Doc %d(Title: %s) %s", i+1, h.Document.Title(), h.Document.Text())
	}
	b.WriteString("</information>")
	return b.String()
}

// Score is exact match of the last <answer> (after any </think>) against
// every gold answer: 1 or 0. F1 is reported as the metric "f1".
func (e *Env) Score(task rollout.Task, response string) rollout.Score {
	return ScoreAnswer(task, response)
}

// ScoreAnswer is Env's scorer, usable without an environment.
func ScoreAnswer(task rollout.Task, response string) rollout.Score {
	text := response
	if rest, ok := answer.AfterThink(text); ok {
		text = rest
	}
	pred, n := answer.LastTag(text, "answer")
	s := rollout.Score{Metrics: map[string]float64{"f1": 0}}
	if n == 0 {
		return s
	}
	pred = strings.TrimSpace(pred)
	golds := task.Golds()
	s.Extracted = pred
	s.Metrics["f1"] = F1(pred, golds)
	if ExactMatch(pred, golds) {
		s.Reward, s.Success = 1, true
	}
	return s
}

func fmtNoTrain() error {
	return fmt.Errorf("env.search.train: the train split has no tasks; name a train file")
}
