// listen.go — running a Server on a listener: the HTTP server's timeouts,
// the cap on open connections, and a graceful stop.
//
// What it is: Serve wraps the listener so that at most --max-conns
// connections are open at once; the one past the cap is answered at once
// with a 503 (Connection: close, Retry-After) naming the flag and closed,
// so a client learns why instead of waiting in the kernel's backlog: the
// refusal reads the request's head, answers, and reads the rest of the
// request for what remains of a second (closing with it unread would reset
// the connection and could lose the answer). At most --max-conns refusals
// run at once; past that a connection is closed without a word. --read-header-timeout and
// --read-timeout drop a client that stalls its headers or its body (a body
// cut by the second gets a 408), --idle-timeout a kept-alive connection
// with no request, and --write-timeout (server.go) a client that stops
// reading its answer.
//
// What it deliberately is not: a bound on the time spent answering. That is
// bounded by the work a request may ask (queries × topk) and MaxInFlight;
// an answer whose client went away stops at its next batch.
package retrieval

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// refusalLinger is how long a refused connection's request is drained.
const refusalLinger = time.Second

// Serve answers on ln until ctx ends, then stops taking connections and
// waits up to 5 s for the requests being answered; it closes what is left
// then, and fails only if an answer was cut off.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: s.lim.ReadHeaderTimeout,
		ReadTimeout:       s.lim.ReadTimeout,
		IdleTimeout:       s.lim.IdleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		// WriteTimeout stays 0: Go's would run from the end of the headers,
		// counting the wait for a slot and the retrieval as writing; the
		// handler sets its own deadline for the writes instead
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(s.capped(ln)) }()
	select {
	case err := <-done:
		return fmt.Errorf("retrieval: serving: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := srv.Shutdown(sctx)
	if err == nil || errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	// past the grace period: what still holds on is either an answer being
	// built, or a connection a client opened and sent nothing on (Shutdown
	// waits 5 s for those too); close them all, and report only the first
	inFlight := s.Stats().InFlight
	srv.Close()
	if inFlight > 0 {
		return fmt.Errorf("retrieval: shutting down: %d answers were still being built after 5 s and were cut off", inFlight)
	}
	return nil
}

// capListener hands out at most MaxConns connections at once.
type capListener struct {
	net.Listener
	s        *Server
	refusing chan struct{} // one per refusal being written
	refusal  []byte        // the 503 response
}

func (s *Server) capped(ln net.Listener) net.Listener {
	msg := fmt.Sprintf("busy: %d connections are open, the most this server keeps; retry later, reuse connections, or raise %s",
		s.lim.MaxConns, Flag["MaxConns"])
	body := errorBody("MaxConns", msg)
	head := strings.Join([]string{
		"HTTP/1.1 503 Service Unavailable",
		"Content-Type: application/json",
		fmt.Sprintf("Content-Length: %d", len(body)),
		"Retry-After: 1",
		"Connection: close",
	}, "\r\n") + "\r\n\r\n"
	return &capListener{Listener: ln, s: s, refusing: make(chan struct{}, s.lim.MaxConns), refusal: append([]byte(head), body...)}
}

func (l *capListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.s.conns.Add(1) <= int64(l.s.lim.MaxConns) {
			return &countedConn{Conn: c, s: l.s}, nil
		}
		l.s.conns.Add(-1)
		l.refuse(c)
	}
}

// refuse answers c with the 503 and closes it, off the accept loop.
func (l *capListener) refuse(c net.Conn) {
	select {
	case l.refusing <- struct{}{}:
	default:
		c.Close() // refusals are many already: no word
		return
	}
	go func() {
		defer func() { <-l.refusing }()
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(refusalLinger))
		// answer after the request's head, as HTTP goes: a client that
		// pools connections takes bytes on a connection it has not used
		// yet for a broken one, not for an answer
		if !readHead(c) {
			return
		}
		if _, err := c.Write(l.refusal); err != nil {
			return
		}
		if tc, ok := c.(interface{ CloseWrite() error }); ok {
			_ = tc.CloseWrite()
		}
		// closing with the request unread would reset the connection and
		// could lose the answer; read it (bounded) until the client closes
		_, _ = io.Copy(io.Discard, io.LimitReader(c, 1<<20))
	}()
}

// readHead reads c up to the blank line that ends a request's head, within
// 8 KiB; false when it does not come.
func readHead(c net.Conn) bool {
	buf := make([]byte, 0, 8<<10)
	for len(buf) < cap(buf) {
		n, err := c.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if bytes.Contains(buf, []byte("\r\n\r\n")) {
			return true
		}
		if err != nil {
			return false
		}
	}
	return false
}

// countedConn gives its place back once, when closed.
type countedConn struct {
	net.Conn
	s    *Server
	once sync.Once
}

func (c *countedConn) Close() error {
	c.once.Do(func() { c.s.conns.Add(-1) })
	return c.Conn.Close()
}
