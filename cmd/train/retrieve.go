package main

// retrieve.go — `train index` and `train serve`: flags for run.Index and
// run.Serve (an embedded BM25 index built from a corpus, and served over the
// Search-R1 retrieval API).

import (
	"fmt"

	"github.com/spf13/cobra"

	"troupe/retrieval"
	"troupe/run"
)

// sourceFlags binds the flags that name an index's source.
func sourceFlags(cmd *cobra.Command, s *run.IndexSource, withIndex bool) {
	f := cmd.Flags()
	f.StringVar(&s.Corpus, "corpus", "", "JSONL corpus, one {\"id\", \"contents\": \"Title\\ntext\"} per line")
	if withIndex {
		f.StringVar(&s.Index, "index", "", "an index file written by `train index`")
	}
	f.StringVarP(&s.Config, "config", "c", "", "use the corpus of this config's search environment (env.search)")
	f.StringArrayVar(&s.Sets, "set", nil, "override a config key (with -c; repeatable)")
}

func newIndex() *cobra.Command {
	c := &run.Index{}
	cmd := &cobra.Command{
		Use:   "index --out FILE (--corpus FILE | -c CONFIG)",
		Short: "Build a BM25 index of a passage corpus and save it",
		Long: `index builds troupe's embedded BM25 index (k1 0.9, b 0.4) from a JSONL corpus in
Search-R1's layout, or from the corpus of a config's search environment, and
writes it to one checksummed file that env.search.retriever.index and
` + "`train serve --index`" + ` open without re-tokenising.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return c.Run(cmd.OutOrStdout()) },
	}
	sourceFlags(cmd, &c.Source, false)
	cmd.Flags().StringVar(&c.Out, "out", "", "index file to write")
	cmd.Flags().BoolVar(&c.Force, "force", false, "replace --out if it exists")
	cmd.Flags().BoolVar(&c.WriteCorpus, "write-corpus", false, "also write the indexed documents to OUT.corpus.jsonl (e.g. to inspect a synthetic world)")
	return cmd
}

func newServe() *cobra.Command {
	c := &run.Serve{Limits: retrieval.DefaultLimits()}
	lim := &c.Limits
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
		RunE: func(cmd *cobra.Command, _ []string) error { return c.Run(cmd.OutOrStdout(), cmd.ErrOrStderr()) },
	}
	sourceFlags(cmd, &c.Source, true)
	f := cmd.Flags()
	f.StringVar(&c.Addr, "addr", "127.0.0.1:8000", "host:port to listen on (0.0.0.0:8000: every interface; warns without a token)")
	f.StringVar(&c.TokenFile, "token-file", "", "file holding a bearer token every request must carry (or set $"+retrieval.TokenEnv+")")
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
