package main

// Two hosts, really: two network namespaces joined by a veth pair, each with
// its own interfaces, addresses and ports, their only link the pair. A node
// of 2 ranks runs in each (2 × 2 Gloo ranks over the veth link), launched by
// torchrun's c10d rendezvous or by troupe's own variables (without the
// reference environment's torchrun, the variables alone, and no restart
// check). Needs root (CAP_NET_ADMIN) and iproute2; skipped elsewhere,
// saying why, unless TROUPE_NETNS_REQUIRED=1 (the project's CI), where that
// is a failure.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"troupe/ckpt"
	"troupe/dist"
	"troupe/internal/pyref"
)

// hosts are two network namespaces joined by a veth pair.
type hosts struct {
	ns, dev, addr [2]string
}

// twoHosts makes the namespaces, removed when the test ends.
func twoHosts(t *testing.T) *hosts {
	t.Helper()
	skip := func(why string) {
		if os.Getenv("TROUPE_NETNS_REQUIRED") == "1" {
			t.Fatalf("TROUPE_NETNS_REQUIRED=1 but %s", why)
		}
		t.Skipf("skipped: %s", why)
	}
	if os.Geteuid() != 0 {
		skip("network namespaces need root (CAP_NET_ADMIN); run the tests as root to include the two-host checks")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		skip("no ip command (iproute2) to make network namespaces")
	}
	id := strconv.Itoa(os.Getpid() % 100000)
	h := &hosts{ns: [2]string{"troupe" + id + "a", "troupe" + id + "b"}, dev: [2]string{"tr" + id + "a", "tr" + id + "b"},
		addr: [2]string{"10.231.0.1", "10.231.0.2"}}
	ip := func(args ...string) error {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	if err := ip("netns", "add", h.ns[0]); err != nil {
		if strings.Contains(err.Error(), "Operation not permitted") {
			skip("this machine does not allow network namespaces (" + err.Error() + ")")
		}
		t.Fatal(err)
	}
	t.Cleanup(func() { ip("netns", "del", h.ns[0]) })
	if err := ip("netns", "add", h.ns[1]); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ip("netns", "del", h.ns[1]) })
	steps := [][]string{{"link", "add", h.dev[0], "netns", h.ns[0], "type", "veth", "peer", "name", h.dev[1], "netns", h.ns[1]}}
	for k := range 2 {
		steps = append(steps, []string{"-n", h.ns[k], "addr", "add", h.addr[k] + "/24", "dev", h.dev[k]},
			[]string{"-n", h.ns[k], "link", "set", h.dev[k], "up"}, []string{"-n", h.ns[k], "link", "set", "lo", "up"})
	}
	for _, s := range steps {
		if err := ip(s...); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// link sets host 0's end of the link up or down (a cut cable).
func (h *hosts) link(t *testing.T, up bool) {
	t.Helper()
	state := "down"
	if up {
		state = "up"
	}
	if out, err := exec.Command("ip", "-n", h.ns[0], "link", "set", h.dev[0], state).CombinedOutput(); err != nil {
		t.Fatalf("ip link set %s: %v: %s", state, err, out)
	}
}

// torchrun starts a torchrun node in each host: 2 ranks each, the c10d
// rendezvous hosted on host 0 (is_host: the hosts share the machine's name,
// so torchrun cannot tell which one the endpoint is).
func (h *hosts) torchrun(t *testing.T, py string, extra, train []string, env ...string) [2]*proc {
	var ps [2]*proc
	for k := range 2 {
		args := append([]string{"--nnodes", "2", "--nproc-per-node", "2", "--rdzv-backend", "c10d",
			"--rdzv-endpoint", h.addr[0] + ":29400", "--rdzv-id", "twohosts", "--rdzv-conf", "is_host=" + strconv.Itoa(1-k),
			"--local-addr", h.addr[k]}, extra...)
		ps[k] = start(t, torchrunCmd(py, h.ns[k], args, train, env...))
	}
	return ps
}

// byHand starts the 4 ranks with troupe's own variables, ranks 0 and 1 on
// host 0; node(k) gives host k's train arguments and environment.
func (h *hosts) byHand(t *testing.T, node func(k int) ([]string, []string)) [4]*proc {
	var ps [4]*proc
	for r := range 4 {
		k := r / 2
		train, env := node(k)
		cmd := exec.Command("ip", append([]string{"netns", "exec", h.ns[k], os.Args[0]}, train...)...)
		cmd.Env = rankTrainEnv(append([]string{"WORLD_SIZE=4", "RANK=" + strconv.Itoa(r), "LOCAL_RANK=" + strconv.Itoa(r%2),
			"MASTER_ADDR=" + h.addr[0], "MASTER_PORT=29500"}, env...)...)
		ps[r] = start(t, cmd)
	}
	return ps
}

// waitAll waits for every process and returns their outputs.
func waitAll(t *testing.T, ps []*proc, wantOK bool) []string {
	t.Helper()
	outs := make([]string, len(ps))
	for i, p := range ps {
		out, err := p.wait(t)
		outs[i] = out
		if wantOK && err != nil {
			t.Fatalf("process %d (%s): %v\n%s", i, strings.Join(p.cmd.Args[:min(6, len(p.cmd.Args))], " "), err, tail(out, 3000))
		}
		if !wantOK && err == nil {
			t.Fatalf("process %d succeeded, want a failure:\n%s", i, tail(out, 3000))
		}
	}
	return outs
}

// Two hosts of 2 ranks under torchrun train the weights of one process
// (1e-6 relative); the link cut in step 2 stops every rank within the
// timeout, each naming the other host and the step, with step 1's
// checkpoint intact, and --resume once the link is back ends bit-identical
// to the uninterrupted run; a rank killed in step 2 under torchrun
// --max-restarts 1 is restarted with both nodes' groups, which resume by
// themselves to the same weights; a node with another config or another
// build is refused when the group forms, naming the first difference.
func TestTwoHosts(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end training runs; skipped with -short")
	}
	h := twoHosts(t)
	py, noPy := pyref.Find() // torchrun; without it the by-hand parts still run
	if noPy != nil && pyref.Required() {
		t.Fatalf("%s=1 but the Python reference environment (torchrun) is unusable: %v", pyref.RequiredEnv, noPy)
	}
	dir := t.TempDir()
	cfgPath, sft := warmModel(t, dir)
	args := dpArgs(cfgPath, sft)
	one, straight, cut, restarted := filepath.Join(dir, "one"), filepath.Join(dir, "straight"), filepath.Join(dir, "cut"), filepath.Join(dir, "restarted")
	oneProcess(t, append(args, "--set", "run.output_dir="+one)...)

	// 2 × 2 ranks under torchrun
	var outs []string
	if noPy == nil {
		ps := h.torchrun(t, py, nil, append(args, "--set", "run.output_dir="+straight))
		outs = waitAll(t, ps[:], true)
	} else {
		t.Logf("no torchrun (%v): the 2 × 2 ranks start by troupe's variables, and the restart check is skipped", noPy)
		ps := h.byHand(t, func(int) ([]string, []string) { return append(args, "--set", "run.output_dir="+straight), nil })
		outs = waitAll(t, ps[:], true)
	}
	if !strings.Contains(strings.Join(outs, ""), "data parallel: 4 ranks; this is rank 0") {
		t.Fatalf("no rank 0 reported a group of 4:\n%s", tail(strings.Join(outs, "\n"), 3000))
	}
	closeWeights(t, one, straight, sft, 3)

	// the link cut while the ranks gather step 2's rows; Gloo on the named interfaces
	const timeout = 10 * time.Second
	pause := filepath.Join(dir, "pause-cut")
	node := func(k int) ([]string, []string) {
		return append(args, "--set", "run.output_dir="+cut), []string{dist.TimeoutEnv + "=" + timeout.String(),
			"GLOO_SOCKET_IFNAME=" + h.dev[k], dist.RankPauseEnv + "=2:0:" + pause}
	}
	ranks := h.byHand(t, node)
	pausedRank(t, pause, 5*time.Minute)
	h.link(t, false)
	cutAt := time.Now()
	os.Remove(pause)
	outs = waitAll(t, ranks[:], false)
	h.link(t, true)
	for r, out := range outs {
		lines := trainLines(out)
		other := h.addr[1-r/2]
		want := fmt.Sprintf("train: data parallel: rank %d of 4 stopped in step 2: lost host ", r)
		if len(lines) != 1 || !strings.HasPrefix(lines[0], want) || !strings.Contains(lines[0], other) {
			t.Fatalf("rank %d: want one line naming host %s and step 2 (%q…), got %q\n%s", r, other, want, lines, tail(out, 2000))
		}
		// the default, 30 minutes, would be a hang; the probe of the lost host takes 2 s more
		if after := ranks[r].at.Sub(cutAt); after > timeout+30*time.Second {
			t.Fatalf("rank %d exited %v after the cut; the timeout is %v", r, after, timeout)
		}
		t.Logf("rank %d, %.1fs after the cut: %s", r, ranks[r].at.Sub(cutAt).Seconds(), lines[0])
	}
	if cp, err := ckpt.Latest(filepath.Join(cut, "checkpoints")); err != nil || cp.Step != 1 {
		t.Fatalf("after the cut the newest checkpoint should be step 1, intact: %+v, %v", cp, err)
	}
	ranks = h.byHand(t, func(k int) ([]string, []string) {
		return []string{"--resume=" + cut, "-q"}, nil
	})
	waitAll(t, ranks[:], true)
	sameState(t, straight, cut, 3)

	// a rank of host 1 killed in step 2; torchrun restarts both nodes' groups
	if noPy == nil {
		pause = filepath.Join(dir, "pause-kill")
		ps := h.torchrun(t, py, []string{"--max-restarts", "1"}, append(args, "--set", "run.output_dir="+restarted),
			dist.RankPauseEnv+"=2:3:"+pause)
		killPaused(t, pause)
		outs = waitAll(t, ps[:], true)
		if all := outs[0] + outs[1]; !strings.Contains(all, "torchrun started the group again") {
			t.Fatalf("the restarted group did not say it resumed:\n%s\n%s", tail(outs[0], 2000), tail(outs[1], 2000))
		}
		sameState(t, straight, restarted, 3)
		if got := metricSteps(t, restarted); !reflect.DeepEqual(got, []int{1, 2, 3}) {
			t.Fatalf("metrics.jsonl of the restarted run has the steps %v, want [1 2 3]", got)
		}
	}

	// host 1 with another config, then with another build: refused as the group forms
	other := filepath.Join(dir, "train-other")
	exe := readFile(t, os.Args[0])
	if err := os.WriteFile(other, append(exe, "another build"...), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, want string
		set        []string
		exe        string
	}{
		{"config", "optim.lr is 0.001 on rank 0 on host", []string{"--set", "optim.lr=2e-3"}, os.Args[0]},
		{"build", "runs another build than rank 0 on host", nil, other},
	} {
		out := filepath.Join(dir, "refused-"+c.name)
		var ranks [4]*proc
		for r := range 4 {
			k := r / 2
			train := append(args, "--set", "run.output_dir="+out)
			bin := os.Args[0]
			if k == 1 {
				train, bin = append(train, c.set...), c.exe
			}
			cmd := exec.Command("ip", append([]string{"netns", "exec", h.ns[k], bin}, train...)...)
			cmd.Env = rankTrainEnv("WORLD_SIZE=4", "RANK="+strconv.Itoa(r), "LOCAL_RANK="+strconv.Itoa(r%2), "GROUP_RANK="+strconv.Itoa(k),
				"MASTER_ADDR="+h.addr[0], "MASTER_PORT=29500")
			ranks[r] = start(t, cmd)
		}
		outs := waitAll(t, ranks[:], false)
		for r, o := range outs {
			lines := trainLines(o)
			if len(lines) != 1 || !strings.Contains(lines[0], c.want) || !strings.Contains(lines[0], h.addr[1]) {
				t.Fatalf("another %s on host 1: rank %d should refuse naming it (%q), got %q\n%s", c.name, r, c.want, lines, tail(o, 2000))
			}
		}
		t.Logf("another %s: %s", c.name, trainLines(outs[0])[0])
		if entries, _ := ckpt.List(filepath.Join(out, "checkpoints")); len(entries) > 0 {
			t.Fatalf("a refused group wrote checkpoints: %v", entries)
		}
	}
}
