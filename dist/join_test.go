package dist

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"troupe/torch"
)

// The group tests run real ranks, one process each, as training does: the
// test binary runs itself as each rank (TestJoinChild below) with the
// launcher's variables set.

const joinChildEnv = "TROUPE_DIST_JOIN_CHILD" // the scenario

// rankResult is one rank process's combined output, error and end.
type rankResult struct {
	out  string
	err  error
	took time.Duration
}

// runRanks starts world ranks of scenario meeting at a free port and waits
// for them; env(r) adds variables to rank r's.
func runRanks(t *testing.T, scenario string, world int, env func(r int) []string) []rankResult {
	t.Helper()
	if gloo, _ := torch.DistBackends(); !gloo {
		t.Fatal("this build of the shim has no Gloo: install libgloo-dev and rebuild it (make setup)")
	}
	port := freePort(t)
	res := make([]rankResult, world)
	var wg sync.WaitGroup
	began := time.Now()
	for r := range world {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a rank that hangs is killed
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run", "^TestJoinChild$", "-test.v")
			cmd.Env = append(os.Environ(), joinChildEnv+"="+scenario, "TROUPE_THREADS=1", "WORLD_SIZE="+strconv.Itoa(world), "RANK="+strconv.Itoa(r),
				"MASTER_ADDR=127.0.0.1", "MASTER_PORT="+strconv.Itoa(port), TimeoutEnv+"=60s")
			if env != nil {
				cmd.Env = append(cmd.Env, env(r)...)
			}
			b, err := cmd.CombinedOutput()
			res[r] = rankResult{string(b), err, time.Since(began)}
		}()
	}
	wg.Wait()
	return res
}

// Ranks join, agree, all-reduce and leave; done several times, since the
// store's port passes from the hello's listener to c10d's TCPStore while
// the other ranks connect.
func TestJoinTwoRanks(t *testing.T) {
	for i := range 3 {
		res := runRanks(t, "sum", 2, nil)
		for r, x := range res {
			if x.err != nil || !strings.Contains(x.out, "sum 3") {
				t.Fatalf("round %d, rank %d: %v\n%s", i, r, x.err, x.out)
			}
		}
	}
}

// Ranks started with different WORLD_SIZEs end at once, each with one line
// naming the difference (it was a raw Gloo error).
func TestJoinMismatchedWorldSize(t *testing.T) {
	res := runRanks(t, "sum", 2, func(r int) []string {
		if r == 1 {
			return []string{"WORLD_SIZE=3"}
		}
		return nil
	})
	want := "has WORLD_SIZE=3 but rank 0 on host "
	for r, x := range res {
		if x.err == nil || strings.Count(x.out, want) != 1 || !strings.Contains(x.out, "has WORLD_SIZE=2; start every rank with the same WORLD_SIZE") {
			t.Fatalf("rank %d should refuse naming both sizes: %v\n%s", r, x.err, x.out)
		}
		if x.took > 30*time.Second {
			t.Fatalf("rank %d ended after %v", r, x.took)
		}
	}
	t.Log(lineWith(res[0].out, want))
}

// A rank that dies while another waits in a collective that never
// completes — NCCL's behaviour with a dead peer, which Gloo's would not
// show — ends the waiting rank within the grace, with one line naming the
// rank that died, instead of at the timeout (60 s here, 30 min by default).
func TestJoinDeadRankEndsAStalledWait(t *testing.T) {
	res := runRanks(t, "stall-dead", 2, nil)
	if res[1].err == nil || !strings.Contains(res[1].out, "rank 1: dying") {
		t.Fatalf("rank 1 was to die:\n%s", res[1].out)
	}
	want := "data parallel: rank 0 of 2 stopped waiting in a collective: rank 1 on host "
	if res[0].err == nil || !strings.Contains(res[0].out, want) || !strings.Contains(res[0].out, "ended without a word") {
		t.Fatalf("rank 0 should end naming the dead rank 1 (%q…):\n%s", want, res[0].out)
	}
	if res[0].took > leaveGrace+20*time.Second {
		t.Fatalf("rank 0 ended %v after the start; the grace is %v", res[0].took, leaveGrace)
	}
	t.Logf("rank 0 after %.1fs: %s", res[0].took.Seconds(), lineWith(res[0].out, want))
}

// lineWith is the first line of out containing s.
func lineWith(out, s string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}

// TestJoinChild is one rank of the group tests; it does nothing unless
// started by runRanks.
func TestJoinChild(t *testing.T) {
	scenario := os.Getenv(joinChildEnv)
	if scenario == "" {
		t.Skip("a rank process of the group tests; runs only when they start it")
	}
	g, err := Join(Options{Fatal: func(err error) {
		fmt.Println(err)
		os.Exit(7)
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if err := g.Agree("test", []byte("config: 1\n"), ""); err != nil {
		t.Fatal(err)
	}
	s := torch.NewScope()
	defer s.Close()
	switch scenario {
	case "sum":
		x := torch.FromFloat64([]float64{float64(g.Rank() + 1)})
		if err := g.AllReduce([]*torch.Tensor{x}, torch.ReduceSum); err != nil {
			t.Fatal(err)
		}
		fmt.Printf("rank %d: sum %g; offers %s\n", g.Rank(), x.Item(), g.peers[g.Rank()].Addr)
	case "stall-dead":
		if g.Rank() == 1 {
			time.Sleep(time.Second) // rank 0 is in its stall
			fmt.Println("rank 1: dying")
			os.Exit(3)
		}
		g.collective(func() error { select {} })
	}
	g.Leave(nil)
}
