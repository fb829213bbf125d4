package run

// dist.go — data parallel: one process per device, a c10d process group
// (torch/dist.go: Gloo for CPU tensors, NCCL for CUDA) over a TCPStore that
// rank 0 hosts at MASTER_ADDR (rendezvous.go says which port).
//
// `train --nproc N …` launches N ranks of this program on this node;
// torchrun launches them on one node or several, or one `train` per device
// is started by hand with RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and
// MASTER_PORT set. Every rank loads the same config and checkpoint, which
// the ranks check when they meet (distconfig.go). Per step:
//
//  1. the task iterator (identical on every rank) draws the step's
//     prompts_per_step tasks; rank r rolls out the r-th contiguous slice, with
//     the prompt and trajectory ids — and so the seeds — the whole batch
//     would give those tasks, so groups never straddle ranks;
//  2. the rows are all-gathered (in rank order: the one-process order), and
//     every rank computes the advantages over the whole batch;
//  3. each trained model's update splits the rows as one process would and
//     computes its share of the micro-batches; the grads are summed across
//     ranks before clipping (policy/dist.go), so the weights stay identical
//     on every rank — checked by a hash every weightCheckEvery steps;
//  4. rank 0 alone writes metrics, samples, checkpoints and exports; every
//     rank runs the evaluations (the same tasks and seeds, so the others
//     never wait a whole evaluation in a collective), rank 0 reports them;
//     an interrupt on any rank stops every rank after the step.
//
// A rank that dies makes the others' next collective fail; they stop with an
// error naming the step and the rank or host they lost (peers.go), the
// launcher names the rank that died first, and the newest checkpoint
// (written atomically) stays intact.

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"troupe/config"
	"troupe/rollout"
	"troupe/torch"
)

// weightCheckEvery is how often (in steps) the ranks compare weight hashes.
const weightCheckEvery = 10

// RankExitEnv, when "STEP:RANK", makes that rank exit abruptly in the middle
// of that step (after its rollout, before the update): the tests' way to
// kill a rank at a known point.
const RankExitEnv = "TROUPE_TEST_RANK_EXIT"

// RankPauseEnv, when "STEP:RANK:FILE", makes that rank write its process id
// to FILE at the same point and wait until FILE is removed: the tests' way
// to cut a link or kill a rank from outside at a known point. It acts once
// (FILE.done marks it done); RankExitEnv acts on a group's first start only,
// not after a torchrun restart.
const RankPauseEnv = "TROUPE_TEST_RANK_PAUSE"

// dataParallel is this process's place in the group; nil means one process.
type dataParallel struct {
	pg                 *torch.ProcessGroup
	rank, world, local int
	launch             *launch // what the launcher said (rendezvous.go)
	peers              []peer  // every rank, in rank order (peers.go), once they agreed
	stopProbes         func()
	failed             bool // a collective failed: answer the peers' probes a while before exiting (peers.go)
}

// lead says whether this process writes the run's files.
func (d *dataParallel) lead() bool { return d == nil || d.rank == 0 }

// group is the process group, nil for one process.
func (d *dataParallel) group() *torch.ProcessGroup {
	if d == nil {
		return nil
	}
	return d.pg
}

// worldSize is the number of ranks (1 for one process).
func (d *dataParallel) worldSize() int {
	if d == nil {
		return 1
	}
	return d.world
}

func (d *dataParallel) close() {
	if d == nil {
		return
	}
	d.pg.Close()
	if d.failed {
		time.Sleep(probeTimeout)
	}
	d.stopProbes()
}

// joinFromEnv joins the group the launcher's variables describe
// (rendezvous.go), or returns nil for one process.
func joinFromEnv(cuda bool) (*dataParallel, error) {
	l, err := readLaunch()
	if l == nil || err != nil {
		return nil, err
	}
	l.setThreads()
	if cuda {
		// before any CUDA work (NCCL included): this rank's device becomes the
		// thread's current one, so nothing creates a context on cuda:0
		if err := torch.SetDevice(l.local); err != nil {
			return nil, fmt.Errorf("data parallel: %s (LOCAL_RANK %d): %w", l.where(), l.local, err)
		}
	}
	gloo, nccl := torch.DistBackends()
	if !gloo && !(cuda && nccl) {
		return nil, fmt.Errorf("data parallel: this build of the shim has no Gloo backend, which CPU ranks need; install libgloo-dev and rebuild it (make setup)")
	}
	if cuda && !nccl {
		return nil, fmt.Errorf("data parallel: the models are on CUDA but this build of the shim has no NCCL; build it with scripts/gpu/build-shim.sh on a machine with NCCL")
	}
	addr := l.localAddr()
	probeAt, stopProbes, err := listenForProbes(addr, l.rank)
	if err != nil {
		return nil, err
	}
	// Gloo carries CPU tensors when the build has it; a GPU build without
	// Gloo headers sends them through NCCL on the rank's device
	pg, err := torch.NewProcessGroup(torch.DistConfig{Host: l.masterAddr, Port: l.storePort, Rank: l.rank, World: l.world,
		Timeout: l.timeout, Gloo: gloo, NCCL: cuda, Device: l.local, GlooInterfaces: l.glooIfaces, GlooAddr: addr})
	if err != nil {
		stopProbes()
		return nil, fmt.Errorf("data parallel: %s joining at %s:%d (the store's port: %s): %w", l.where(), l.masterAddr, l.storePort, l.storeWhy, err)
	}
	d := &dataParallel{pg: pg, rank: l.rank, world: l.world, local: l.local, launch: l, stopProbes: stopProbes}
	d.peers = []peer{{Rank: l.rank, Node: l.node, Addr: addr, Probe: probeAt}} // this rank alone until agree
	return d, nil
}

// placeOnLocalDevice moves every model configured on "cuda" to this rank's
// device, cuda:LOCAL_RANK (a model pinned to cuda:N stays there).
func (d *dataParallel) placeOnLocalDevice(cfg *config.Config) {
	if d == nil {
		return
	}
	local := "cuda:" + strconv.Itoa(d.local)
	if cfg.Run.Device == "cuda" {
		cfg.Run.Device = local
	}
	for name, m := range cfg.Models {
		if m.Device == "cuda" {
			m.Device = local
			cfg.Models[name] = m
		}
	}
}

// check refuses a config the ranks cannot split.
func (d *dataParallel) check(cfg *config.Config) error {
	if d == nil {
		return nil
	}
	if p := cfg.Batch.PromptsPerStep; p%d.world != 0 {
		return fmt.Errorf("batch.prompts_per_step is %d, which %d ranks cannot split evenly; make it a multiple of %d", p, d.world, d.world)
	}
	return nil
}

// part is this rank's slice [lo, hi) of n tasks.
func (d *dataParallel) part(n int) (lo, hi int) {
	if d == nil {
		return 0, n
	}
	return d.rank * n / d.world, (d.rank + 1) * n / d.world
}

// gatherSamples returns every rank's rows, in rank order.
func (d *dataParallel) gatherSamples(own []rollout.Sample) ([]rollout.Sample, error) {
	return gatherJSON(d, own, "the rollout rows")
}

// gatherRecords returns every rank's evaluation records, in rank order.
func (d *dataParallel) gatherRecords(own []rollout.EpisodeRecord) ([]rollout.EpisodeRecord, error) {
	return gatherJSON(d, own, "the evaluation episodes")
}

// gatherJSON all-gathers every rank's items (as JSON), in rank order.
func gatherJSON[T any](d *dataParallel, own []T, what string) ([]T, error) {
	if d == nil {
		return own, nil
	}
	data, err := json.Marshal(own)
	if err != nil {
		return nil, fmt.Errorf("data parallel: encoding %s: %w", what, err)
	}
	parts, err := d.gatherBytes(data)
	if err != nil {
		return nil, fmt.Errorf("data parallel: gathering %s: %w", what, err)
	}
	var all []T
	for r, p := range parts {
		var items []T
		if err := json.Unmarshal(p, &items); err != nil {
			return nil, fmt.Errorf("data parallel: %s of rank %d: %w", what, r, err)
		}
		all = append(all, items...)
	}
	return all, nil
}

// gatherBytes all-gathers one byte string per rank (lengths first, then the
// strings padded to the longest).
func (d *dataParallel) gatherBytes(b []byte) (parts [][]byte, err error) {
	defer torch.Recover(&err)
	s := torch.NewScope()
	defer s.Close()
	lens, err := d.pg.AllGather(torch.FromInt64([]int64{int64(len(b))}))
	if err != nil {
		return nil, err
	}
	n := lens.Int64s()
	longest := int64(1)
	for _, l := range n {
		longest = max(longest, l)
	}
	padded := make([]byte, longest)
	copy(padded, b)
	all, err := d.pg.AllGather(torch.FromBytes(padded, torch.Uint8, longest))
	if err != nil {
		return nil, err
	}
	flat := all.Bytes()
	for r, l := range n {
		parts = append(parts, flat[int64(r)*longest:int64(r)*longest+l])
	}
	return parts, nil
}

// anyTrue is true on every rank when it is true on one.
func (d *dataParallel) anyTrue(v bool) (bool, error) {
	if d == nil {
		return v, nil
	}
	x := 0.0
	if v {
		x = 1
	}
	var out bool
	err := func() (err error) {
		defer torch.Recover(&err)
		s := torch.NewScope()
		defer s.Close()
		t := torch.FromFloat64([]float64{x})
		if err := d.pg.AllReduce([]*torch.Tensor{t}, torch.ReduceMax); err != nil {
			return err
		}
		out = t.Item() > 0
		return nil
	}()
	if err != nil {
		return false, fmt.Errorf("data parallel: %w", err)
	}
	return out, nil
}

// checkSameWeights compares a hash of every trained model's weights across
// ranks: the sum and the position-weighted sum of every tensor, in float64.
func (d *dataParallel) checkSameWeights(t *team, step int) (err error) {
	if d == nil {
		return nil
	}
	defer torch.Recover(&err)
	s := torch.NewScope()
	defer s.Close()
	var hash []float64
	const chunk = 1 << 22 // elements hashed at once: a few tens of MB in float64, whatever the tensor
	for _, tr := range t.trained {
		for _, p := range t.models[tr.Name].Params() {
			flat := p.T.Detach().Reshape(-1)
			sum, weighted := 0.0, 0.0
			for off := int64(0); off < flat.Size(0); off += chunk {
				cs := torch.NewScope()
				n := min(chunk, flat.Size(0)-off)
				x := flat.Narrow(0, off, n).ToDType(torch.Float64)
				w := torch.Arange(float64(off+1), float64(off+n+1), 1, torch.Float64, x.Device())
				sum += x.Sum().Item()
				weighted += x.Mul(w).Sum().Item()
				cs.Close()
			}
			hash = append(hash, sum, weighted)
		}
	}
	all, err := d.pg.AllGather(torch.FromFloat64(hash))
	if err != nil {
		return fmt.Errorf("data parallel: comparing weights: %w", err)
	}
	flat := all.Float64s()
	for r := 1; r < d.world; r++ {
		for i := range hash {
			if flat[r*len(hash)+i] != flat[i] {
				return fmt.Errorf("data parallel: after step %d the weights of rank %d differ from rank 0's (tensor %d of the trained models); the ranks no longer train one model — report this with the run's config", step, r, i/2)
			}
		}
	}
	return nil
}

// maybeExit is the RankExitEnv and RankPauseEnv hook.
func (d *dataParallel) maybeExit(step int) {
	if d == nil {
		return
	}
	here := fmt.Sprintf("%d:%d", step, d.rank)
	if v := os.Getenv(RankExitEnv); v == here && LauncherRestart() == 0 {
		fmt.Fprintf(os.Stderr, "rank %d: exiting in step %d (%s)\n", d.rank, step, RankExitEnv)
		os.Exit(3)
	}
	if v := os.Getenv(RankPauseEnv); strings.HasPrefix(v, here+":") {
		file := strings.TrimPrefix(v, here+":")
		if _, err := os.Stat(file + ".done"); err == nil {
			return
		}
		if err := os.WriteFile(file, []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
			fmt.Fprintf(os.Stderr, "rank %d: %s: %v\n", d.rank, RankPauseEnv, err)
			return
		}
		for {
			if _, err := os.Stat(file); err != nil {
				os.WriteFile(file+".done", nil, 0o644)
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// usesCUDA says whether any model of the run is on a GPU.
func usesCUDA(cfg *config.Config) bool {
	for _, tr := range cfg.Trained() {
		if strings.HasPrefix(tr.Model.Device, "cuda") {
			return true
		}
	}
	return false
}
