package run

// retrieve.go — Index and Serve (`train index`, `train serve`): build an
// embedded BM25 index from a corpus, and serve an index over the Search-R1
// retrieval API (POST /retrieve), so the search environment, other troupe
// runs and other tools can share one retriever.
//
// The corpus is a JSONL file of {"id", "contents"} (Corpus), a saved index
// (Index, serve only), or the one a config's search environment uses
// (Config: its retriever's corpus or index, else the synthetic world's).

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"troupe/config"
	"troupe/retrieval"
)

// IndexSource names where an index comes from: exactly one of a corpus
// file, an index file or a config's search environment.
type IndexSource struct {
	Corpus, Index, Config string
	Sets                  []string // --set overrides of Config
}

// load returns the index the source names, building it if needed.
func (s *IndexSource) load(cmd string) (*retrieval.Index, string, error) {
	given := 0
	for _, v := range []string{s.Corpus, s.Index, s.Config} {
		if v != "" {
			given++
		}
	}
	if given != 1 {
		return nil, "", fmt.Errorf("%s: name exactly one source: --corpus FILE, --index FILE or -c CONFIG", cmd)
	}
	switch {
	case s.Index != "":
		ix, err := retrieval.Open(s.Index)
		return ix, s.Index, err
	case s.Corpus != "":
		docs, err := retrieval.LoadCorpus(s.Corpus)
		if err != nil {
			return nil, "", err
		}
		ix, err := retrieval.Build(docs)
		return ix, s.Corpus, err
	}
	// only env.search matters here: the models need not exist yet
	cfg, err := config.LoadSaved(s.Config, s.Sets)
	if err != nil {
		return nil, "", err
	}
	sc, ok := cfg.Env.Section("search").(indexSource)
	if !ok {
		return nil, "", fmt.Errorf("%s: no search environment is registered", cmd)
	}
	ix, what, err := sc.OpenIndex(s.Config)
	if err == nil && ix == nil {
		err = fmt.Errorf("%s: %s: env.search has no corpus, index or synthetic world to index", cmd, s.Config)
	}
	return ix, what, err
}

// indexSource is the options of an environment that retrieves from a BM25
// index (env.search): OpenIndex opens or builds it, and returns a nil index
// when there is none to index.
type indexSource interface {
	OpenIndex(name string) (*retrieval.Index, string, error)
}

// Index is `train index`: build an index and save it to Out.
type Index struct {
	Source      IndexSource
	Out         string
	Force       bool
	WriteCorpus bool // also write the indexed documents to Out.corpus.jsonl
}

// Run builds and saves the index, reporting to out.
func (c *Index) Run(out io.Writer) error {
	if c.Out == "" {
		return fmt.Errorf("index: --out FILE is required")
	}
	if err := RefuseInputAsOutput("index", c.Out, "--out", c.Source.Corpus, c.Source.Index, c.Source.Config); err != nil {
		return err
	}
	if c.WriteCorpus {
		if err := RefuseInputAsOutput("index", c.Out+".corpus.jsonl", "--out (its .corpus.jsonl)", c.Source.Corpus, c.Source.Index, c.Source.Config); err != nil {
			return err
		}
	}
	if !c.Force {
		if _, err := os.Stat(c.Out); err == nil {
			return fmt.Errorf("index: %s exists; pass --force to replace it", c.Out)
		}
	}
	start := time.Now()
	ix, from, err := c.Source.load("index")
	if err != nil {
		return err
	}
	if err := RefuseInputAsOutput("index", c.Out, "--out", from); err != nil { // the corpus a config names
		return err
	}
	if err := ix.Save(c.Out); err != nil {
		return err
	}
	fmt.Fprintf(out, "index: %d documents from %s → %s (%s)\n", ix.Len(), from, c.Out, time.Since(start).Round(time.Millisecond))
	if c.WriteCorpus {
		path := c.Out + ".corpus.jsonl"
		docs := make([]retrieval.Document, ix.Len())
		for i := range docs {
			docs[i] = ix.Doc(i)
		}
		if err := retrieval.WriteCorpus(path, docs); err != nil {
			return err
		}
		fmt.Fprintf(out, "index: corpus written to %s\n", path)
	}
	return nil
}

// Serve is `train serve`: an index over the retrieval API until interrupted.
type Serve struct {
	Source    IndexSource
	Addr      string
	TokenFile string
	Limits    retrieval.Limits
}

// Run serves until SIGINT or SIGTERM, reporting to out and warning on errOut.
func (c *Serve) Run(out, errOut io.Writer) error {
	token, tokenFrom, err := retrieval.ServerToken(c.TokenFile)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	ix, from, err := c.Source.load("serve")
	if err != nil {
		return err
	}
	srv, err := retrieval.NewServer(ix, c.Limits, token)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	ln, err := net.Listen("tcp", c.Addr)
	if err != nil {
		return fmt.Errorf("serve: --addr %s: %w", c.Addr, err)
	}
	fmt.Fprintf(out, "serve: %d documents from %s on http://%s/retrieve (Ctrl-C stops)\n", ix.Len(), from, ln.Addr())
	if token != "" {
		fmt.Fprintf(out, "serve: requests need the bearer token from %s\n", tokenFrom)
	}
	if w := retrieval.TokenFileWarning(c.TokenFile); c.TokenFile != "" && w != "" {
		fmt.Fprintln(errOut, "serve: "+w)
	}
	if w := retrieval.ExposureWarning(ln.Addr(), token != ""); w != "" {
		fmt.Fprintln(errOut, "serve: "+w)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := srv.Serve(ctx, ln); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	fmt.Fprintln(out, "serve: stopped")
	return nil
}
