package dist

// peers.go — what the ranks of a group know of each other, and what a rank
// says when it loses one. When the group forms, every rank tells the others
// who it is (rank, node, host, build, config, checkpoint: agree.go
// compares them) and where it answers a probe: a TCP listener of its own,
// on the address it reaches the store's host from, that answers any
// connection with one line naming the rank and closes it.
//
// When a collective fails — a peer died, a link went down, the timeout
// passed — c10d's error says only that this rank's operation failed. The rank
// then probes every other rank at once (for at most probeTimeout), and its
// error names what it lost: the ranks whose process is gone (the connection
// is refused), and the hosts it can no longer reach (no answer: a cut link, a
// host that went down), with the step. Every rank does this, so every rank's
// last line names the peer or host it lost. A rank that failed leaves the
// group at once (Gloo's collectives with it fail now rather than at the
// timeout; the others learn it through watch.go) but answers probes for
// probeTimeout more before it exits, so the ranks that fail after it name
// what they lost, not a rank that was merely quicker to stop.
//
// What it is not: a heartbeat or a second transport. The probe runs only
// after a collective failed, and only to word the error; the ranks never
// exchange data through it (watch.go's connections carry departures only).

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"troupe/torch"
)

// peer is what a rank tells the others when the group forms.
type peer struct {
	Rank   int    `json:"rank"`
	Node   int    `json:"node"`   // GROUP_RANK, -1 when not told
	Host   string `json:"host"`   // the host's name
	Addr   string `json:"addr"`   // the address it reaches the store's host from
	Probe  string `json:"probe"`  // address:port of its probe listener
	Build  string `json:"build"`  // troupe, Go and libtorch versions
	Exe    string `json:"exe"`    // SHA-256 of the executable (hex, 16 digits)
	Shim   string `json:"shim"`   // SHA-256 of libtshim.so (hex, 16 digits)
	Config string `json:"config"` // SHA-256 of the resolved config
	Resume string `json:"resume"` // the checkpoint it continues from, "" for a fresh start
}

// where names a peer for messages: "rank 2 on host a (10.0.0.2, node 1)".
func (p peer) where() string {
	return fmt.Sprintf("rank %d on %s", p.Rank, p.hostName())
}

// hostName names a peer's host: "host a (10.0.0.2, node 1)".
func (p peer) hostName() string {
	var extra []string
	if p.Addr != "" && p.Addr != p.Host {
		extra = append(extra, p.Addr)
	}
	if p.Node >= 0 {
		extra = append(extra, fmt.Sprintf("node %d", p.Node))
	}
	if len(extra) == 0 {
		return "host " + p.Host
	}
	return fmt.Sprintf("host %s (%s)", p.Host, strings.Join(extra, ", "))
}

// probeTimeout bounds the probe of the other ranks after a failure, and is
// how long a rank that failed goes on answering theirs.
const probeTimeout = 2 * time.Second

// listenForProbes starts this rank's probe listener on addr (all addresses
// when empty: the others then dial the host's name) and returns where the
// others reach it, and a function that stops it.
func listenForProbes(addr string, rank int) (string, func(), error) {
	l, err := net.Listen("tcp", net.JoinHostPort(addr, "0"))
	if err != nil {
		return "", nil, fmt.Errorf("data parallel: rank %d: listening for the other ranks' probes on %q: %w", rank, addr, err)
	}
	at := l.Addr().String()
	if addr == "" {
		host, _ := os.Hostname()
		at = net.JoinHostPort(host, strconv.Itoa(l.Addr().(*net.TCPAddr).Port))
	}
	hello := []byte("troupe rank " + strconv.Itoa(rank) + "\n")
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return // closed
			}
			c.SetWriteDeadline(time.Now().Add(probeTimeout))
			c.Write(hello)
			c.Close()
		}
	}()
	return at, func() { l.Close() }, nil
}

// probeResult is what a probe of one rank found.
type probeResult int

const (
	peerAnswers     probeResult = iota
	peerGone                    // the host answered, the process did not: it ended
	peerUnreachable             // no answer within probeTimeout
)

// probe asks one rank's listener who it is.
func probe(p peer) probeResult {
	c, err := net.DialTimeout("tcp", p.Probe, probeTimeout)
	if err != nil {
		if errors.Is(err, syscall.ECONNREFUSED) {
			return peerGone
		}
		return peerUnreachable
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(probeTimeout))
	line, err := bufio.NewReader(c).ReadString('\n')
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		return peerUnreachable // connected, but nothing answers
	case err != nil || line != "troupe rank "+strconv.Itoa(p.Rank)+"\n":
		return peerGone // another process has the port now
	}
	return peerAnswers
}

// lostPeers probes every other rank at once and says what this rank lost:
// "lost host b (10.0.0.2, node 1): ranks 2, 3 do not answer", "rank 3 on
// host b (…) has stopped", joined by "; ".
func (g *Group) lostPeers() string {
	results := make([]probeResult, len(g.peers))
	var wg sync.WaitGroup
	for i, p := range g.peers {
		if p.Rank == g.launch.Rank {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = probe(p)
		}()
	}
	wg.Wait()
	var gone []string
	unreachable := map[string][]int{} // host name → ranks
	var hosts []string
	for i, p := range g.peers {
		switch results[i] {
		case peerGone:
			gone = append(gone, p.where())
		case peerUnreachable:
			h := p.hostName()
			if _, ok := unreachable[h]; !ok {
				hosts = append(hosts, h)
			}
			unreachable[h] = append(unreachable[h], p.Rank)
		}
	}
	sort.Strings(hosts)
	var parts []string
	for _, h := range hosts {
		verb := "no longer answer"
		if len(unreachable[h]) == 1 {
			verb += "s"
		}
		parts = append(parts, fmt.Sprintf("lost %s: %s %s", h, rankList(unreachable[h]), verb))
	}
	switch len(gone) {
	case 0:
	case 1:
		parts = append(parts, gone[0]+" has stopped")
	default:
		parts = append(parts, strings.Join(gone, ", ")+" have stopped")
	}
	if len(parts) == 0 {
		return "every other rank still answers (one stalled past the timeout, or the network dropped this collective)"
	}
	return strings.Join(parts, "; ")
}

// Explain words a failed collective in step (counted from 1) as one line
// naming what this rank lost; a collective refused because a rank left
// names that rank; any other error is returned as it is.
func (g *Group) Explain(err error, step int) error {
	if g == nil {
		return err
	}
	var lost *LostError
	if errors.As(err, &lost) {
		return fmt.Errorf("data parallel: %s stopped in step %d: %s", g.launch.Where(), step, lost)
	}
	var te *torch.Error
	if len(g.peers) == 0 || !errors.As(err, &te) || te.Op != "dist" {
		return err
	}
	g.w.leave(err) // the others need not wait for this rank's line to hear of it
	what := g.lostPeers()
	g.failed = true
	return fmt.Errorf("data parallel: %s stopped in step %d: %s: %w", g.launch.Where(), step, what, err)
}
