// client.go — a client for Search-R1's retrieval server API, so troupe can
// use the e5/FAISS or BM25 servers people already run.
//
// The API: POST <url> (conventionally http://host:port/retrieve) with
//
//	{"queries": ["q1", "q2"], "topk": 3, "return_scores": true}
//
// answered by {"result": [[hit, …], …]}, one list per query, where a hit is
// {"document": {"id": …, "contents": "Title\ntext"}, "score": s} when scores
// were asked for, or the bare document otherwise. The client always asks for
// scores and accepts both shapes.
//
// With a token (ClientOptions.Token, env.search.retriever.token_file) every
// call carries "Authorization: Bearer <token>", as `train serve
// --token-file` wants.
//
// What it deliberately is not: a cache. Every call is one POST, over at
// most 16 kept-alive connections (more calls at once wait for one); failures that may pass (connection errors, timeouts,
// 408, 429 and 5xx answers) are retried with exponential backoff, the
// others (4xx, malformed JSON, too many bytes, wrong result count) fail at
// once. A refusal's message is the server's "error" (or FastAPI's "detail").
package retrieval

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// ClientOptions configures a Client; zero fields take the defaults.
type ClientOptions struct {
	Timeout  time.Duration // per attempt (default 30 s)
	Retries  int           // further attempts after the first (default 2; negative = none)
	Backoff  time.Duration // wait before the first retry, doubled after each (default 500 ms)
	MaxBytes int64         // largest accepted response body (default 64 MiB)
	Token    string        // bearer token sent with every call ("" = none)
}

// clientConns bounds a client's connections to its server: a quarter of a
// `train serve`'s default --max-conns, so a few troupe processes share one.
const clientConns = 16

// Client calls a Search-R1-compatible retrieval server. It is safe for
// concurrent use.
type Client struct {
	url  string
	opts ClientOptions
	http *http.Client
}

// NewClient checks the URL and fills the defaults.
func NewClient(rawURL string, opts ClientOptions) (*Client, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("retrieval: url %q: want http(s)://host:port/retrieve", rawURL)
	}
	if opts.Timeout == 0 {
		opts.Timeout = 30 * time.Second
	}
	if opts.Retries == 0 {
		opts.Retries = 2
	}
	if opts.Retries < 0 {
		opts.Retries = 0
	}
	if opts.Backoff == 0 {
		opts.Backoff = 500 * time.Millisecond
	}
	if opts.MaxBytes == 0 {
		opts.MaxBytes = 64 << 20
	}
	if opts.Token != "" {
		if _, err := checkToken(opts.Token); err != nil {
			return nil, fmt.Errorf("retrieval: %w", err)
		}
	}
	// a pool of kept-alive connections, at most clientConns: the calls past
	// it wait for one (within their timeout) instead of opening more than a
	// server's --max-conns takes
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxConnsPerHost, tr.MaxIdleConnsPerHost = clientConns, clientConns
	return &Client{url: rawURL, opts: opts, http: &http.Client{Timeout: opts.Timeout, Transport: tr}}, nil
}

// Request is the body of a retrieval call.
type Request struct {
	Queries      []string `json:"queries"`
	TopK         int      `json:"topk"`
	ReturnScores bool     `json:"return_scores"`
}

// errPermanent marks failures that a retry cannot fix.
type errPermanent struct{ error }

// Retrieve sends the queries in one call.
func (c *Client) Retrieve(queries []string, k int) ([][]Hit, error) {
	if len(queries) == 0 {
		return nil, nil
	}
	body, err := json.Marshal(Request{Queries: queries, TopK: k, ReturnScores: true})
	if err != nil {
		return nil, fmt.Errorf("retrieval: %w", err)
	}
	wait := c.opts.Backoff
	var last error
	for attempt := 0; attempt <= c.opts.Retries; attempt++ {
		if attempt > 0 {
			time.Sleep(wait)
			wait *= 2
		}
		hits, err := c.once(body, len(queries))
		if err == nil {
			return hits, nil
		}
		last = err
		var perm errPermanent
		if errors.As(err, &perm) {
			return nil, fmt.Errorf("retrieval: %s: %w", c.url, perm.error)
		}
	}
	return nil, fmt.Errorf("retrieval: %s: %d attempts failed, the last: %w", c.url, c.opts.Retries+1, last)
}

func (c *Client) once(body []byte, want int) ([][]Hit, error) {
	ctx, cancel := context.WithTimeout(context.Background(), c.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, errPermanent{err}
	}
	req.Header.Set("Content-Type", "application/json")
	if c.opts.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.opts.Token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "Client.Timeout") {
			return nil, fmt.Errorf("no answer within %v (retrieval.timeout)", c.opts.Timeout)
		}
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, c.opts.MaxBytes+1))
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("the answer did not finish within %v (retrieval.timeout)", c.opts.Timeout)
		}
		return nil, fmt.Errorf("reading the answer: %w", err)
	}
	if int64(len(data)) > c.opts.MaxBytes {
		return nil, errPermanent{fmt.Errorf("the answer is larger than %d bytes (retrieval.max_response_bytes); ask for fewer documents", c.opts.MaxBytes)}
	}
	if resp.StatusCode != http.StatusOK {
		err := fmt.Errorf("HTTP %s: %s", resp.Status, refusal(data))
		if resp.StatusCode == http.StatusRequestTimeout || resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
			return nil, err
		}
		return nil, errPermanent{err}
	}
	hits, err := decodeResponse(data, want)
	if err != nil {
		return nil, errPermanent{err}
	}
	return hits, nil
}

// refusal is the message of an error body: its "error" or "detail" string
// when it is JSON with one, else its start.
func refusal(b []byte) string {
	var e struct {
		Error  string `json:"error"`
		Detail any    `json:"detail"`
	}
	if json.Unmarshal(b, &e) == nil {
		if e.Error != "" {
			return snippet([]byte(e.Error))
		}
		if d, ok := e.Detail.(string); ok && d != "" {
			return snippet([]byte(d))
		}
	}
	return snippet(b)
}

func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	if s == "" {
		s = "(empty body)"
	}
	return s
}

// decodeResponse reads {"result": [[hit…]…]} with either hit shape.
func decodeResponse(data []byte, want int) ([][]Hit, error) {
	var raw struct {
		Result [][]json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("the answer is not the retrieval API's JSON ({\"result\": [[…]]}): %v; body starts %s", err, snippet(data))
	}
	if len(raw.Result) != want {
		return nil, fmt.Errorf("the answer has %d result lists for %d queries", len(raw.Result), want)
	}
	out := make([][]Hit, want)
	for i, list := range raw.Result {
		for j, h := range list {
			var scored struct {
				Document *Document `json:"document"`
				Score    float64   `json:"score"`
			}
			if err := json.Unmarshal(h, &scored); err != nil {
				return nil, fmt.Errorf("result %d, hit %d: %v", i, j, err)
			}
			if scored.Document != nil {
				out[i] = append(out[i], Hit{Document: *scored.Document, Score: scored.Score})
				continue
			}
			var d Document
			if err := json.Unmarshal(h, &d); err != nil {
				return nil, fmt.Errorf("result %d, hit %d: %v", i, j, err)
			}
			out[i] = append(out[i], Hit{Document: d})
		}
	}
	return out, nil
}
