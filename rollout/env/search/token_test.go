package search_test

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"troupe/retrieval"
	"troupe/rollout/env/search"
)

// env.search.retriever.token_file reaches the server as the bearer token;
// a wrong one fails the search naming the fix, a bad file fails the build
// naming the key.
func TestHTTPRetrieverSendsTheTokenFile(t *testing.T) {
	ix, err := retrieval.Build([]retrieval.Document{{ID: "1", Contents: "Brelmoor\nBrelmoor is a city in Qelandia."}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := retrieval.NewServer(ix, retrieval.DefaultLimits(), "s3cret-token")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	defer srv.Close()
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(content), 0o600)
		return p
	}
	cfg := search.DefaultConfig()
	cfg.Synthetic.People = 20
	cfg.Retriever.Kind, cfg.Retriever.URL, cfg.Retriever.Retries = "http", srv.URL+"/retrieve", 0
	for _, c := range []struct{ token, want string }{
		{"s3cret-token\n", "Doc 1(Title: Brelmoor)"},
		{"wrong-token\n", "401"},
		{"", ""}, // no token_file
	} {
		cfg.Retriever.TokenFile = ""
		if c.token != "" {
			cfg.Retriever.TokenFile = file("token", c.token)
		}
		train, _, err := search.Envs(cfg)
		if err != nil {
			t.Fatal(err)
		}
		info, err := train.Search("where is Brelmoor")
		switch {
		case c.want == "Doc 1(Title: Brelmoor)":
			if err != nil || !strings.Contains(info, c.want) {
				t.Errorf("with the token: %q %v", info, err)
			}
		default:
			if err == nil || !strings.Contains(err.Error(), "401") || !strings.Contains(err.Error(), "token_file") {
				t.Errorf("token file %q: %q %v, want a 401 naming token_file", c.token, info, err)
			}
		}
	}
	cfg.Retriever.TokenFile = file("empty", "\n")
	if _, _, err := search.Envs(cfg); err == nil || !strings.Contains(err.Error(), "env.search.retriever.token_file") {
		t.Errorf("empty token file: %v", err)
	}
	cfg.Retriever.Kind = "bm25"
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "env.search.retriever.token_file") {
		t.Errorf("token_file with kind bm25: %v", err)
	}
}
