package dist

// watch.go — a rank that leaves the group ends every rank's wait for it,
// on every backend. Gloo notices a dead peer by itself (its connections
// close, the collective throws); NCCL does not: over NVLink, PCIe or
// shared memory its kernels spin on flags the dead rank will never write,
// and the host's wait ends only at TROUPE_DIST_TIMEOUT (30 minutes by
// default) unless a launcher kills the survivors. So the ranks watch each
// other themselves, over the connections they made to rank 0 when they met
// (hello.go), kept open for the group's life:
//
//   - a rank that finishes says "bye"; one that fails says "failed" with
//     its error (Group.Leave); one that dies says nothing, but its
//     connection closes with the process (kill -9 and out-of-memory kills
//     included), and one on a lost host stops answering TCP keep-alives
//     (within keepAliveIdle + keepAliveCount × keepAliveInterval);
//   - rank 0 passes every departure on to the others ("lost");
//   - a rank that learns of a departure refuses every later collective at
//     once (it could never complete), and if it is inside one it waits
//     leaveGrace for the backend to fail by itself — Gloo does, with its
//     own error, which the run words (peers.go) — then ends the process
//     with one line naming the rank that left and why (Options.Fatal).
//
// So a dead peer ends every rank within leaveGrace (plus the keep-alive
// time for a lost host) under NCCL as under Gloo. Ending the process,
// rather than aborting the communicator, is deliberate: the rank has no
// collective left it can complete, its newest checkpoint is whole (written
// atomically), and exit cannot hang where a communicator's teardown with
// work in flight can.
//
// What it is not: a heartbeat of the data plane. A rank that is alive but
// stalled (never reaching the collective) is the timeout's to end.

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"
)

// leaveGrace is how long a rank inside a collective waits, once a rank has
// left, for the backend to fail by itself before ending the process.
const leaveGrace = 10 * time.Second

// Keep-alives on the watch connections: a host that stops answering is
// lost within about 35 s.
const (
	keepAliveIdle     = 15 * time.Second
	keepAliveInterval = 5 * time.Second
	keepAliveCount    = 4
)

// notice is one line on a watch connection.
type notice struct {
	Kind string `json:"kind"`           // "bye", "failed", "lost"
	Rank int    `json:"rank,omitempty"` // lost: the rank that left
	Why  string `json:"why,omitempty"`  // failed: its error; lost: how it left
}

// LostError is a collective refused, or a wait ended, because a rank left
// the group.
type LostError struct {
	Rank int    // the rank that left
	Who  string // it, for messages ("rank 1 on host b (10.0.0.2)")
	How  string // "failed: …", "ended without a word …", "finished"
}

func (e *LostError) Error() string { return e.Who + " " + e.How }

// watch is this rank's end of the failure channel.
type watch struct {
	rank  int
	where string // this rank, for messages
	fatal func(error)
	grace time.Duration

	mu      sync.Mutex
	names   map[int]string   // the ranks' names for messages, once known (setNames)
	conns   map[int]net.Conn // rank 0: every other rank's; others: rank 0's
	leaving bool             // this rank is done: departures no longer matter
	gone    *LostError       // the first rank that left
	seq     uint64           // collectives entered
	inside  uint64           // the collective in flight (its seq), 0 when none
}

// newWatch starts reading the connections; fatal ends the process.
func newWatch(rank int, where string, conns map[int]net.Conn, fatal func(error)) *watch {
	w := &watch{rank: rank, where: where, fatal: fatal, grace: leaveGrace, conns: conns}
	for r, c := range conns {
		if tc, ok := c.(*net.TCPConn); ok {
			tc.SetKeepAliveConfig(net.KeepAliveConfig{Enable: true, Idle: keepAliveIdle, Interval: keepAliveInterval, Count: keepAliveCount})
		}
		go w.read(r, c)
	}
	return w
}

// read follows one connection until it closes.
func (w *watch) read(r int, c net.Conn) {
	sc := bufio.NewScanner(c)
	sc.Buffer(make([]byte, 4096), 1<<20)
	for sc.Scan() {
		var n notice
		if json.Unmarshal(sc.Bytes(), &n) != nil {
			continue
		}
		switch n.Kind {
		case "bye":
			w.departed(r, "finished")
			return
		case "failed":
			w.departed(r, "failed: "+n.Why)
			return
		case "lost": // from rank 0: another rank left
			w.departed(n.Rank, n.Why)
		}
	}
	how := "ended without a word (its process is gone: killed, out of memory, or a crash)"
	var ne net.Error
	if err := sc.Err(); errors.As(err, &ne) && ne.Timeout() || err != nil && strings.Contains(err.Error(), "timed out") {
		how = "no longer answers (its host or the link to it is down)"
	}
	w.departed(r, how)
}

// departed records that rank r left the group, how, and acts on it.
func (w *watch) departed(r int, how string) {
	w.mu.Lock()
	if w.leaving {
		w.mu.Unlock()
		return
	}
	who, ok := w.names[r]
	if !ok {
		who = fmt.Sprintf("rank %d", r)
	}
	lost := &LostError{Rank: r, Who: who, How: how}
	first := w.gone == nil
	if first {
		w.gone = lost
	}
	inside := w.inside
	var relay []net.Conn
	if w.rank == 0 {
		for q, c := range w.conns {
			if q != r {
				relay = append(relay, c)
			}
		}
	}
	w.mu.Unlock()
	for _, c := range relay {
		go write(c, notice{Kind: "lost", Rank: r, Why: how})
	}
	if !first || inside == 0 {
		return // a later collective is refused at once (enter)
	}
	time.AfterFunc(w.grace, func() {
		w.mu.Lock()
		still := !w.leaving && w.inside == inside
		w.mu.Unlock()
		if still {
			w.fatal(fmt.Errorf("data parallel: %s stopped waiting in a collective: %s; ending this rank rather than waiting for a collective that cannot complete", w.where, lost))
		}
	})
}

// setNames names the ranks in later messages.
func (w *watch) setNames(names map[int]string) {
	if w == nil {
		return
	}
	w.mu.Lock()
	w.names = names
	w.mu.Unlock()
}

// enter admits a collective unless a rank has left; end marks it done.
func (w *watch) enter() (end func(), err error) {
	if w == nil {
		return func() {}, nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.gone != nil && !w.leaving {
		return nil, w.gone
	}
	w.seq++
	me := w.seq
	w.inside = me
	return func() {
		w.mu.Lock()
		if w.inside == me {
			w.inside = 0
		}
		w.mu.Unlock()
	}, nil
}

// leave says how this rank ends and closes the connections; later
// departures are ignored.
func (w *watch) leave(err error) {
	if w == nil {
		return
	}
	w.mu.Lock()
	if w.leaving {
		w.mu.Unlock()
		return
	}
	w.leaving = true
	conns := w.conns
	w.mu.Unlock()
	n := notice{Kind: "bye"}
	if err != nil {
		n = notice{Kind: "failed", Why: firstLine(err.Error())}
	}
	if w.rank == 0 && err != nil {
		n = notice{Kind: "lost", Rank: 0, Why: "failed: " + n.Why}
	}
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			write(c, n)
			c.Close()
		}()
	}
	wg.Wait()
}

// write sends one notice, giving up after a moment (a lost host never
// takes it).
func write(c net.Conn, n notice) {
	b, _ := json.Marshal(n)
	c.SetWriteDeadline(time.Now().Add(2 * time.Second))
	c.Write(append(b, '\n'))
}

// firstLine is s up to its first newline.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
