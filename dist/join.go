package dist

// join.go — a rank joins its group: it reads its place (launch.go), takes
// its CUDA device before any CUDA work (NCCL included, so that nothing
// creates a context on another GPU), meets the other ranks (hello.go),
// starts the failure channel (watch.go) and its probe listener (peers.go),
// and only then joins torch's c10d process group over rank 0's TCPStore —
// Gloo for CPU tensors (bound to GLOO_SOCKET_IFNAME's interfaces, or the
// address the hello settled), NCCL for CUDA ones on the rank's device. A
// GPU build of the shim without Gloo sends CPU tensors through NCCL.
//
// Everything is bounded by TROUPE_DIST_TIMEOUT: the hello by rank 0's
// deadline, and c10d's own rendezvous — which can no longer wait for a
// missing rank, since every rank said hello — by a watchdog that ends the
// process with one line if c10d still has not returned leaveGrace after
// the timeout.
//
// What it is not: what the ranks agree on once joined (agree.go).

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"troupe/torch"
)

// Options say how this process joins its group.
type Options struct {
	// CUDA: the models train on CUDA. The rank takes its device and the
	// group gets NCCL.
	CUDA bool
	// Fatal ends the process with err when a rank left the group while this
	// one waits in a collective that cannot complete (watch.go). Default:
	// err on stderr and to torchrun's error file, exit status 1.
	Fatal func(err error)
}

// Join joins the group the launcher's variables describe, or returns nil
// for one process.
func Join(o Options) (*Group, error) {
	l, err := ReadLaunch()
	if l == nil || err != nil {
		return nil, err
	}
	fatal := o.Fatal
	if fatal == nil {
		fatal = exitWith
	}
	me := hello{Rank: l.Rank, World: l.World, Local: l.Local, Node: l.Node, Host: hostname(), StorePort: l.StorePort, Restart: LauncherRestart()}
	ordinal := -1
	if o.CUDA {
		visible := torch.CUDADeviceCount()
		if ordinal, err = l.Ordinal(visible); err != nil {
			return nil, err
		}
		if err := torch.SetDevice(ordinal); err != nil {
			return nil, fmt.Errorf("data parallel: %s: LOCAL_RANK %d is cuda:%d of the %d devices this process sees%s: %w", l.Where(), l.Local, ordinal, visible, visibleDevices(), err)
		}
		if me.Device, err = torch.CUDAPCIBusID(ordinal); err != nil {
			return nil, fmt.Errorf("data parallel: %s: %w", l.Where(), err)
		}
	}
	gloo, nccl := torch.DistBackends()
	if !gloo && !(o.CUDA && nccl) {
		return nil, fmt.Errorf("data parallel: this build of the shim has no Gloo backend, which CPU ranks need; install libgloo-dev and rebuild it (make setup)")
	}
	if o.CUDA && !nccl {
		return nil, fmt.Errorf("data parallel: the models are on CUDA but this build of the shim has no NCCL; build it with scripts/gpu/build-shim.sh on a machine with NCCL")
	}

	deadline := time.Now().Add(l.Timeout)
	var m *met
	if l.Rank == 0 {
		m, err = serveHello(l, me, deadline, isLocalIP)
	} else {
		m, err = sayHello(l, me, deadline)
	}
	if err != nil {
		return nil, fmt.Errorf("data parallel: %w", err)
	}
	l.setThreads(m.localWorld)
	w := newWatch(l.Rank, l.Where(), m.conns, fatal)
	addr := m.addr
	if l.GlooIfaces != "" {
		if addr, err = interfaceAddr(l.GlooIfaces); err != nil {
			err = fmt.Errorf("data parallel: %s: %w", l.Where(), err)
			w.leave(err)
			return nil, err
		}
	} else if addr == "" {
		addr = routeTo(l) // a group of one: no connection said where
	}
	probeAt, stopProbes, err := listenForProbes(addr, l.Rank)
	if err != nil {
		w.leave(err)
		return nil, err
	}
	g := &Group{launch: l, ordinal: ordinal, restart: m.restart, localWorld: m.localWorld, w: w, stopProbes: stopProbes}
	g.peers = []peer{{Rank: l.Rank, Node: l.Node, Addr: addr, Probe: probeAt}} // this rank alone until Agree

	// c10d: every rank is here, so this ends soon; a rank that leaves
	// meanwhile ends the wait (watch.go), and the watchdog anything else
	end, err := w.enter()
	if err == nil {
		watchdog := time.AfterFunc(l.Timeout+leaveGrace, func() {
			fatal(fmt.Errorf("data parallel: %s: c10d's rendezvous at %s did not complete within %s=%v although every rank had arrived; check that the ports Gloo and NCCL open are reachable between the nodes", l.Where(), l.store(), TimeoutEnv, l.Timeout))
		})
		g.pg, err = torch.NewProcessGroup(torch.DistConfig{Host: l.MasterAddr, Port: l.StorePort, Rank: l.Rank, World: l.World,
			Timeout: l.Timeout, Gloo: gloo, NCCL: o.CUDA, Device: max(ordinal, 0), GlooInterfaces: l.GlooIfaces, GlooAddr: addr})
		watchdog.Stop()
		end()
	}
	if err != nil {
		w.leave(err)
		stopProbes()
		return nil, fmt.Errorf("data parallel: %s joining at %s: %w", l.Where(), l.store(), err)
	}
	return g, nil
}

// exitWith is the default Options.Fatal.
func exitWith(err error) {
	fmt.Fprintln(os.Stderr, err)
	ReportToLauncher(err.Error())
	os.Exit(1)
}

// interfaceAddr is the address of the first interface GLOO_SOCKET_IFNAME
// names (IPv4 first): where this rank answers the others' probes.
func interfaceAddr(names string) (string, error) {
	name := strings.TrimSpace(strings.Split(names, ",")[0])
	ifc, err := net.InterfaceByName(name)
	if err != nil {
		var have []string
		if all, err := net.Interfaces(); err == nil {
			for _, i := range all {
				have = append(have, i.Name)
			}
		}
		return "", fmt.Errorf("GLOO_SOCKET_IFNAME=%q: no interface %q on this host (it has %s)", names, name, strings.Join(have, ", "))
	}
	addrs, err := ifc.Addrs()
	if err != nil {
		return "", fmt.Errorf("GLOO_SOCKET_IFNAME=%q: %w", names, err)
	}
	var v6 string
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			if n.IP.To4() != nil {
				return n.IP.String(), nil
			}
			if v6 == "" {
				v6 = n.IP.String()
			}
		}
	}
	if v6 == "" {
		return "", fmt.Errorf("GLOO_SOCKET_IFNAME=%q: interface %s has no address", names, name)
	}
	return v6, nil
}

// routeTo is the address this host reaches the store's host from (the
// source address of the route to MASTER_ADDR); "" when there is no route.
func routeTo(l *Launch) string {
	c, err := net.Dial("udp", net.JoinHostPort(l.MasterAddr, strconv.Itoa(l.StorePort))) // sends nothing
	if err != nil {
		return ""
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).IP.String()
}
