package dist

import (
	"net"
	"strings"
	"testing"
)

// A failed rank sorts its peers by what a probe finds: one that answers is
// not named, a process that is gone (its port refuses) is named by rank, and
// a host that does not answer (here a listener that never accepts: a cut
// link is tested end to end in TestTwoHosts) is named with its ranks.
func TestLostPeers(t *testing.T) {
	at, stop, err := listenForProbes("127.0.0.1", 1)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := closed.Addr().String()
	closed.Close()
	silent, err := net.Listen("tcp", "127.0.0.1:0") // connects, never answers
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	_, port, _ := net.SplitHostPort(silent.Addr().String())
	d := &Group{launch: &Launch{Rank: 0, World: 5}, peers: []peer{
		{Rank: 0, Host: "a", Addr: "10.0.0.1", Node: 0},
		{Rank: 1, Host: "a", Addr: "10.0.0.1", Node: 0, Probe: at},
		{Rank: 2, Host: "a", Addr: "10.0.0.1", Node: 0, Probe: gone},
		{Rank: 3, Host: "b", Addr: "10.0.0.2", Node: 1, Probe: "127.0.0.1:" + port},
		{Rank: 4, Host: "b", Addr: "10.0.0.2", Node: 1, Probe: "127.0.0.1:" + port},
	}}
	got := d.lostPeers()
	want := "lost host b (10.0.0.2, node 1): ranks 3, 4 no longer answer; rank 2 on host a (10.0.0.1, node 0) has stopped"
	if got != want {
		t.Fatalf("lostPeers:\n got %q\nwant %q", got, want)
	}
	// a port that another process took since is not the rank
	d.peers[1].Rank = 7
	if got := d.lostPeers(); !strings.Contains(got, "rank 7 on host a") {
		t.Fatalf("a listener that names another rank counts as that rank being gone: %q", got)
	}
	d.peers = d.peers[:2]
	d.peers[1].Rank = 1
	if got := d.lostPeers(); !strings.HasPrefix(got, "every other rank still answers") {
		t.Fatalf("with every peer answering: %q", got)
	}
}
