package main

// retrieve.go — `train index` and `train serve`: build an embedded BM25
// index from a corpus, and serve an index over the Search-R1 retrieval API
// (POST /retrieve), so the search environment, other troupe runs and other
// tools can share one retriever.
//
// The corpus is a JSONL file of {"id", "contents"} (--corpus), a saved
// index (--index, serve only), or the one a config's search environment
// uses (-c: its retriever's corpus or index, else the synthetic world's).

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"troupe/config"
	"troupe/retrieval"
)

type retrieverSource struct {
	corpus, index, config string
	sets                  []string
}

func (s *retrieverSource) flags(cmd *cobra.Command, withIndex bool) {
	f := cmd.Flags()
	f.StringVar(&s.corpus, "corpus", "", "JSONL corpus, one {\"id\", \"contents\": \"Title\\ntext\"} per line")
	if withIndex {
		f.StringVar(&s.index, "index", "", "an index file written by `train index`")
	}
	f.StringVarP(&s.config, "config", "c", "", "use the corpus of this config's search environment (env.search)")
	f.StringArrayVar(&s.sets, "set", nil, "override a config key (with -c; repeatable)")
}

// load returns the index the flags name, building it if needed.
func (s *retrieverSource) load(cmd string) (*retrieval.Index, string, error) {
	given := 0
	for _, v := range []string{s.corpus, s.index, s.config} {
		if v != "" {
			given++
		}
	}
	if given != 1 {
		return nil, "", fmt.Errorf("%s: name exactly one source: --corpus FILE, --index FILE or -c CONFIG", cmd)
	}
	switch {
	case s.index != "":
		ix, err := retrieval.Open(s.index)
		return ix, s.index, err
	case s.corpus != "":
		docs, err := retrieval.LoadCorpus(s.corpus)
		if err != nil {
			return nil, "", err
		}
		ix, err := retrieval.Build(docs)
		return ix, s.corpus, err
	}
	// only env.search matters here: the models need not exist yet
	cfg, err := config.LoadSaved(s.config, s.sets)
	if err != nil {
		return nil, "", err
	}
	sc, ok := cfg.Env.Section("search").(indexSource)
	if !ok {
		return nil, "", fmt.Errorf("%s: no search environment is registered", cmd)
	}
	ix, what, err := sc.OpenIndex(s.config)
	if err == nil && ix == nil {
		err = fmt.Errorf("%s: %s: env.search has no corpus, index or synthetic world to index", cmd, s.config)
	}
	return ix, what, err
}

// indexSource is the options of an environment that retrieves from a BM25
// index (env.search): OpenIndex opens or builds it, and returns a nil index
// when there is none to index.
type indexSource interface {
	OpenIndex(name string) (*retrieval.Index, string, error)
}

func newIndex() *cobra.Command {
	var src retrieverSource
	var out string
	var force, writeCorpus bool
	cmd := &cobra.Command{
		Use:   "index --out FILE (--corpus FILE | -c CONFIG)",
		Short: "Build a BM25 index of a passage corpus and save it",
		Long: `index builds troupe's embedded BM25 index (k1 0.9, b 0.4) from a JSONL corpus in
Search-R1's layout, or from the corpus of a config's search environment, and
writes it to one checksummed file that env.search.retriever.index and
` + "`train serve --index`" + ` open without re-tokenising.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return fmt.Errorf("index: --out FILE is required")
			}
			if !force {
				if _, err := os.Stat(out); err == nil {
					return fmt.Errorf("index: %s exists; pass --force to replace it", out)
				}
			}
			start := time.Now()
			ix, from, err := src.load("index")
			if err != nil {
				return err
			}
			if err := ix.Save(out); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "index: %d documents from %s → %s (%s)\n", ix.Len(), from, out, time.Since(start).Round(time.Millisecond))
			if writeCorpus {
				path := out + ".corpus.jsonl"
				docs := make([]retrieval.Document, ix.Len())
				for i := range docs {
					docs[i] = ix.Doc(i)
				}
				if err := retrieval.WriteCorpus(path, docs); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "index: corpus written to %s\n", path)
			}
			return nil
		},
	}
	src.flags(cmd, false)
	cmd.Flags().StringVar(&out, "out", "", "index file to write")
	cmd.Flags().BoolVar(&force, "force", false, "replace --out if it exists")
	cmd.Flags().BoolVar(&writeCorpus, "write-corpus", false, "also write the indexed documents to OUT.corpus.jsonl (e.g. to inspect a synthetic world)")
	return cmd
}

func newServe() *cobra.Command {
	var src retrieverSource
	var addr, tokenFile string
	lim := retrieval.DefaultLimits()
	cmd := &cobra.Command{
		Use:   "serve (--index FILE | --corpus FILE | -c CONFIG) [--addr HOST:PORT] [--token-file FILE]",
		Short: "Serve a BM25 index over the Search-R1 retrieval API (POST /retrieve)",
		Long: `serve answers POST /retrieve with {"queries": [...], "topk": k, "return_scores": bool}
as a Search-R1 retrieval server does, from troupe's embedded BM25 index. Point
env.search.retriever (kind: http, url: http://ADDR/retrieve) or any
Search-R1-compatible trainer at it. Stop it with Ctrl-C.

It binds to loopback (127.0.0.1:8000) by default. With --token-file (or
$` + retrieval.TokenEnv + `) every request needs "Authorization: Bearer <token>"
(a troupe client: env.search.retriever.token_file); binding beyond loopback
without a token warns.

A request past a limit below gets a JSON error naming the limit and its flag:
413 too large (body, queries, answer), 400 topk, 503 busy (in flight, open
connections), 408 a stalled upload, 401 no token. The defaults hold at most
about ` + fmt.Sprint(retrieval.DefaultLimits().MemoryBound()>>20) + ` MiB for requests at once (docs/retrieval.md).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			token, tokenFrom, err := retrieval.ServerToken(tokenFile)
			if err != nil {
				return fmt.Errorf("serve: %w", err)
			}
			ix, from, err := src.load("serve")
			if err != nil {
				return err
			}
			srv, err := retrieval.NewServer(ix, lim, token)
			if err != nil {
				return fmt.Errorf("serve: %w", err)
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return fmt.Errorf("serve: --addr %s: %w", addr, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "serve: %d documents from %s on http://%s/retrieve (Ctrl-C stops)\n", ix.Len(), from, ln.Addr())
			if token != "" {
				fmt.Fprintf(cmd.OutOrStdout(), "serve: requests need the bearer token from %s\n", tokenFrom)
			}
			if w := retrieval.TokenFileWarning(tokenFile); tokenFile != "" && w != "" {
				fmt.Fprintln(cmd.ErrOrStderr(), "serve: "+w)
			}
			if w := retrieval.ExposureWarning(ln.Addr(), token != ""); w != "" {
				fmt.Fprintln(cmd.ErrOrStderr(), "serve: "+w)
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if err := srv.Serve(ctx, ln); err != nil {
				return fmt.Errorf("serve: %w", err)
			}
			fmt.Fprintln(cmd.OutOrStdout(), "serve: stopped")
			return nil
		},
	}
	src.flags(cmd, true)
	f := cmd.Flags()
	f.StringVar(&addr, "addr", "127.0.0.1:8000", "host:port to listen on (0.0.0.0:8000: every interface; warns without a token)")
	f.StringVar(&tokenFile, "token-file", "", "file holding a bearer token every request must carry (or set $"+retrieval.TokenEnv+")")
	f.Int64Var(&lim.MaxBodyBytes, "max-body-bytes", lim.MaxBodyBytes, "largest request body; larger gets 413")
	f.IntVar(&lim.MaxQueries, "max-queries", lim.MaxQueries, "most queries in one request; more gets 413")
	f.IntVar(&lim.MaxTopK, "max-topk", lim.MaxTopK, fmt.Sprintf("largest topk a request may ask (at most %d); larger gets 400", retrieval.MaxTopK))
	f.Int64Var(&lim.MaxResponseBytes, "max-response-bytes", lim.MaxResponseBytes, "largest answer; a larger one is refused with 413 before it is built in full")
	f.IntVar(&lim.MaxInFlight, "max-inflight", lim.MaxInFlight, "requests answered at once; the next waits up to --queue-timeout, then gets 503")
	f.DurationVar(&lim.QueueTimeout, "queue-timeout", lim.QueueTimeout, "how long a request waits for a --max-inflight slot")
	f.IntVar(&lim.MaxConns, "max-conns", lim.MaxConns, "open connections; one more gets 503 and is closed")
	f.DurationVar(&lim.ReadHeaderTimeout, "read-header-timeout", lim.ReadHeaderTimeout, "time to read a request's headers; a client that stalls is dropped")
	f.DurationVar(&lim.ReadTimeout, "read-timeout", lim.ReadTimeout, "time to read a whole request; a stalled upload gets 408 and is dropped")
	f.DurationVar(&lim.WriteTimeout, "write-timeout", lim.WriteTimeout, "time to write an answer once it is ready; a client that stops reading is dropped")
	f.DurationVar(&lim.IdleTimeout, "idle-timeout", lim.IdleTimeout, "a kept-alive connection with no request is closed after this")
	return cmd
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
