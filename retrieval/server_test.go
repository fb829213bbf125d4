package retrieval

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The tests here run a Server on loopback. They never assert on time: a
// timeout is checked by waiting, up to a deadline far past it, for the
// server to drop the connection.

// patience bounds each wait for something the server must do on its own.
const patience = 20 * time.Second

// bulkyCorpus is n documents of about size bytes that all contain "common".
func bulkyCorpus(n, size int) []Document {
	docs := make([]Document, n)
	for i := range docs {
		var b strings.Builder
		fmt.Fprintf(&b, "Title %d\ncommon", i)
		for w := 0; b.Len() < size; w++ {
			fmt.Fprintf(&b, " w%d", (i*7+w*13)%97)
		}
		docs[i] = Document{ID: fmt.Sprint(i), Contents: b.String()}
	}
	return docs
}

// serve runs a server over r on loopback until the test ends.
func serve(t *testing.T, r Retriever, lim Limits, token string) (*Server, string) {
	t.Helper()
	s, err := NewServer(r, lim, token)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	t.Cleanup(func() {
		// connections the test's clients dialed and never used would hold
		// the graceful stop for its 5 s
		http.DefaultTransport.(*http.Transport).CloseIdleConnections()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return s, ln.Addr().String()
}

// reply is an answer read off the wire.
type reply struct {
	status int
	header http.Header
	body   []byte
	err    apiError
}

func post(t *testing.T, addr, body string, header ...string) reply {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/retrieve", strings.NewReader(body))
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return do(t, req)
}

// do sends req; a transport error is reported (safe from any goroutine)
// and answers status 0.
func do(t *testing.T, req *http.Request) reply {
	t.Helper()
	resp, err := (&http.Client{Timeout: patience}).Do(req)
	if err != nil {
		t.Errorf("%s %s: %v", req.Method, req.URL, err)
		return reply{}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Errorf("%s %s: reading the answer: %v", req.Method, req.URL, err)
		return reply{}
	}
	r := reply{status: resp.StatusCode, header: resp.Header, body: b}
	if resp.StatusCode != http.StatusOK {
		if err := json.Unmarshal(b, &r.err); err != nil {
			t.Errorf("HTTP %d with a body that is not JSON: %q", resp.StatusCode, b)
		}
	}
	return r
}

// wantRefusal checks a refusal: its status, and a JSON body whose message
// (also under "detail") names the flag, with the limit and flag fields.
func wantRefusal(t *testing.T, what string, r reply, status int, flag string) {
	t.Helper()
	if r.status != status {
		t.Errorf("%s: HTTP %d %.300q, want %d", what, r.status, r.body, status)
		return
	}
	e := r.err
	if !strings.Contains(e.Error, flag) || e.Detail != e.Error || e.Flag != flag ||
		e.Limit != strings.ReplaceAll(strings.TrimPrefix(flag, "--"), "-", "_") {
		t.Errorf("%s: refusal %+v, want one naming %s", what, e, flag)
	}
}

func smallLimits() Limits {
	l := DefaultLimits()
	l.MaxBodyBytes = 4096
	l.MaxQueries = 8
	l.MaxTopK = 5
	l.MaxResponseBytes = 16 << 10
	return l
}

func queries(n int, q string) string {
	qs := make([]string, n)
	for i := range qs {
		qs[i] = q
	}
	b, _ := json.Marshal(qs)
	return string(b)
}

func TestServerRefusesPastEachLimit(t *testing.T) {
	ix, err := Build(bulkyCorpus(50, 1000))
	if err != nil {
		t.Fatal(err)
	}
	_, addr := serve(t, ix, smallLimits(), "")
	big := `{"queries": [` + strings.Repeat(`"common",`, 600) + `"common"], "topk": 1}` // > 4096 bytes
	wantRefusal(t, "body", post(t, addr, big), http.StatusRequestEntityTooLarge, "--max-body-bytes")

	// the same without a Content-Length (chunked): stopped while reading
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/retrieve", io.MultiReader(strings.NewReader(big)))
	if req.ContentLength != 0 {
		t.Fatal("the request was not chunked")
	}
	wantRefusal(t, "chunked body", do(t, req), http.StatusRequestEntityTooLarge, "--max-body-bytes")

	wantRefusal(t, "queries", post(t, addr, `{"queries": `+queries(9, "a")+`, "topk": 1}`), http.StatusRequestEntityTooLarge, "--max-queries")
	wantRefusal(t, "topk", post(t, addr, `{"queries": ["common"], "topk": 6}`), http.StatusBadRequest, "--max-topk")
	// 8 queries × 5 documents of 1 kB: about 40 kB, past 16 kB
	wantRefusal(t, "answer", post(t, addr, `{"queries": `+queries(8, "common")+`, "topk": 5}`), http.StatusRequestEntityTooLarge, "--max-response-bytes")

	// at the limits, an answer
	if r := post(t, addr, `{"queries": `+queries(8, "nothing matches")+`, "topk": 5, "return_scores": true}`); r.status != http.StatusOK {
		t.Errorf("8 queries, topk 5: HTTP %d %.300s", r.status, r.body)
	}
}

// The answer is encoding/json's bytes (as before budgets), and its budget is
// exact: an answer of L bytes passes with a budget of L and is refused with
// L-1, whose buffer never grew past the budget.
func TestAnswerBudgetIsExact(t *testing.T) {
	ix, err := Build(append(bulkyCorpus(30, 300), Document{ID: "x", Contents: "common <&> \"quoted\" \u00e9\n\ttab"}))
	if err != nil {
		t.Fatal(err)
	}
	qs := []string{"common", "nothing", "w5 common", "quoted"}
	for _, scores := range []bool{true, false} {
		hits, _ := ix.Retrieve(qs, 7)
		result := make([][]any, len(hits))
		for i, hs := range hits {
			result[i] = []any{}
			for _, h := range hs {
				if scores {
					result[i] = append(result[i], h)
				} else {
					result[i] = append(result[i], h.Document)
				}
			}
		}
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		enc.Encode(map[string]any{"result": result})

		got, err := buildAnswer(context.Background(), ix, qs, 7, scores, int64(want.Len()))
		if err != nil || !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("scores %v: budget %d: %v\n got %.300s\nwant %.300s", scores, want.Len(), err, got, want.Bytes())
		}
		got, err = buildAnswer(context.Background(), ix, qs, 7, scores, int64(want.Len()-1))
		if err != errAnswerTooLarge || got != nil {
			t.Errorf("scores %v: budget %d for %d bytes: %d bytes, error %v", scores, want.Len()-1, want.Len(), len(got), err)
		}
	}
	b := boundedBuffer{max: 10000}
	for i := 0; i < 1000; i++ {
		if err := b.append([]byte("0123456789abcdefghijklmnopqrstuvwxyz")); err != nil {
			break
		}
		if cap(b.b) > b.max {
			t.Fatalf("the buffer reserved %d bytes, past its budget of %d", cap(b.b), b.max)
		}
	}
	if len(b.b) != 9972 {
		t.Errorf("the buffer holds %d bytes, want the 277 whole pieces (9972) that fit in 10000", len(b.b))
	}
}

// gate is a retriever that holds every call until released.
type gate struct {
	Retriever
	entered chan struct{}
	release chan struct{}
}

func (g *gate) Retrieve(qs []string, k int) ([][]Hit, error) {
	g.entered <- struct{}{}
	<-g.release
	return g.Retriever.Retrieve(qs, k)
}

func TestInFlightLimit(t *testing.T) {
	ix, _ := Build(tinyCorpus())
	for _, wait := range []bool{false, true} {
		g := &gate{Retriever: ix, entered: make(chan struct{}, 8), release: make(chan struct{})}
		lim := DefaultLimits()
		lim.MaxInFlight = 2
		lim.QueueTimeout = 50 * time.Millisecond
		if wait {
			lim.QueueTimeout = patience
		}
		s, addr := serve(t, g, lim, "")
		held := make(chan reply, 2)
		for i := 0; i < 2; i++ {
			go func() { held <- post(t, addr, `{"queries": ["a"]}`) }()
			<-g.entered
		}
		if n := s.Stats().InFlight; n != 2 {
			t.Errorf("in flight: %d, want 2", n)
		}
		third := make(chan reply, 1)
		go func() { third <- post(t, addr, `{"queries": ["c"]}`) }()
		if !wait {
			r := <-third
			wantRefusal(t, "third request", r, http.StatusServiceUnavailable, "--max-inflight")
			if r.header.Get("Retry-After") == "" {
				t.Error("a 503 without Retry-After")
			}
			close(g.release)
		} else {
			// the third waits for a slot, and gets it when one frees
			g.release <- struct{}{}
			<-g.entered
			close(g.release)
			if r := <-third; r.status != http.StatusOK {
				t.Errorf("the waiting request: HTTP %d %.300s", r.status, r.body)
			}
		}
		for i := 0; i < 2; i++ {
			if r := <-held; r.status != http.StatusOK {
				t.Errorf("held request: HTTP %d %.300s", r.status, r.body)
			}
		}
	}
}

// rawConn is a client connection spoken to byte by byte.
type rawConn struct {
	net.Conn
	r *bufio.Reader
}

func dial(t *testing.T, addr string) *rawConn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(patience))
	return &rawConn{Conn: c, r: bufio.NewReader(c)}
}

func rawRequest(body string) string {
	return fmt.Sprintf("POST /retrieve HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
}

// roundTrip sends one request on c and reads its answer.
func (c *rawConn) roundTrip(t *testing.T, body string) *http.Response {
	t.Helper()
	if _, err := io.WriteString(c, rawRequest(body)); err != nil {
		t.Fatal(err)
	}
	return c.read(t)
}

func (c *rawConn) read(t *testing.T) *http.Response {
	t.Helper()
	resp, err := http.ReadResponse(c.r, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return resp
}

// closedByServer reports whether the server closes c: reading ends in EOF
// or a reset rather than in the test's own deadline. It returns the bytes
// read before the end.
func (c *rawConn) closedByServer() ([]byte, bool) {
	b, err := io.ReadAll(c.r)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return b, false
	}
	return b, true
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(patience); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("gave up waiting for %s", what)
		}
	}
}

func TestConnectionCap(t *testing.T) {
	ix, _ := Build(tinyCorpus())
	lim := DefaultLimits()
	lim.MaxConns = 2
	s, addr := serve(t, ix, lim, "")
	a, b := dial(t, addr), dial(t, addr)
	for _, c := range []*rawConn{a, b} {
		if r := c.roundTrip(t, `{"queries": ["a"]}`); r.StatusCode != http.StatusOK {
			t.Fatalf("HTTP %d", r.StatusCode)
		}
	}
	if n := s.Stats().OpenConns; n != 2 {
		t.Errorf("open connections: %d, want 2", n)
	}
	third := dial(t, addr)
	resp := third.roundTrip(t, `{"queries": ["a"]}`)
	var e apiError
	json.NewDecoder(resp.Body).Decode(&e)
	wantRefusal(t, "third connection", reply{status: resp.StatusCode, err: e}, http.StatusServiceUnavailable, "--max-conns")
	if !resp.Close || resp.Header.Get("Retry-After") == "" {
		t.Errorf("the refusal: close %v, Retry-After %q; want Connection: close and a Retry-After", resp.Close, resp.Header.Get("Retry-After"))
	}
	if _, closed := third.closedByServer(); !closed {
		t.Error("the refused connection stayed open")
	}
	// a connection that closes gives its place back
	a.Close()
	waitFor(t, "the closed connection's place", func() bool { return s.Stats().OpenConns == 1 })
	if r := dial(t, addr).roundTrip(t, `{"queries": ["a"]}`); r.StatusCode != http.StatusOK {
		t.Errorf("after a close: HTTP %d", r.StatusCode)
	}
}

// A client's many calls at once stay within a server whose --max-conns is
// the client's own bound: they wait for a connection, none is refused.
func TestClientStaysWithinTheConnectionCap(t *testing.T) {
	ix, _ := Build(tinyCorpus())
	lim := DefaultLimits()
	lim.MaxConns = clientConns
	_, addr := serve(t, ix, lim, "")
	c, err := NewClient("http://"+addr+"/retrieve", ClientOptions{Retries: -1, Timeout: patience})
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 6*clientConns)
	for i := 0; i < cap(errs); i++ {
		go func() {
			_, err := c.Retrieve([]string{"c"}, 1)
			errs <- err
		}()
	}
	for i := 0; i < cap(errs); i++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

func TestStalledPeersAreDropped(t *testing.T) {
	ix, err := Build(bulkyCorpus(200, 2000))
	if err != nil {
		t.Fatal(err)
	}
	lim := DefaultLimits()
	lim.ReadHeaderTimeout = 100 * time.Millisecond
	lim.ReadTimeout = 200 * time.Millisecond
	lim.WriteTimeout = 200 * time.Millisecond
	lim.IdleTimeout = 200 * time.Millisecond
	lim.MaxResponseBytes = 64 << 20
	s, addr := serve(t, ix, lim, "")

	t.Run("headers", func(t *testing.T) {
		c := dial(t, addr)
		io.WriteString(c, "POST /retrieve HTTP/1.1\r\nHost: x\r\n") // and nothing more
		if _, closed := c.closedByServer(); !closed {
			t.Error("a client stalling its headers was kept")
		}
	})
	t.Run("body", func(t *testing.T) {
		c := dial(t, addr)
		io.WriteString(c, "POST /retrieve HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{\"queries\": [")
		resp := c.read(t)
		var e apiError
		json.NewDecoder(resp.Body).Decode(&e)
		wantRefusal(t, "stalled upload", reply{status: resp.StatusCode, err: e}, http.StatusRequestTimeout, "--read-timeout")
		if _, closed := c.closedByServer(); !closed {
			t.Error("a stalled upload was kept")
		}
	})
	t.Run("idle", func(t *testing.T) {
		c := dial(t, addr)
		if r := c.roundTrip(t, `{"queries": ["common"]}`); r.StatusCode != http.StatusOK {
			t.Fatalf("HTTP %d", r.StatusCode)
		}
		if _, closed := c.closedByServer(); !closed {
			t.Error("an idle kept-alive connection was kept")
		}
	})
	t.Run("reader", func(t *testing.T) {
		// a client that asks for ~32 MB and reads none of it: more than
		// the kernel buffers hold (the server's send buffer grows to 4 MiB
		// on Linux by default; the client's receive buffer is pinned small)
		d := net.Dialer{Control: smallReceiveBuffer}
		nc, err := d.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		c := &rawConn{Conn: nc, r: bufio.NewReader(nc)}
		io.WriteString(c, rawRequest(`{"queries": `+queries(160, "common")+`, "topk": 100}`))
		waitFor(t, "the server to drop a client that does not read", func() bool { return s.Stats().OpenConns == 0 })
		c.SetDeadline(time.Now().Add(patience))
		resp, err := http.ReadResponse(c.r, nil)
		if err != nil {
			t.Fatal(err)
		}
		n, err := io.Copy(io.Discard, resp.Body)
		if err == nil || n >= resp.ContentLength {
			t.Errorf("read %d of %d bytes (%v): the whole answer reached a client that was dropped", n, resp.ContentLength, err)
		}
	})
	waitFor(t, "every connection to close", func() bool { return s.Stats().OpenConns == 0 })
}

func TestBearerToken(t *testing.T) {
	ix, _ := Build(tinyCorpus())
	_, addr := serve(t, ix, DefaultLimits(), "s3cret-token")
	body := `{"queries": ["a"]}`
	for _, auth := range []string{"", "Bearer", "Bearer wrong", "Bearer s3cret-toke", "Bearer s3cret-token2", "Basic s3cret-token", "s3cret-token"} {
		r := post(t, addr, body, "Authorization", auth)
		if r.status != http.StatusUnauthorized || !strings.Contains(r.err.Error, "Bearer") || r.header.Get("WWW-Authenticate") == "" {
			t.Errorf("Authorization %q: HTTP %d %s", auth, r.status, r.body)
		}
	}
	for _, auth := range []string{"Bearer s3cret-token", "bearer s3cret-token"} {
		if r := post(t, addr, body, "Authorization", auth); r.status != http.StatusOK {
			t.Errorf("Authorization %q: HTTP %d %s", auth, r.status, r.body)
		}
	}
	c, err := NewClient("http://"+addr+"/retrieve", ClientOptions{Token: "s3cret-token"})
	if err != nil {
		t.Fatal(err)
	}
	if hits, err := c.Retrieve([]string{"c"}, 1); err != nil || hits[0][0].Document.ID != "d1" {
		t.Errorf("client with the token: %v %v", hits, err)
	}
	c, _ = NewClient("http://"+addr+"/retrieve", ClientOptions{Retries: 3, Backoff: time.Hour})
	if _, err := c.Retrieve([]string{"c"}, 1); err == nil || !strings.Contains(err.Error(), "401") || !strings.Contains(err.Error(), "token_file") {
		t.Errorf("client without the token: %v", err) // at once: a 401 is not retried
	}
}

// smallReceiveBuffer pins a socket's receive buffer to the kernel's least,
// before it connects (so the window stays small).
func smallReceiveBuffer(_, _ string, rc syscall.RawConn) error {
	var serr error
	err := rc.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 1024)
	})
	if err != nil {
		return err
	}
	return serr
}

func TestTokenSourcesAndExposure(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good", "  s3cret-token\n")
	if tok, err := ReadTokenFile(good); err != nil || tok != "s3cret-token" {
		t.Errorf("ReadTokenFile: %q %v", tok, err)
	}
	for name, content := range map[string]string{
		"empty": "\n", "spaced": "two words", "control": "a\x00b", "huge": strings.Repeat("x", maxTokenBytes+1),
	} {
		if tok, err := ReadTokenFile(write(name, content)); err == nil || !strings.Contains(err.Error(), name) && !strings.Contains(err.Error(), dir) {
			t.Errorf("%s: token %q, error %v; want an error naming the file", name, tok, err)
		}
	}
	if w := TokenFileWarning(good); w != "" {
		t.Errorf("a 0600 token file: %q", w)
	}
	os.Chmod(good, 0o644)
	if w := TokenFileWarning(good); !strings.Contains(w, "chmod 600") {
		t.Errorf("a 0644 token file: %q", w)
	}
	if _, err := ReadTokenFile(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing token file was accepted")
	}

	t.Setenv(TokenEnv, "from-env")
	if tok, from, err := ServerToken(""); err != nil || tok != "from-env" || from != "$"+TokenEnv {
		t.Errorf("from the environment: %q %q %v", tok, from, err)
	}
	if _, _, err := ServerToken(good); err == nil || !strings.Contains(err.Error(), "--token-file") {
		t.Errorf("file and environment both: %v", err)
	}
	os.Unsetenv(TokenEnv)
	if tok, from, err := ServerToken(good); err != nil || tok != "s3cret-token" || from != good {
		t.Errorf("from the file: %q %q %v", tok, from, err)
	}
	if tok, _, err := ServerToken(""); err != nil || tok != "" {
		t.Errorf("none: %q %v", tok, err)
	}

	for _, c := range []struct {
		addr  string
		token bool
		warn  bool
	}{
		{"127.0.0.1:8000", false, false}, {"[::1]:8000", false, false},
		{"0.0.0.0:8000", false, true}, {"[::]:8000", false, true}, {"10.1.2.3:8000", false, true},
		{"0.0.0.0:8000", true, false},
	} {
		a, err := net.ResolveTCPAddr("tcp", c.addr)
		if err != nil {
			t.Fatal(err)
		}
		w := ExposureWarning(a, c.token)
		if (w != "") != c.warn || c.warn && !strings.Contains(w, "--token-file") {
			t.Errorf("%s, token %v: warning %q", c.addr, c.token, w)
		}
	}
}

func TestLimitsValidate(t *testing.T) {
	if err := DefaultLimits().Validate(); err != nil {
		t.Fatal(err)
	}
	breaks := map[string]func(*Limits){
		"MaxBodyBytes":      func(l *Limits) { l.MaxBodyBytes = 0 },
		"MaxQueries":        func(l *Limits) { l.MaxQueries = -1 },
		"MaxTopK":           func(l *Limits) { l.MaxTopK = MaxTopK + 1 },
		"MaxResponseBytes":  func(l *Limits) { l.MaxResponseBytes = 1 << 40 },
		"MaxInFlight":       func(l *Limits) { l.MaxInFlight = 0 },
		"QueueTimeout":      func(l *Limits) { l.QueueTimeout = 0 },
		"MaxConns":          func(l *Limits) { l.MaxConns = 0 },
		"ReadHeaderTimeout": func(l *Limits) { l.ReadHeaderTimeout = -time.Second },
		"ReadTimeout":       func(l *Limits) { l.ReadTimeout = 0 },
		"WriteTimeout":      func(l *Limits) { l.WriteTimeout = 0 },
		"IdleTimeout":       func(l *Limits) { l.IdleTimeout = 0 },
	}
	for field, flag := range Flag {
		l := DefaultLimits()
		breaks[field](&l)
		if err := l.Validate(); err == nil || !strings.Contains(err.Error(), flag) {
			t.Errorf("%s: %v, want an error naming %s", field, err, flag)
		}
	}
	if _, err := NewServer(nil, Limits{}, ""); err == nil {
		t.Error("NewServer took zero limits")
	}
}
