package dist

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Two hosts, really: two network namespaces joined by a veth pair (as in
// cmd/train's TestTwoHosts), each with its own /etc/hosts (ip netns exec
// mounts /etc/netns/NAME/hosts over it). Host a's name maps to 127.0.1.1 on
// host a itself, as Debian's installer writes it, and to host a's address
// on host b. Needs root (CAP_NET_ADMIN) and iproute2; skipped elsewhere,
// saying why, unless TROUPE_NETNS_REQUIRED=1.
func netnsHosts(t *testing.T) (ns, addr [2]string) {
	t.Helper()
	skip := func(why string) {
		if os.Getenv("TROUPE_NETNS_REQUIRED") == "1" {
			t.Fatalf("TROUPE_NETNS_REQUIRED=1 but %s", why)
		}
		t.Skipf("skipped: %s", why)
	}
	if os.Geteuid() != 0 {
		skip("network namespaces need root (CAP_NET_ADMIN)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		skip("no ip command (iproute2) to make network namespaces")
	}
	id := strconv.Itoa(os.Getpid() % 100000)
	ns = [2]string{"trd" + id + "a", "trd" + id + "b"}
	dev := [2]string{"trd" + id + "a", "trd" + id + "b"}
	addr = [2]string{"192.168.232.1", "192.168.232.2"} // above 127.0.0.1: Gloo has the greater address of a pair connect, so a loopback one offered by host a would be dialled from host b
	ip := func(args ...string) error {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	for k := range 2 {
		if err := ip("netns", "add", ns[k]); err != nil {
			if strings.Contains(err.Error(), "Operation not permitted") {
				skip("this machine does not allow network namespaces (" + err.Error() + ")")
			}
			t.Fatal(err)
		}
		t.Cleanup(func() { ip("netns", "del", ns[k]) })
	}
	steps := [][]string{{"link", "add", dev[0], "netns", ns[0], "type", "veth", "peer", "name", dev[1], "netns", ns[1]}}
	for k := range 2 {
		steps = append(steps, []string{"-n", ns[k], "addr", "add", addr[k] + "/24", "dev", dev[k]},
			[]string{"-n", ns[k], "link", "set", dev[k], "up"}, []string{"-n", ns[k], "link", "set", "lo", "up"})
	}
	for _, s := range steps {
		if err := ip(s...); err != nil {
			t.Fatal(err)
		}
	}
	hosts := [2]string{"127.0.0.1 localhost\n127.0.1.1 trhosta\n", "127.0.0.1 localhost\n" + addr[0] + " trhosta\n"}
	for k := range 2 {
		dir := filepath.Join("/etc/netns", ns[k])
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		if err := os.WriteFile(filepath.Join(dir, "hosts"), []byte(hosts[k]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return ns, addr
}

// Three ranks, two on host a and one on host b, meet at MASTER_ADDR=trhosta,
// which host a resolves to 127.0.1.1: host a's ranks connect to rank 0 over
// loopback, yet offer Gloo the address host b reaches (where they used to
// bind loopback and host b's rank could not connect), and the group sums.
func TestTwoHostsLoopbackName(t *testing.T) {
	ns, addr := netnsHosts(t)
	port := 29600 + os.Getpid()%300
	res := make([]rankResult, 3)
	var wg sync.WaitGroup
	began := time.Now()
	for r := range 3 {
		k := r / 2 // ranks 0 and 1 on host a
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "ip", "netns", "exec", ns[k], os.Args[0], "-test.run", "^TestJoinChild$", "-test.v")
			cmd.Env = append(os.Environ(), joinChildEnv+"=sum", "TROUPE_THREADS=1", "WORLD_SIZE=3", "RANK="+strconv.Itoa(r),
				"LOCAL_RANK="+strconv.Itoa(r%2), "MASTER_ADDR=trhosta", "MASTER_PORT="+strconv.Itoa(port), TimeoutEnv+"=30s")
			b, err := cmd.CombinedOutput()
			res[r] = rankResult{string(b), err, time.Since(began)}
		}()
	}
	wg.Wait()
	for r, x := range res {
		want := fmt.Sprintf("rank %d: sum 6; offers %s", r, addr[r/2])
		if x.err != nil || !strings.Contains(x.out, want) {
			t.Fatalf("rank %d on host %s: %v; want %q\n%s", r, addr[r/2], x.err, want, x.out)
		}
	}
}
