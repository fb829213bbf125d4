package policy

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"troupe/torch"
)

// abandonChildEnv makes the test binary one rank of TestFailedUpdateIssuesNoCollective:
// "rank world port".
const abandonChildEnv = "TROUPE_POLICY_ABANDON_CHILD"

// counting is the update's Collectives over a real process group, counting
// what it issues. On the failing rank the first reduce-scatter — inside
// micro-batch 0's backward at shard level 3 — fails without being issued:
// a rank-local error in the middle of the update, as a CUDA out-of-memory
// in one rank's backward would be.
type counting struct {
	pg     *torch.ProcessGroup
	fail   bool // this rank fails
	failed bool // and has
	after  []string
}

func (c *counting) Rank() int  { return c.pg.Rank }
func (c *counting) World() int { return c.pg.World }

func (c *counting) note(what string) {
	if c.failed {
		c.after = append(c.after, what)
	}
}

func (c *counting) AllReduce(ts []*torch.Tensor, op torch.ReduceOp) error {
	c.note("all-reduce")
	return c.pg.AllReduce(ts, op)
}

func (c *counting) AllGather(t *torch.Tensor) (*torch.Tensor, error) {
	c.note("all-gather")
	return c.pg.AllGather(t)
}

func (c *counting) ReduceScatter(in, out *torch.Tensor) error {
	if c.fail && !c.failed {
		c.failed = true
		return errors.New("injected: out of memory in the backward")
	}
	c.note("reduce-scatter")
	return c.pg.ReduceScatter(in, out)
}

func (c *counting) AllGatherInto(in, out *torch.Tensor) error {
	c.note("all-gather-into")
	return c.pg.AllGatherInto(in, out)
}

func (c *counting) AllReduceBuckets(ts []*torch.Tensor, op torch.ReduceOp, bucketBytes int64) error {
	c.note("all-reduce")
	return c.pg.AllReduceBuckets(ts, op, bucketBytes)
}

func (c *counting) ReduceScatterAsync(in, out *torch.Tensor) (*torch.Work, error) {
	if c.fail && !c.failed {
		c.failed = true
		return nil, errors.New("injected: out of memory in the backward")
	}
	c.note("reduce-scatter")
	return c.pg.ReduceScatterAsync(in, out)
}

func (c *counting) AllGatherIntoAsync(in, out *torch.Tensor) (*torch.Work, error) {
	c.note("all-gather-into")
	return c.pg.AllGatherIntoAsync(in, out)
}

func (c *counting) Check(w *torch.Work) error { return w.Check() }

// A rank whose update fails in the middle of the backward at shard level 3
// issues no further collective (its end of the update gathers nothing the
// other rank is not gathering), and both ranks end: the other's pending
// collective fails once the failing rank leaves the group.
func TestFailedUpdateIssuesNoCollective(t *testing.T) {
	if gloo, _ := torch.DistBackends(); !gloo {
		t.Fatal("this build of the shim has no Gloo: install libgloo-dev and rebuild it (make setup)")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	outs := make([]string, 2)
	took := make([]time.Duration, 2)
	var wg sync.WaitGroup
	began := time.Now()
	for r := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run", "^TestAbandonChild$", "-test.v")
			cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d 2 %d", abandonChildEnv, r, port), "TROUPE_THREADS=1")
			b, _ := cmd.CombinedOutput()
			outs[r], took[r] = string(b), time.Since(began)
		}()
	}
	wg.Wait()
	if !strings.Contains(outs[1], "rank 1: the update failed: ") || !strings.Contains(outs[1], "injected: out of memory") {
		t.Fatalf("rank 1 did not fail as injected:\n%s", outs[1])
	}
	if !strings.Contains(outs[1], "rank 1: collectives after the failure: []") {
		t.Fatalf("rank 1 issued collectives after its failure:\n%s", outs[1])
	}
	if !strings.Contains(outs[0], "rank 0: the update failed: ") {
		t.Fatalf("rank 0 did not end with an error once rank 1 left:\n%s", outs[0])
	}
	for r, d := range took {
		if d > 50*time.Second { // the group's timeout is 60 s: the end came from the failure, not the timeout
			t.Fatalf("rank %d ended after %v", r, d)
		}
	}
	t.Logf("rank 1 ended after %.1fs, rank 0 after %.1fs", took[1].Seconds(), took[0].Seconds())
}

// TestAbandonChild is one rank of TestFailedUpdateIssuesNoCollective; it does
// nothing unless started by it.
func TestAbandonChild(t *testing.T) {
	spec := os.Getenv(abandonChildEnv)
	if spec == "" {
		t.Skip("a rank process of TestFailedUpdateIssuesNoCollective")
	}
	f := strings.Fields(spec)
	rank, _ := strconv.Atoi(f[0])
	world, _ := strconv.Atoi(f[1])
	port, _ := strconv.Atoi(f[2])
	pg, err := torch.NewProcessGroup(torch.DistConfig{Host: "127.0.0.1", Port: port, Rank: rank, World: world, Timeout: time.Minute, Gloo: true, GlooAddr: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	c := &counting{pg: pg, fail: rank == 1}
	s := trainSettings()
	s.ActivationCheckpointing = true
	m := tinyModel(t, 11, torch.Float32)
	tr := newTrainer(t, TrainerConfig{Group: group("m", s, "a"), Policy: m, Temperature: 1, Dist: c, Shard: ShardConfig{Level: 3}})
	seqs := append(contrast("a"), contrast("a")...) // 4 micro-batches: 2 per rank
	_, err = tr.Update(seqs, 0)
	if err == nil {
		t.Fatalf("rank %d: the update succeeded", rank)
	}
	fmt.Printf("rank %d: the update failed: %v\n", rank, err)
	fmt.Printf("rank %d: collectives after the failure: %v\n", rank, c.after)
}
