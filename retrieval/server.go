// server.go — the retrieval server API over any Retriever, so an embedded
// BM25 index can serve other tools (and troupe runs on other machines)
// exactly as a Search-R1 retrieval server would.
//
// What it is: a Server answering POST /retrieve (see client.go for the
// JSON) within Limits (limits.go): a request is checked (token, body size,
// queries, topk) before it waits for one of MaxInFlight slots, and answered
// within MaxResponseBytes (answer.go). A refusal is a JSON object
//
//	{"error": msg, "detail": msg, "limit": "max_queries", "flag": "--max-queries"}
//
// whose message names the value, the limit and the flag that raises it;
// "detail" carries the same message where FastAPI servers, Search-R1's
// among them, put theirs. Status codes: 400 a malformed request or a topk
// out of range, 401 a missing or wrong token, 405 not a POST, 408 a body
// that did not arrive within --read-timeout, 413 a body, a query count or
// an answer past its limit, 503 (with Retry-After) no slot within
// --queue-timeout or too many open connections. Serve (listen.go) adds the
// connection cap and the timeouts.
//
// What it deliberately is not: TLS, or a per-client rate limiter.
package retrieval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Server serves a Retriever over the retrieval API. Build it with
// NewServer; it is an http.Handler, and Serve runs it on a listener.
type Server struct {
	r     Retriever
	lim   Limits
	token tokenCheck
	mux   *http.ServeMux
	slots chan struct{} // one per request being answered
	conns atomic.Int64  // open connections (Serve)
}

// NewServer checks the limits and builds a server over r; token "" serves
// without authentication.
func NewServer(r Retriever, lim Limits, token string) (*Server, error) {
	if err := lim.Validate(); err != nil {
		return nil, err
	}
	if token != "" {
		if _, err := checkToken(token); err != nil {
			return nil, fmt.Errorf("retrieval: %w", err)
		}
	}
	s := &Server{r: r, lim: lim, token: newTokenCheck(token), mux: http.NewServeMux(), slots: make(chan struct{}, lim.MaxInFlight)}
	s.mux.HandleFunc("/retrieve", s.retrieve)
	return s, nil
}

// Stats is a snapshot of what a server holds.
type Stats struct {
	OpenConns int // connections accepted and not yet closed (Serve only)
	InFlight  int // requests holding a slot
}

// Stats reports what the server holds now.
func (s *Server) Stats() Stats {
	return Stats{OpenConns: int(s.conns.Load()), InFlight: len(s.slots)}
}

// ServeHTTP answers one request. Every write of it has --write-timeout.
func (s *Server) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	s.writeDeadline(w)
	s.mux.ServeHTTP(w, req)
}

// writeDeadline gives the writes from now on --write-timeout to finish: a
// client that stops reading its answer is dropped then.
func (s *Server) writeDeadline(w http.ResponseWriter) {
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(s.lim.WriteTimeout))
}

// request is the body of POST /retrieve (Search-R1's QueryRequest).
type request struct {
	Queries      []string `json:"queries"`
	TopK         *int     `json:"topk"`
	ReturnScores bool     `json:"return_scores"`
}

func (s *Server) retrieve(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		s.refuse(w, http.StatusMethodNotAllowed, "", `use POST with {"queries": [...], "topk": 3, "return_scores": true}`)
		return
	}
	if !s.token.allows(req) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="retrieval"`)
		s.refuse(w, http.StatusUnauthorized, "", "this server needs \"Authorization: Bearer <token>\" with its token (env.search.retriever.token_file on a troupe client)")
		return
	}
	in, ok := s.readRequest(w, req)
	if !ok {
		return
	}
	k := DefaultTopK
	if in.TopK != nil {
		k = *in.TopK
	}
	switch {
	case len(in.Queries) > s.lim.MaxQueries:
		s.refuse(w, http.StatusRequestEntityTooLarge, "MaxQueries",
			fmt.Sprintf("%d queries in one request; this server takes at most %d: send fewer per call, or raise %s", len(in.Queries), s.lim.MaxQueries, Flag["MaxQueries"]))
		return
	case k < 1 || k > s.lim.MaxTopK:
		s.refuse(w, http.StatusBadRequest, "MaxTopK",
			fmt.Sprintf("topk must be in [1, %d], got %d; the upper bound is %s", s.lim.MaxTopK, k, Flag["MaxTopK"]))
		return
	}
	if !s.acquire(w, req) {
		return
	}
	defer func() { <-s.slots }()
	body, err := buildAnswer(req.Context(), s.r, in.Queries, k, in.ReturnScores, s.lim.MaxResponseBytes)
	switch {
	case errors.Is(err, errAnswerTooLarge):
		s.refuse(w, http.StatusRequestEntityTooLarge, "MaxResponseBytes",
			fmt.Sprintf("the answer to %d queries with topk %d would pass %d bytes; ask for fewer queries per call or a smaller topk, or raise %s",
				len(in.Queries), k, s.lim.MaxResponseBytes, Flag["MaxResponseBytes"]))
		return
	case req.Context().Err() != nil:
		return // the client went away
	case err != nil:
		s.refuse(w, http.StatusInternalServerError, "", "retrieval: "+err.Error())
		return
	}
	s.writeDeadline(w) // the time to write starts now that the answer is ready
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// readRequest reads and decodes the body within --max-body-bytes and
// --read-timeout, answering the refusal itself when it fails.
func (s *Server) readRequest(w http.ResponseWriter, req *http.Request) (request, bool) {
	var in request
	tooLarge := func() {
		s.refuse(w, http.StatusRequestEntityTooLarge, "MaxBodyBytes",
			fmt.Sprintf("the request body is larger than %d bytes: send fewer queries per call, or raise %s", s.lim.MaxBodyBytes, Flag["MaxBodyBytes"]))
	}
	if req.ContentLength > s.lim.MaxBodyBytes {
		tooLarge()
		return in, false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, s.lim.MaxBodyBytes))
	if err != nil {
		var mb *http.MaxBytesError
		switch {
		case errors.As(err, &mb):
			tooLarge()
		case errors.Is(err, os.ErrDeadlineExceeded):
			s.refuse(w, http.StatusRequestTimeout, "ReadTimeout",
				fmt.Sprintf("the request did not arrive within %v; raise %s for slow links", s.lim.ReadTimeout, Flag["ReadTimeout"]))
		default:
			s.refuse(w, http.StatusBadRequest, "", "reading the request: "+err.Error())
		}
		return in, false
	}
	if err := json.Unmarshal(body, &in); err != nil {
		s.refuse(w, http.StatusBadRequest, "", `the body is not {"queries": [...], "topk": N, "return_scores": bool}: `+err.Error())
		return in, false
	}
	return in, true
}

// acquire takes a slot, waiting at most --queue-timeout; it answers 503
// (and reports false) when none frees in time.
func (s *Server) acquire(w http.ResponseWriter, req *http.Request) bool {
	select {
	case s.slots <- struct{}{}:
		return true
	default:
	}
	t := time.NewTimer(s.lim.QueueTimeout)
	defer t.Stop()
	select {
	case s.slots <- struct{}{}:
		return true
	case <-req.Context().Done():
		return false
	case <-t.C:
		w.Header().Set("Retry-After", "1")
		s.refuse(w, http.StatusServiceUnavailable, "MaxInFlight",
			fmt.Sprintf("busy: %d requests are being answered and none finished within %v; retry later, or raise %s (or %s)",
				s.lim.MaxInFlight, s.lim.QueueTimeout, Flag["MaxInFlight"], Flag["QueueTimeout"]))
		return false
	}
}

// apiError is a refusal's JSON body.
type apiError struct {
	Error  string `json:"error"`
	Detail string `json:"detail"`          // the same, where FastAPI servers put it
	Limit  string `json:"limit,omitempty"` // the limit refused against, e.g. "max_queries"
	Flag   string `json:"flag,omitempty"`  // the `train serve` flag that raises it
}

// errorBody is the JSON of a refusal against the limit field ("" for none).
func errorBody(field, msg string) []byte {
	e := apiError{Error: msg, Detail: msg}
	if field != "" {
		e.Flag = Flag[field]
		e.Limit = strings.ReplaceAll(strings.TrimPrefix(e.Flag, "--"), "-", "_")
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(e) // strings only: cannot fail
	return b.Bytes()
}

// refuse answers a refusal; its writes get --write-timeout from now.
func (s *Server) refuse(w http.ResponseWriter, code int, field, msg string) {
	s.writeDeadline(w)
	b := errorBody(field, msg)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(code)
	_, _ = w.Write(b)
}
