// server.go — the retrieval server API over any Retriever, so an embedded
// BM25 index can serve other tools (and troupe runs on other machines)
// exactly as a Search-R1 retrieval server would.
//
// What it is: an http.Handler for POST /retrieve (see client.go for the
// JSON). Requests are bounded (body size, queries per call, topk) and bad
// ones get a 400 with a JSON {"error": …} saying what to fix.
//
// What it deliberately is not: authenticated. Bind it to loopback or a
// private network.
package retrieval

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// Server limits.
const (
	MaxRequestBytes = 4 << 20
	MaxQueries      = 4096
	MaxTopK         = 1000
)

// Handler serves the retrieval API from r.
func Handler(r Retriever) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/retrieve", func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			fail(w, http.StatusMethodNotAllowed, "use POST with {\"queries\": [...], \"topk\": 3, \"return_scores\": true}")
			return
		}
		body, err := io.ReadAll(io.LimitReader(req.Body, MaxRequestBytes+1))
		if err != nil {
			fail(w, http.StatusBadRequest, "reading the request: "+err.Error())
			return
		}
		if len(body) > MaxRequestBytes {
			fail(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the request is larger than %d bytes; send fewer queries per call", MaxRequestBytes))
			return
		}
		var in struct {
			Queries      []string `json:"queries"`
			TopK         *int     `json:"topk"`
			ReturnScores bool     `json:"return_scores"`
		}
		if err := json.Unmarshal(body, &in); err != nil {
			fail(w, http.StatusBadRequest, "the body is not {\"queries\": [...], \"topk\": N, \"return_scores\": bool}: "+err.Error())
			return
		}
		k := 3
		if in.TopK != nil {
			k = *in.TopK
		}
		switch {
		case len(in.Queries) > MaxQueries:
			fail(w, http.StatusBadRequest, fmt.Sprintf("%d queries in one call; at most %d", len(in.Queries), MaxQueries))
			return
		case k < 1 || k > MaxTopK:
			fail(w, http.StatusBadRequest, fmt.Sprintf("topk must be in [1, %d], got %d", MaxTopK, k))
			return
		}
		hits, err := r.Retrieve(in.Queries, k)
		if err != nil {
			fail(w, http.StatusInternalServerError, err.Error())
			return
		}
		result := make([][]any, len(hits))
		for i, hs := range hits {
			result[i] = make([]any, len(hs))
			for j, h := range hs {
				if in.ReturnScores {
					result[i][j] = h
				} else {
					result[i][j] = h.Document
				}
			}
		}
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(map[string]any{"result": result})
	})
	return mux
}

func fail(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}
