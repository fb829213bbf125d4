package dist

// hello.go — how the ranks meet before c10d does: on the store's port,
// rank 0 listens first (as a plain TCP server of this package), every
// other rank connects and says who it is, and rank 0 answers each once all
// have arrived — or says why the group cannot form. Only then does rank 0
// hand the port to c10d's TCPStore and every rank join the process group,
// which now cannot wait for a rank that is not coming.
//
// c10d alone could not say what went wrong: another program on the port
// left the other ranks waiting on it forever, an address that does not
// resolve was retried for the whole timeout, a WORLD_SIZE that differs
// between ranks surfaced as a raw Gloo error and a missing rank as "Socket
// Timeout" after twice the timeout. Here each ends within the timeout with
// one line on every rank naming the cause:
//
//	the port held by another program   rank 0 cannot listen on it; the others get no greeting
//	MASTER_ADDR does not resolve        refused at once (a temporary DNS failure is retried)
//	WORLD_SIZE differs                  rank 0 refuses the first rank whose WORLD_SIZE is not its own
//	two processes with one RANK         the same
//	a rank missing                      rank 0 names every rank that did not arrive by the timeout
//	rank 0 missing                      nothing answers on the port by the timeout
//	two ranks of a node on one GPU      the same PCI bus id from one host
//
// Rank 0 also sees where each rank connects from, which settles two things
// the ranks could not know alone: which ranks share a node (their count
// sets each rank's CPU threads when LOCAL_WORLD_SIZE is not set), and the
// address a rank offers the others. A rank's address is the one its
// connection to rank 0 leaves from — except when that is a loopback
// address (a host name that /etc/hosts maps to 127.0.1.1) and the group
// spans hosts: then rank 0 gives its own node's ranks the address its
// connections from the other hosts arrived at, so a loopback address is
// never offered to another host.
//
// The connections stay open for the group's life, as its failure channel
// (watch.go).
//
// What it is not: the c10d rendezvous (join.go), or the agreement on
// builds and configs, which needs the group (agree.go).

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// greeting is the first line rank 0 sends on every connection.
const greeting = "troupe rendezvous 1\n"

// noGreeting bounds the wait for rank 0's greeting once connected: past it
// the port's listener is another program. (A variable for the tests.)
var noGreeting = 10 * time.Second

// latecomers is how long rank 0 goes on answering ranks after refusing the
// group, so that they print its reason instead of timing out.
const latecomers = 2 * time.Second

// hello is what a rank tells rank 0.
type hello struct {
	Rank      int    `json:"rank"`
	World     int    `json:"world"`
	Local     int    `json:"local"`
	Node      int    `json:"node"`
	Host      string `json:"host"`
	Device    string `json:"device,omitempty"` // its CUDA device's PCI bus id, "" on CPU
	StorePort int    `json:"store_port"`
	Restart   int    `json:"restart"` // TORCHELASTIC_RESTART_COUNT
}

// verdict is rank 0's answer to a hello.
type verdict struct {
	Error      string `json:"error,omitempty"`       // why the group cannot form; "" when it can
	LocalWorld int    `json:"local_world,omitempty"` // the ranks on this rank's node
	Addr       string `json:"addr,omitempty"`        // the address to offer the others, when not the connection's own
	Restart    int    `json:"restart,omitempty"`     // the largest restart count of the group's ranks
}

// arrival is a rank that said hello to rank 0.
type arrival struct {
	h    hello
	conn net.Conn
	ip   net.IP // where it connected from
}

// where names an arriving rank for messages.
func (a arrival) where() string {
	return fmt.Sprintf("rank %d on host %s (%s)", a.h.Rank, a.h.Host, a.ip)
}

// met is what the hello settled for this rank.
type met struct {
	conns      map[int]net.Conn // rank 0: every other rank's connection; others: rank 0's at key 0
	addr       string           // the address this rank offers the others ("" when unknown)
	localWorld int              // ranks on this node (this one included)
	restart    int              // the largest restart count in the group
}

// isLocalIP says whether ip is an address of this host.
func isLocalIP(ip net.IP) bool {
	if ip.IsLoopback() {
		return true
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
			return true
		}
	}
	return false
}

// serveHello is rank 0's side: it listens on the store's port until every
// other rank has said hello (or deadline), and answers them.
func serveHello(l *Launch, me hello, deadline time.Time, local func(net.IP) bool) (*met, error) {
	ln, err := net.Listen("tcp", ":"+strconv.Itoa(l.StorePort))
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return nil, fmt.Errorf("%s: the store's port %d is in use on this host by another program (%s); choose a free port for every rank (%s)", l.Where(), l.StorePort, l.storeWhy, portHint(l))
		}
		return nil, fmt.Errorf("%s: listening on the store's port %d (%s): %w", l.Where(), l.StorePort, l.storeWhy, err)
	}
	defer ln.Close()
	arrived := make(chan arrival)
	go acceptHellos(ln, arrived)
	byRank := map[int]arrival{}
	refuse := func(why string) (*met, error) {
		answer := verdict{Error: why}
		for _, a := range byRank {
			send(a.conn, answer)
			a.conn.Close()
		}
		// ranks arriving now learn why too, for a moment within the timeout
		end := time.After(min(latecomers, time.Until(deadline)))
		for {
			select {
			case a := <-arrived:
				send(a.conn, answer)
				a.conn.Close()
			case <-end:
				return nil, errors.New(why)
			}
		}
	}
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	for len(byRank) < l.World-1 {
		select {
		case a := <-arrived:
			if why := admit(me, a, byRank, local); why != "" {
				send(a.conn, verdict{Error: why})
				a.conn.Close()
				return refuse(why)
			}
			byRank[a.h.Rank] = a
		case <-timer.C:
			return refuse(missing(l, byRank))
		}
	}
	// the port is c10d's from now on: closed before the answers, so that no
	// rank's c10d client, connecting as soon as it has its answer, meets
	// this listener instead of the TCPStore (c10d retries a refused
	// connection, not one that was accepted and reset)
	ln.Close()
	return settle(me, byRank, local), nil
}

// acceptHellos accepts connections until the listener closes and sends on
// every one that says a hello; others (port scanners, health checks) are
// dropped.
func acceptHellos(ln net.Listener, arrived chan<- arrival) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return // closed
		}
		go func() {
			c.SetDeadline(time.Now().Add(noGreeting))
			if _, err := c.Write([]byte(greeting)); err != nil {
				c.Close()
				return
			}
			line, err := bufio.NewReader(c).ReadString('\n')
			var h hello
			if err != nil || json.Unmarshal([]byte(line), &h) != nil || h.World == 0 {
				c.Close()
				return
			}
			c.SetDeadline(time.Time{})
			ip := net.IP(nil)
			if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
				ip = a.IP
			}
			select {
			case arrived <- arrival{h: h, conn: c, ip: ip}:
			case <-time.After(time.Minute): // rank 0 has stopped listening
				c.Close()
			}
		}()
	}
}

// admit checks an arriving rank against rank 0 and those already here;
// it returns why the group cannot form, or "".
func admit(me hello, a arrival, byRank map[int]arrival, local func(net.IP) bool) string {
	h := a.h
	switch {
	case h.World != me.World:
		return fmt.Sprintf("%s has WORLD_SIZE=%d but rank 0 on host %s has WORLD_SIZE=%d; start every rank with the same WORLD_SIZE", a.where(), h.World, me.Host, me.World)
	case h.StorePort != me.StorePort:
		return fmt.Sprintf("%s looks for the store on port %d, rank 0 on host %s listens on %d; set MASTER_PORT (and %s) the same on every rank", a.where(), h.StorePort, me.Host, me.StorePort, StorePortEnv)
	case h.Rank == 0:
		return fmt.Sprintf("%s also has RANK=0; give every rank its own RANK, 0 … %d", a.where(), me.World-1)
	case h.Rank < 0 || h.Rank >= me.World:
		return fmt.Sprintf("%s has RANK=%d outside 0 … %d", a.where(), h.Rank, me.World-1)
	}
	if b, ok := byRank[h.Rank]; ok {
		return fmt.Sprintf("%s and %s both have RANK=%d; give every rank its own RANK, 0 … %d", b.where(), a.where(), h.Rank, me.World-1)
	}
	if h.Device == "" {
		return ""
	}
	same := func(ip net.IP) bool { return ip.Equal(a.ip) || (local(ip) && local(a.ip)) }
	if local(a.ip) && h.Device == me.Device {
		return fmt.Sprintf("%s and rank 0 on host %s both use the GPU at PCI %s (LOCAL_RANK %d and %d); each rank of a node needs its own device: check LOCAL_RANK and CUDA_VISIBLE_DEVICES", a.where(), me.Host, h.Device, h.Local, me.Local)
	}
	for _, b := range byRank {
		if b.h.Device == h.Device && same(b.ip) {
			return fmt.Sprintf("%s and %s both use the GPU at PCI %s (LOCAL_RANK %d and %d); each rank of a node needs its own device: check LOCAL_RANK and CUDA_VISIBLE_DEVICES", b.where(), a.where(), h.Device, b.h.Local, h.Local)
		}
	}
	return ""
}

// missing words the ranks that did not arrive by the deadline.
func missing(l *Launch, byRank map[int]arrival) string {
	var absent []int
	for r := 1; r < l.World; r++ {
		if _, ok := byRank[r]; !ok {
			absent = append(absent, r)
		}
	}
	return fmt.Sprintf("%s did not join within %s=%v at %s; %d of %d ranks arrived. Start every rank with the same MASTER_ADDR, MASTER_PORT and WORLD_SIZE=%d (or raise %s)",
		rankList(absent), TimeoutEnv, l.Timeout, l.store(), l.World-len(absent), l.World, l.World, TimeoutEnv)
}

// settle answers every rank once all have arrived: its node's rank count
// and, on a node whose connections are loopback in a group that spans
// hosts, the routed address.
func settle(me hello, byRank map[int]arrival, local func(net.IP) bool) *met {
	node := func(a arrival) string { // the node of a rank: where it connects from, rank 0's when local
		if local(a.ip) {
			return ""
		}
		return a.ip.String()
	}
	count := map[string]int{"": 1} // rank 0
	routed := ""                   // rank 0's address as the other hosts reach it
	restart := me.Restart
	for _, a := range byRank {
		count[node(a)]++
		if node(a) != "" && routed == "" {
			routed = hostOf(a.conn.LocalAddr())
		}
		restart = max(restart, a.h.Restart)
	}
	m := &met{conns: map[int]net.Conn{}, addr: routed, localWorld: count[""], restart: restart}
	for _, a := range byRank {
		m.conns[a.h.Rank] = a.conn
		if m.addr == "" {
			m.addr = hostOf(a.conn.LocalAddr()) // one node: any connection's address
		}
	}
	for _, a := range byRank {
		v := verdict{LocalWorld: count[node(a)], Restart: restart}
		if node(a) == "" && routed != "" && isLoopback(hostOf(a.conn.RemoteAddr())) {
			v.Addr = routed // this node's name is loopback here: offer the routed address
		}
		send(a.conn, v)
	}
	return m
}

// hostOf is an address's IP, as text.
func hostOf(a net.Addr) string {
	if t, ok := a.(*net.TCPAddr); ok {
		return t.IP.String()
	}
	host, _, _ := net.SplitHostPort(a.String())
	return host
}

// isLoopback says whether an IP written as text is a loopback address.
func isLoopback(ip string) bool {
	p := net.ParseIP(ip)
	return p != nil && p.IsLoopback()
}

// send writes one verdict line (best effort: a rank that left learns
// nothing either way).
func send(c net.Conn, v verdict) {
	b, _ := json.Marshal(v)
	c.SetWriteDeadline(time.Now().Add(noGreeting))
	c.Write(append(b, '\n'))
	c.SetWriteDeadline(time.Time{})
}

// sayHello is the side of every rank but 0: it finds rank 0 on the store's
// port, says who it is and waits for the answer.
func sayHello(l *Launch, me hello, deadline time.Time) (*met, error) {
	ips, err := resolve(l, deadline)
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort(ips[0], strconv.Itoa(l.StorePort))
	var c net.Conn
	var last error
	for {
		d := net.Dialer{Timeout: min(5*time.Second, max(time.Until(deadline), time.Millisecond))}
		if c, last = d.Dial("tcp", addr); last == nil {
			break
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%s: nothing answered at %s within %s=%v (%v); is rank 0 running, with the same MASTER_ADDR and MASTER_PORT?", l.Where(), l.store(), TimeoutEnv, l.Timeout, last)
		}
		time.Sleep(200 * time.Millisecond) // rank 0 is not listening yet
	}
	r := bufio.NewReader(c)
	c.SetReadDeadline(time.Now().Add(noGreeting))
	line, err := r.ReadString('\n')
	if line != greeting {
		c.Close()
		said := fmt.Sprintf("said %q", strings.TrimSpace(line))
		if err != nil && line == "" {
			said = fmt.Sprintf("said nothing within %v", noGreeting)
		}
		return nil, fmt.Errorf("%s: %s answered but not as troupe's rank 0 (it %s): another program holds the port; choose a free port for every rank (%s)", l.Where(), l.store(), said, portHint(l))
	}
	b, _ := json.Marshal(me)
	c.SetWriteDeadline(time.Now().Add(noGreeting))
	if _, err := c.Write(append(b, '\n')); err != nil {
		c.Close()
		return nil, fmt.Errorf("%s: saying hello to rank 0 at %s: %w", l.Where(), l.store(), err)
	}
	// rank 0 answers by its own deadline, which is at most the timeout
	// after it began listening, so before this rank connected
	c.SetDeadline(time.Now().Add(l.Timeout + noGreeting))
	line, err = r.ReadString('\n')
	var v verdict
	if err != nil || json.Unmarshal([]byte(line), &v) != nil {
		c.Close()
		return nil, fmt.Errorf("%s: rank 0 at %s ended the rendezvous without an answer (%v); its own output says why", l.Where(), l.store(), err)
	}
	if v.Error != "" {
		c.Close()
		return nil, errors.New(v.Error)
	}
	c.SetDeadline(time.Time{})
	m := &met{conns: map[int]net.Conn{0: c}, addr: hostOf(c.LocalAddr()), localWorld: v.LocalWorld, restart: v.Restart}
	if v.Addr != "" {
		m.addr = v.Addr
	}
	return m, nil
}

// resolve looks MASTER_ADDR up: a name that does not exist is refused at
// once, a failing resolver is asked again until the deadline.
func resolve(l *Launch, deadline time.Time) ([]string, error) {
	for {
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		ips, err := net.DefaultResolver.LookupHost(ctx, l.MasterAddr)
		cancel()
		if err == nil && len(ips) > 0 {
			sort.SliceStable(ips, func(i, j int) bool { return strings.Contains(ips[j], ":") && !strings.Contains(ips[i], ":") }) // IPv4 first, as c10d
			return ips, nil
		}
		var dns *net.DNSError
		if errors.As(err, &dns) && dns.IsNotFound {
			return nil, fmt.Errorf("%s: MASTER_ADDR=%q does not resolve (%v); set it to rank 0's host name or address, the same on every rank", l.Where(), l.MasterAddr, err)
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%s: MASTER_ADDR=%q could not be resolved within %s=%v (%v)", l.Where(), l.MasterAddr, TimeoutEnv, l.Timeout, err)
		}
		time.Sleep(time.Second)
	}
}

// portHint is the variable that moves the store's port.
func portHint(l *Launch) string {
	if strings.HasPrefix(l.storeWhy, "MASTER_PORT+1") || l.storeWhy == StorePortEnv {
		return StorePortEnv
	}
	return "MASTER_PORT"
}

// rankList writes "rank 2" or "ranks 2, 3".
func rankList(ranks []int) string {
	s := make([]string, len(ranks))
	for i, r := range ranks {
		s[i] = strconv.Itoa(r)
	}
	if len(s) == 1 {
		return "rank " + s[0]
	}
	return "ranks " + strings.Join(s, ", ")
}

// hostname is this host's name ("?" when unknown).
func hostname() string {
	h, err := os.Hostname()
	if err != nil {
		return "?"
	}
	return h
}
