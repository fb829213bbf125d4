package dist

import (
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// freePort is a TCP port nothing listens on (at the time of asking).
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// launchAt is rank r of world meeting at 127.0.0.1:port.
func launchAt(r, world, port int, timeout time.Duration) *Launch {
	return &Launch{Rank: r, World: world, Local: r, Node: -1, MasterAddr: "127.0.0.1", StorePort: port, storeWhy: "MASTER_PORT", Timeout: timeout}
}

// helloOf is what rank r of world says.
func helloOf(r, world, port int) hello {
	return hello{Rank: r, World: world, Local: r, Node: -1, Host: "h", StorePort: port}
}

// outcome is one rank's side of a meeting.
type outcome struct {
	m    *met
	err  error
	took time.Duration
}

// meet runs rank 0 (launch l0, hello h0) and the others (their launches
// and hellos) at once and returns every side's outcome, rank 0's first.
func meet(t *testing.T, l0 *Launch, h0 hello, others []*Launch, hellos []hello, local func(net.IP) bool) []outcome {
	t.Helper()
	out := make([]outcome, 1+len(others))
	var wg sync.WaitGroup
	began := time.Now()
	wg.Add(1)
	go func() {
		defer wg.Done()
		m, err := serveHello(l0, h0, began.Add(l0.Timeout), local)
		out[0] = outcome{m, err, time.Since(began)}
	}()
	for i, l := range others {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m, err := sayHello(l, hellos[i], time.Now().Add(l.Timeout))
			out[1+i] = outcome{m, err, time.Since(began)}
		}()
	}
	wg.Wait()
	t.Cleanup(func() {
		for _, o := range out {
			if o.m != nil {
				for _, c := range o.m.conns {
					c.Close()
				}
			}
		}
	})
	return out
}

// Three ranks meet: each learns its node's rank count (all on this host),
// an address that is this host's, and the group's largest restart count.
func TestHelloMeets(t *testing.T) {
	port := freePort(t)
	const w = 3
	var others []*Launch
	var hellos []hello
	for r := 1; r < w; r++ {
		others = append(others, launchAt(r, w, port, 20*time.Second))
		h := helloOf(r, w, port)
		h.Restart = r - 1 // rank 2's node counted a restart, rank 1's did not
		hellos = append(hellos, h)
	}
	out := meet(t, launchAt(0, w, port, 20*time.Second), helloOf(0, w, port), others, hellos, isLocalIP)
	for r, o := range out {
		if o.err != nil {
			t.Fatalf("rank %d: %v", r, o.err)
		}
		if o.m.localWorld != w || o.m.restart != 1 || o.m.addr != "127.0.0.1" {
			t.Fatalf("rank %d met %+v; want %d ranks on its node, restart 1, address 127.0.0.1", r, *o.m, w)
		}
	}
	if len(out[0].m.conns) != w-1 {
		t.Fatalf("rank 0 keeps %d connections, want %d", len(out[0].m.conns), w-1)
	}
}

// Every way the group cannot form ends within the timeout on every rank
// with one line naming the cause: a WORLD_SIZE or MASTER_PORT that differs,
// two processes with one RANK, two ranks of a node on one GPU, a rank that
// never arrives (named), rank 0 that never arrives.
func TestHelloRefuses(t *testing.T) {
	const timeout = 3 * time.Second
	for _, c := range []struct {
		name  string
		world int
		edit  func(hs []hello, h0 *hello) // changes the hellos of ranks 1… and rank 0's
		want  string                      // in every rank's error
	}{
		{"world", 3, func(hs []hello, _ *hello) { hs[1].World = 4 }, "rank 2 on host h (127.0.0.1) has WORLD_SIZE=4 but rank 0 on host h has WORLD_SIZE=3; start every rank with the same WORLD_SIZE"},
		{"port", 2, func(hs []hello, _ *hello) { hs[0].StorePort = 1 }, "looks for the store on port 1"},
		{"rank", 3, func(hs []hello, _ *hello) { hs[1].Rank = 1 }, "both have RANK=1"},
		{"rank 0 twice", 2, func(hs []hello, _ *hello) { hs[0].Rank = 0 }, "also has RANK=0"},
		{"gpu", 3, func(hs []hello, h0 *hello) {
			h0.Device, hs[0].Device, hs[1].Device = "0000:01:00.0", "0000:02:00.0", "0000:02:00.0"
		}, "both use the GPU at PCI 0000:02:00.0"},
		{"gpu of rank 0", 2, func(hs []hello, h0 *hello) { h0.Device, hs[0].Device = "0000:01:00.0", "0000:01:00.0" }, "and rank 0 on host h both use the GPU at PCI 0000:01:00.0"},
	} {
		port := freePort(t)
		var others []*Launch
		var hellos []hello
		for r := 1; r < c.world; r++ {
			others = append(others, launchAt(r, c.world, port, timeout))
			hellos = append(hellos, helloOf(r, c.world, port))
		}
		h0 := helloOf(0, c.world, port)
		c.edit(hellos, &h0)
		out := meet(t, launchAt(0, c.world, port, timeout), h0, others, hellos, isLocalIP)
		for r, o := range out {
			if o.err == nil || !strings.Contains(o.err.Error(), c.want) {
				t.Fatalf("%s: rank %d: %v; want an error saying %q", c.name, r, o.err, c.want)
			}
			if o.took > timeout {
				t.Fatalf("%s: rank %d took %v, past the timeout %v", c.name, r, o.took, timeout)
			}
		}
		t.Logf("%s: %v", c.name, out[0].err)
	}

	// ranks 2 and 3 never come: rank 0 names them at its deadline, and so
	// does rank 1, which waited with it
	port := freePort(t)
	out := meet(t, launchAt(0, 4, port, timeout), helloOf(0, 4, port), []*Launch{launchAt(1, 4, port, timeout)}, []hello{helloOf(1, 4, port)}, isLocalIP)
	for r, o := range out {
		if o.err == nil || !strings.Contains(o.err.Error(), "ranks 2, 3 did not join within TROUPE_DIST_TIMEOUT=3s") || !strings.Contains(o.err.Error(), "2 of 4 ranks arrived") {
			t.Fatalf("missing ranks: rank %d: %v", r, o.err)
		}
		if o.took > timeout+time.Second {
			t.Fatalf("missing ranks: rank %d took %v; the timeout is %v", r, o.took, timeout)
		}
	}
	t.Logf("missing: %v", out[1].err)

	// rank 0 never comes
	began := time.Now()
	_, err := sayHello(launchAt(1, 2, freePort(t), timeout), helloOf(1, 2, 0), time.Now().Add(timeout))
	if err == nil || !strings.Contains(err.Error(), "nothing answered at 127.0.0.1:") || !strings.Contains(err.Error(), "is rank 0 running") {
		t.Fatalf("rank 0 missing: %v", err)
	}
	if took := time.Since(began); took > timeout+6*time.Second {
		t.Fatalf("rank 0 missing: the error came after %v; the timeout is %v", took, timeout)
	}
	t.Logf("rank 0 missing: %v", err)
}

// Another program on the store's port: rank 0 cannot listen and says so;
// a rank that connects to it hears no greeting (or another one) and says
// so, instead of waiting on it forever.
func TestHelloPortHeldByAnotherProgram(t *testing.T) {
	defer func(d time.Duration) { noGreeting = d }(noGreeting)
	noGreeting = time.Second
	for _, says := range []string{"", "SSH-2.0-OpenSSH_9.2\r\n"} {
		other, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			for {
				c, err := other.Accept()
				if err != nil {
					return
				}
				c.Write([]byte(says))
				defer c.Close() // held open, as a server that waits for a request
			}
		}()
		port := other.Addr().(*net.TCPAddr).Port
		if _, err := serveHello(launchAt(0, 2, port, time.Minute), helloOf(0, 2, port), time.Now().Add(time.Minute), isLocalIP); err == nil || !strings.Contains(err.Error(), "is in use on this host by another program") || !strings.Contains(err.Error(), "MASTER_PORT") {
			t.Fatalf("rank 0 on a held port: %v", err)
		}
		began := time.Now()
		_, err = sayHello(launchAt(1, 2, port, time.Minute), helloOf(1, 2, port), time.Now().Add(time.Minute))
		if err == nil || !strings.Contains(err.Error(), "answered but not as troupe's rank 0") || !strings.Contains(err.Error(), "another program holds the port") {
			t.Fatalf("rank 1 at a port another program holds (it says %q): %v", says, err)
		}
		if took := time.Since(began); took > 5*time.Second {
			t.Fatalf("rank 1 took %v to see another program on the port", took)
		}
		t.Logf("it says %q: %v", says, err)
		other.Close()
	}
}

// A MASTER_ADDR that does not resolve is refused at once, not retried for
// the whole timeout.
func TestHelloUnresolvableAddress(t *testing.T) {
	l := launchAt(1, 2, 29500, 30*time.Second)
	l.MasterAddr = "no-such-host.invalid"
	began := time.Now()
	_, err := sayHello(l, helloOf(1, 2, 29500), time.Now().Add(l.Timeout))
	if err == nil || !strings.Contains(err.Error(), `MASTER_ADDR="no-such-host.invalid"`) {
		t.Fatalf("an unresolvable MASTER_ADDR: %v", err)
	}
	if took := time.Since(began); took > 15*time.Second {
		t.Fatalf("the error came after %v", took)
	}
	t.Log(err)
}

// A rank on rank 0's node whose connection is loopback (the node's name
// maps to 127.0.1.1 in /etc/hosts) is given the routed address when
// another host is in the group; rank 0 offers the routed address too.
// Another host is this host's first non-loopback address, declared remote.
func TestHelloNeverOffersLoopbackToAnotherHost(t *testing.T) {
	ext := ""
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
				ext = n.IP.String()
				break
			}
		}
	}
	if ext == "" {
		t.Skip("this host has no non-loopback IPv4 address to stand for another host")
	}
	remote := func(ip net.IP) bool { return ip.String() != ext && isLocalIP(ip) } // ext is "another host"
	port := freePort(t)
	l1, l2 := launchAt(1, 3, port, 20*time.Second), launchAt(2, 3, port, 20*time.Second)
	l2.MasterAddr = ext // the other host reaches rank 0 at its routed address
	out := meet(t, launchAt(0, 3, port, 20*time.Second), helloOf(0, 3, port), []*Launch{l1, l2}, []hello{helloOf(1, 3, port), helloOf(2, 3, port)}, remote)
	for r, o := range out {
		if o.err != nil {
			t.Fatalf("rank %d: %v", r, o.err)
		}
		if o.m.addr != ext {
			t.Fatalf("rank %d offers %q, want the routed address %s", r, o.m.addr, ext)
		}
	}
	if out[1].m.localWorld != 2 || out[2].m.localWorld != 1 || out[0].m.localWorld != 2 {
		t.Fatalf("ranks per node: %d, %d, %d; want 2 (rank 0's node), 2, 1", out[0].m.localWorld, out[1].m.localWorld, out[2].m.localWorld)
	}
}
