package policy

// Sharded updates on Gloo: the collectives an update issues at each level,
// pinned (two ranks, real processes: the test binary re-executes itself as
// each rank), and the weight version a level-3 update bumps even when it
// skips its step (a group of one, in this process).

import (
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"troupe/torch"
)

const shardUpdateChildEnv = "TROUPE_SHARD_UPDATE_CHILD" // "level rank world port"

// shardUpdateBucket is the tests' bucket: 16 KiB, 4,096 float32 elements.
// The tiny model (tinyConfig: 37,824 weights) then has 11 buckets: unit 0
// (embedding 9,600, final norm 32, untied head 9,600: 19,232 elements) 5,
// each of the 2 layers (9,296 elements) 3.
const shardUpdateBucket = 16 << 10

// shardUpdateRows are the update of the count test: 5 rows of one agent,
// micro-batches of one row, 2 mini-batches (of 3 and 2 micro-batches: with
// 2 ranks, one rank runs a ghost in the first).
func shardUpdateRows() []Sequence {
	var seqs []Sequence
	for i := range 5 {
		seqs = append(seqs, Sequence{Agent: "a", Prompt: []int{1, 2, 3 + i}, Response: []int{10 + i, 11, 12 + 2*i}, Advantage: float64(i) - 2})
	}
	return seqs
}

func shardUpdateSettings() TrainerConfig {
	s := trainSettings()
	s.ActivationCheckpointing = true
	s.UpdatesPerStep = 2
	return TrainerConfig{Group: group("m", s, "a"), Temperature: 1}
}

// The collectives of one update at W = 2, per level, by kind (AR
// all-reduce, RS reduce-scatter, AG all-gather into), with buckets of
// 16 KiB. A change to these numbers is a change to the update's
// communication; say why in the commit. How they arise (2 mini-batches:
// 3 rounds of micro-batches over the ranks, ghosts included; 11 buckets,
// 3 units):
//
//	level 0: AR 2 × 11 (the grads: embedding and head in place in 3
//	         slices each, the layers' and the norm's 18,624 packed into 5)
//	         + 1 (the rows' statistics) = 23
//	level 1: AR 23 as level 0; AG 2 steps × 11 buckets = 22
//	level 2: AR 2 (the grad norm) + 1 = 3; RS 3 rounds × 11 = 33; AG 22
//	level 3: AR 3; RS 33; AG: 6 per pass over the 2 layers (3 buckets
//	         each, the next one prefetched) × (3 no-grad forwards + 3
//	         forwards + 3 backwards) = 54, + 2 steps × unit 0's 5 = 10, + the
//	         end of the update's 6 = 70
//
// The staging buffers stay within the bucket at every level.
func TestCollectivesPerUpdate(t *testing.T) {
	want := map[int][3]int64{0: {23, 0, 0}, 1: {23, 0, 22}, 2: {3, 33, 22}, 3: {3, 33, 70}}
	for level := range 4 {
		outs, errs := runShardRanks(t, level, 2)
		for r := range outs {
			if errs[r] != nil {
				t.Fatalf("level %d, rank %d: %v\n%s", level, r, errs[r], outs[r])
			}
			var st torch.DistStats
			line := outs[r][strings.Index(outs[r], "collectives ")+len("collectives "):]
			if _, err := fmt.Sscanf(line, "%d %d %d %d %d %d %d", &st.AllReduce, &st.ReduceScatter, &st.AllGatherInto,
				&st.AllGather, &st.Broadcast, &st.Barrier, &st.LargestBuffer); err != nil {
				t.Fatalf("level %d, rank %d: no counts in the output (%v):\n%s", level, r, err, outs[r])
			}
			got := [3]int64{st.AllReduce, st.ReduceScatter, st.AllGatherInto}
			t.Logf("level %d, rank %d: all-reduce %d, reduce-scatter %d, all-gather %d; largest staging buffer %d bytes", level, r, got[0], got[1], got[2], st.LargestBuffer)
			if got != want[level] || st.AllGather+st.Broadcast+st.Barrier != 0 {
				t.Fatalf("level %d, rank %d: %+v; want all-reduce, reduce-scatter, all-gather %v and nothing else", level, r, st, want[level])
			}
			if st.LargestBuffer > shardUpdateBucket {
				t.Fatalf("level %d, rank %d: a staging buffer of %d bytes, above the %d-byte bucket", level, r, st.LargestBuffer, shardUpdateBucket)
			}
		}
	}
}

// pgGroup is a process group as the update takes it (dist.Collectives).
type pgGroup struct{ pg *torch.ProcessGroup }

func (g pgGroup) Rank() int  { return g.pg.Rank }
func (g pgGroup) World() int { return g.pg.World }
func (g pgGroup) AllReduce(ts []*torch.Tensor, op torch.ReduceOp) error {
	return g.pg.AllReduce(ts, op)
}
func (g pgGroup) AllReduceBuckets(ts []*torch.Tensor, op torch.ReduceOp, n int64) error {
	return g.pg.AllReduceBuckets(ts, op, n)
}
func (g pgGroup) AllGather(t *torch.Tensor) (*torch.Tensor, error) { return g.pg.AllGather(t) }
func (g pgGroup) ReduceScatter(in, out *torch.Tensor) error        { return g.pg.ReduceScatter(in, out) }
func (g pgGroup) AllGatherInto(in, out *torch.Tensor) error        { return g.pg.AllGatherInto(in, out) }
func (g pgGroup) ReduceScatterAsync(in, out *torch.Tensor) (*torch.Work, error) {
	return g.pg.ReduceScatterAsync(in, out)
}
func (g pgGroup) AllGatherIntoAsync(in, out *torch.Tensor) (*torch.Work, error) {
	return g.pg.AllGatherIntoAsync(in, out)
}
func (g pgGroup) Check(w *torch.Work) error { return w.Check() }

// runShardRanks runs world ranks of TestShardUpdateChild at level.
func runShardRanks(t *testing.T, level, world int) ([]string, []error) {
	t.Helper()
	if gloo, _ := torch.DistBackends(); !gloo {
		t.Fatal("this build of the shim has no Gloo: install libgloo-dev and rebuild it (make setup)")
	}
	port := freeTCPPort(t)
	outs, errs := make([]string, world), make([]error, world)
	var wg sync.WaitGroup
	for r := range world {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run", "^TestShardUpdateChild$", "-test.v")
			cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d %d %d %d", shardUpdateChildEnv, level, r, world, port), "TROUPE_THREADS=1")
			b, err := cmd.CombinedOutput()
			outs[r], errs[r] = string(b), err
		}()
	}
	wg.Wait()
	return outs, errs
}

func freeTCPPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestShardUpdateChild is one rank of TestCollectivesPerUpdate.
func TestShardUpdateChild(t *testing.T) {
	spec := os.Getenv(shardUpdateChildEnv)
	if spec == "" {
		t.Skip("a rank process of TestCollectivesPerUpdate; runs only when it starts it")
	}
	var level, rank, world, port int
	if _, err := fmt.Sscanf(spec, "%d %d %d %d", &level, &rank, &world, &port); err != nil {
		t.Fatal(err)
	}
	pg, err := torch.NewProcessGroup(torch.DistConfig{Host: "127.0.0.1", Port: port, Rank: rank, World: world, Timeout: time.Minute, Gloo: true})
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	cfg := shardUpdateSettings()
	cfg.Policy, cfg.Dist, cfg.Shard = tinyModel(t, 5, torch.Float32), pgGroup{pg}, ShardConfig{Level: level, BucketBytes: shardUpdateBucket}
	tr := newTrainer(t, cfg)
	before := pg.Stats()
	update(t, tr, shardUpdateRows(), 0)
	st := pg.Stats().Sub(before)
	fmt.Printf("collectives %d %d %d %d %d %d %d\n", st.AllReduce, st.ReduceScatter, st.AllGatherInto, st.AllGather, st.Broadcast, st.Barrier, st.LargestBuffer)
}

// At level 3 an update frees the layers' weights and gathers them into new
// memory, so the model's weight version moves even when every step is
// skipped (a non-finite grad norm): an engine keeping CUDA graphs captures
// them again rather than replaying kernels on freed addresses. The weights
// come back unchanged.
func TestShardLevel3SkippedUpdateBumpsTheWeightVersion(t *testing.T) {
	checkLeaks(t)
	pg, err := torch.NewProcessGroup(torch.DistConfig{Host: "127.0.0.1", Port: freeTCPPort(t), Rank: 0, World: 1, Timeout: time.Minute, Gloo: true})
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	cfg := shardUpdateSettings()
	m := tinyModel(t, 5, torch.Float32)
	cfg.Policy, cfg.Dist, cfg.Shard = m, pgGroup{pg}, ShardConfig{Level: 3, BucketBytes: shardUpdateBucket}
	tr := newTrainer(t, cfg)
	weights, version := snapshot(m), m.Version()
	huge := shardUpdateRows()
	for i := range huge {
		huge[i].Advantage = 1e30 * math.Copysign(1, huge[i].Advantage+0.5) // squares overflow float32: the norm is +Inf
	}
	met := update(t, tr, huge, 0)
	if met[MetricKey("a", "updates")] != 0 || met[MetricKey("a", "skipped_steps")] != 2 {
		t.Fatalf("updates %g, skipped %g; want every step skipped", met[MetricKey("a", "updates")], met[MetricKey("a", "skipped_steps")])
	}
	if m.Version() == version {
		t.Fatal("a level-3 update moved the weights' storage and left the weight version as it was")
	}
	if !identical(weights, snapshot(m)) {
		t.Fatal("a skipped level-3 update changed the weights")
	}
}
