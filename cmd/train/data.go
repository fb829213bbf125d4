package main

// data.go — `train data NAME`: flags for datasets.Write (the datasets of
// the shipped real-size configs, from their public sources, in the layout
// the configs read); `train data list` names them.

import (
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"troupe/datasets"
)

type dataCmd struct {
	o         datasets.Options
	revisions []string
}

func newData() *cobra.Command {
	c := &dataCmd{}
	var names strings.Builder
	datasets.List(&names)
	cmd := &cobra.Command{
		Use:   "data NAME [--out DIR] [--force] [--corpus] [--revision REPO=REV]... [--from DIR]",
		Short: "Write a shipped config's datasets from their public sources (Hugging Face), in the layout the config reads",
		Long: `data downloads the datasets of a shipped real-size config from the Hugging Face
Hub and writes them as the config reads them: DIR/data/... (DIR is --out, "."
by default, so that the configs' data/... paths hold from the repository
root). Each file is what the reference project's preprocessing writes (see
docs/usage.md). Every download is checked against the checksum the Hub
publishes for it (sha256 of LFS files, the git blob id of others) and refused
on a mismatch; outputs are written atomically; a file that exists is kept
unless --force. DIR/data/NAME.manifest.json records, per file, the
repositories and commits it came from and each source file's sha256.

The Hub is $HF_ENDPOINT (default https://huggingface.co); $HF_TOKEN is sent
when set (gated datasets). Without network, download the repositories by hand
into DIR/OWNER/NAME (git clone https://huggingface.co/datasets/OWNER/NAME,
with Git LFS) and pass --from DIR.

The names (bin/train data list prints them):

` + names.String(),
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return fmt.Errorf("data: name one dataset, got %d (bin/train data list names them)", len(args))
			}
			return nil
		},
		RunE: c.run,
	}
	f := cmd.Flags()
	f.StringVar(&c.o.Out, "out", ".", "the `DIR` the config's data/... paths are relative to")
	f.BoolVar(&c.o.Force, "force", false, "replace files that exist")
	f.BoolVar(&c.o.Corpus, "corpus", false, "drmas-search: also the wiki-18 corpus for train serve --corpus (over 10 GB)")
	f.StringArrayVar(&c.revisions, "revision", nil, "the revision (branch, tag or commit) of one repository as `REPO=REV`, or of every one as REV alone (default main; the manifest's reproduce line pins each to its commit)")
	f.StringVar(&c.o.From, "from", "", "read the repositories from `DIR`/OWNER/NAME (downloaded by hand) instead of the Hub")
	return cmd
}

func (c *dataCmd) run(cmd *cobra.Command, args []string) error {
	if args[0] == "list" {
		datasets.List(cmd.OutOrStdout())
		return nil
	}
	c.o.Revisions = map[string]string{}
	for _, r := range c.revisions {
		repo, rev, ok := strings.Cut(r, "=")
		if !ok {
			repo, rev = "", r
		}
		if rev == "" || ok && strings.Count(repo, "/") != 1 {
			return fmt.Errorf("data: --revision %q: give REPO=REV (e.g. aaabiao/dapo_filter=main) or REV for every repository", r)
		}
		c.o.Revisions[repo] = rev
	}
	c.o.Log = cmd.ErrOrStderr()
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	written, err := datasets.Write(ctx, args[0], c.o)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	switch {
	case len(written) > 0:
		fmt.Fprintf(out, "data %s: wrote %s under %s; where each came from: %s\n", args[0], strings.Join(written, ", "), c.o.Out,
			filepath.Join(c.o.Out, "data", args[0]+".manifest.json"))
	default:
		fmt.Fprintf(out, "data %s: nothing written\n", args[0])
	}
	return nil
}
