package search_test

import (
	"path/filepath"
	"testing"

	"troupe/rollout/env/search"
)

// OpenIndex indexes what the configuration retrieves from: a saved index
// file before a corpus, the synthetic world's documents when neither is
// named, and nothing (no error) when a file dataset retrieves over HTTP.
func TestOpenIndex(t *testing.T) {
	cfg := search.DefaultConfig()
	w, err := search.NewWorld(cfg.Synthetic)
	if err != nil {
		t.Fatal(err)
	}
	ix, source, err := cfg.OpenIndex("run.yaml")
	if err != nil || ix == nil || ix.Len() != len(w.Corpus) || source != "the synthetic world of run.yaml (seed 1)" {
		t.Fatalf("synthetic: %v docs, source %q, err %v; want %d docs of the world", ix, source, err, len(w.Corpus))
	}
	saved := filepath.Join(t.TempDir(), "world.bm25")
	if err := ix.Save(saved); err != nil {
		t.Fatal(err)
	}
	cfg.Retriever.Index, cfg.Retriever.Corpus = saved, filepath.Join(t.TempDir(), "absent.jsonl")
	if ix2, source, err := cfg.OpenIndex("run.yaml"); err != nil || source != saved || ix2.Len() != ix.Len() {
		t.Errorf("index file: %d docs, source %q, err %v; want the saved index", ix2.Len(), source, err)
	}
	cfg.Retriever.Index = ""
	if _, source, err := cfg.OpenIndex("run.yaml"); err == nil || source != cfg.Retriever.Corpus {
		t.Errorf("a missing corpus file: source %q, err %v; want an error reading it", source, err)
	}
	cfg = search.DefaultConfig()
	cfg.Source, cfg.Retriever.Kind = "file", "http"
	if ix, source, err := cfg.OpenIndex("run.yaml"); ix != nil || source != "" || err != nil {
		t.Errorf("nothing to index: %v %q %v; want nil, \"\", nil", ix, source, err)
	}
}
