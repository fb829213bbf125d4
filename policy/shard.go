package policy

// shard.go — one model's training state spread over the data-parallel
// ranks, as ZeRO (stages 1–3) and FSDP do, in three levels:
//
//  1. the float32 master weights and the AdamW moments: each rank keeps and
//     steps 1/W of them; the grads are summed across ranks whole, as
//     without sharding (dist.go), and clipped as before; after the step the
//     ranks all-gather the new weights (rounded to the weights' dtype);
//  2. the grads too (shardgrads.go): each micro-batch's grads are
//     reduce-scattered into float32 sums of this rank's 1/W and freed, layer
//     by layer during the checkpointed backward; the clip norm is the global
//     norm over the sums of every rank;
//  3. the weights too, during the update (shardparams.go): each layer's
//     weights are gathered for the pass that uses them and freed after; the
//     whole model is gathered once at the end of the update, for the
//     rollout engine, evaluation and checkpoints.
//
// Layout. The weights are grouped into units — unit 0 is the embedding, the
// final norm and the head; unit 1+i is decoder layer i — and each unit's
// weights, flattened and laid end to end, are cut into buckets of at most
// BucketBytes of float32. A bucket of n elements is padded to W·c (c =
// ⌈n/W⌉) and rank r owns elements [r·c, (r+1)·c): one float32 master of c
// elements per bucket (zero in the padding, which stays zero), stepped by
// one AdamW over the masters. Collectives go bucket by bucket (c10d's
// reduce-scatter and all-gather, torch/dist.go), so their buffers are
// bounded; the default bucket holds a whole decoder layer of up to 268 M
// parameters, so that a layer is one collective. On NCCL they are
// stream-ordered and overlap the compute (shardcomm.go).
//
// Exactness. AdamW is elementwise, so stepping a rank's slice gives the
// bits the whole tensor would get, and level 1 — same summed grads, same
// clip — trains bit for bit the weights of the unsharded data-parallel run.
// Levels 2 and 3 sum a micro-batch's grads across ranks before summing the
// micro-batches, and the clip norm from per-bucket partial sums: the same
// numbers up to the order of float additions.
//
// What it is not: a checkpoint format. A sharded run's checkpoint is
// consolidated on rank 0 and written as an unsharded one (shardckpt.go), so
// any number of ranks, sharded or not, resumes and exports it. Adapters
// (LoRA) are not sharded (config refuses it).

import (
	"fmt"
	"regexp"
	"strconv"

	"troupe/dist"
	"troupe/model"
	"troupe/optim"
	"troupe/torch"
)

// ShardConfig says how a trainer spreads its model's state over the ranks.
type ShardConfig struct {
	Level int // 0 none; 1 optimizer state; 2 + grads; 3 + weights during the update
	// BucketBytes bounds one bucket: float32 bytes of the sharded ones (0:
	// DefaultShardBucketBytes), and at levels 0 and 1 the bytes of one
	// bucket of the grads' all-reduce (0: torch.DefaultBucketBytes).
	BucketBytes int64
}

// DefaultShardBucketBytes bounds a bucket of the sharded collectives: 1 GiB
// of float32, a decoder layer of up to 268 M parameters (every layer of
// Qwen3 up to 8B) in one bucket.
const DefaultShardBucketBytes = 1 << 30

// allReduceBucketBytes bounds one bucket of the grads' all-reduce (levels 0
// and 1).
func (c ShardConfig) allReduceBucketBytes() int64 {
	if c.BucketBytes > 0 {
		return c.BucketBytes
	}
	return torch.DefaultBucketBytes
}

// shardPiece is the part of one weight that lies in one bucket: elements
// [from, from+n) of the flattened weight at [at, at+n) of the bucket (or,
// in a bucket's own list, of this rank's chunk).
type shardPiece struct {
	param    int
	from, at int64
	n        int64
}

// shardBucket is one bucket of a unit.
type shardBucket struct {
	index  int           // among all buckets: the master's index in the AdamW
	numel  int64         // real elements
	chunk  int64         // elements per rank
	pieces []shardPiece  // the whole bucket
	own    []shardPiece  // this rank's chunk
	master *torch.Tensor // (chunk) float32: this rank's elements, zero-padded
	sums   *torch.Tensor // (chunk) float32 grad sums during an update (levels 2, 3), else nil
}

// sharded is a trainer's sharded state.
type sharded struct {
	level       int
	pg          dist.Collectives
	rank, world int
	params      []*torch.Tensor
	dtype       torch.DType
	units       [][]*shardBucket // unit 0: embedding, final norm, head; 1+i: layer i
	unitParams  [][]int          // the weights of each unit
	buckets     []*shardBucket   // every bucket, in layout order
	opt         *torch.AdamW     // over the buckets' masters
	storages    [][]unitStorage  // level 3: each unit's distinct storages (shardparams.go)
	present     []bool           // level 3: which units' weights are gathered
	mem         heldBytes        // what the update held (peaks)
	reduced     []bool           // levels 2, 3: the units whose grads this micro-batch already reduced
	flight      inFlight         // collectives issued and not finished (shardcomm.go)
	pass        passPosition     // level 3: where the pass is, for the prefetch (shardparams.go)
}

var layerName = regexp.MustCompile(`^model\.layers\.(\d+)\.`)

// newSharded lays out m's weights over the group's ranks and builds the
// masters and their AdamW with the settings s.
func newSharded(m *model.Model, cfg ShardConfig, s optim.Settings, pg dist.Collectives) (sh *sharded, err error) {
	defer torch.Recover(&err)
	named := m.Params()
	if len(named) == 0 {
		return nil, fmt.Errorf("the model has no weights to shard")
	}
	maxElems := cfg.BucketBytes / 4
	if cfg.BucketBytes <= 0 {
		maxElems = DefaultShardBucketBytes / 4
	}
	maxElems = max(maxElems, int64(pg.World())) // every rank owns at least one element of a full bucket
	sh = &sharded{level: cfg.Level, pg: pg, rank: pg.Rank(), world: pg.World(), dtype: named[0].T.DType(),
		units: make([][]*shardBucket, len(m.Layers)+1), unitParams: make([][]int, len(m.Layers)+1)}
	for i, p := range named {
		if !p.T.IsContiguous() {
			return nil, fmt.Errorf("weight %s is not contiguous; sharding lays weights out flat", p.Name)
		}
		if dt := p.T.DType(); dt != torch.Float32 && dt != torch.BFloat16 && dt != torch.Float16 {
			return nil, fmt.Errorf("weight %s is %v; sharded training keeps float32 masters for float32, bfloat16 or float16 weights", p.Name, dt)
		}
		if p.T.DType() != sh.dtype {
			return nil, fmt.Errorf("weight %s is %v, the others %v; sharding needs one dtype", p.Name, p.T.DType(), sh.dtype)
		}
		u := 0
		if g := layerName.FindStringSubmatch(p.Name); g != nil {
			l, _ := strconv.Atoi(g[1])
			if l >= len(m.Layers) {
				return nil, fmt.Errorf("weight %s names layer %d of a model of %d", p.Name, l, len(m.Layers))
			}
			u = l + 1
		}
		sh.params = append(sh.params, p.T)
		sh.unitParams[u] = append(sh.unitParams[u], i)
	}
	sizes := make([]int64, len(sh.params))
	for i, p := range sh.params {
		sizes[i] = p.Numel()
	}
	sh.units, sh.buckets = layoutBuckets(sizes, sh.unitParams, maxElems, sh.rank, sh.world)
	dev := sh.params[0].Device()
	masters := make([]*torch.Tensor, len(sh.buckets))
	for i, b := range sh.buckets {
		b.master = torch.Zeros([]int64{b.chunk}, torch.Float32, dev).Untrack()
		sh.copyOwn(b)
		masters[i] = b.master
	}
	sh.opt = torch.NewAdamW([]torch.AdamWGroup{{
		Params: masters, LR: s.LR, Beta1: s.Beta1, Beta2: s.Beta2, Eps: s.Eps, WeightDecay: s.WeightDecay,
	}}, false)
	sh.reduced = make([]bool, len(sh.units))
	return sh, nil
}

// layoutBuckets lays each unit's weights (sizes[i] elements for weight i)
// end to end and cuts them into buckets of at most maxElems elements, each
// padded to world equal chunks, and lists rank's pieces of every chunk.
func layoutBuckets(sizes []int64, unitParams [][]int, maxElems int64, rank, world int) (units [][]*shardBucket, all []*shardBucket) {
	units = make([][]*shardBucket, len(unitParams))
	for u, ps := range unitParams {
		var b *shardBucket
		for _, i := range ps {
			for from := int64(0); from < sizes[i]; {
				if b == nil || b.numel == maxElems {
					b = &shardBucket{index: len(all)}
					units[u] = append(units[u], b)
					all = append(all, b)
				}
				take := min(sizes[i]-from, maxElems-b.numel)
				b.pieces = append(b.pieces, shardPiece{param: i, from: from, at: b.numel, n: take})
				b.numel += take
				from += take
			}
		}
	}
	for _, b := range all {
		b.chunk = (b.numel + int64(world) - 1) / int64(world)
		lo, hi := int64(rank)*b.chunk, int64(rank+1)*b.chunk
		for _, p := range b.pieces {
			if a, z := max(p.at, lo), min(p.at+p.n, hi); a < z {
				b.own = append(b.own, shardPiece{param: p.param, from: p.from + a - p.at, at: a - lo, n: z - a})
			}
		}
	}
	return units, all
}

// copyOwn sets b's master from the weights (the pieces this rank owns).
func (s *sharded) copyOwn(b *shardBucket) {
	sc := torch.NewScope()
	defer sc.Close()
	for _, p := range b.own {
		b.master.Narrow(0, p.at, p.n).CopyFrom(s.params[p.param].Detach().Reshape(-1).Narrow(0, p.from, p.n))
	}
}

// ownGrads is b's chunk of the weights' grads, (chunk) float32, zero where
// a weight has no grad and in the padding.
func (s *sharded) ownGrads(b *shardBucket) *torch.Tensor {
	g := torch.Zeros([]int64{b.chunk}, torch.Float32, b.master.Device())
	for _, p := range b.own {
		if grad := s.params[p.param].Grad(); grad != nil {
			g.Narrow(0, p.at, p.n).CopyFrom(grad.Reshape(-1).Narrow(0, p.from, p.n))
		}
	}
	return g
}

// stepWholeGrads is level 1's optimizer step: every rank holds the summed,
// clipped grads; each steps its masters from its chunk of them, bucket by
// bucket (so one bucket's float32 grad exists at a time), and the new
// weights are all-gathered.
func (s *sharded) stepWholeGrads() error {
	for _, b := range s.buckets {
		sc := torch.NewScope()
		b.master.SetGrad(s.ownGrads(b))
		s.opt.Step()
		b.master.SetGrad(nil)
		sc.Close()
	}
	if err := s.publish(allUnits(len(s.units))); err != nil {
		return err
	}
	return s.settle()
}

// publish all-gathers the masters of the given units, rounded to the
// weights' dtype, into the weights, bucket by bucket with the next bucket's
// gather in flight while one is copied in.
func (s *sharded) publish(units []int) error {
	var prev *gathering
	for _, u := range units {
		for _, b := range s.units[u] {
			g, err := s.issueGather(-1, []*shardBucket{b})
			if err == nil && prev != nil {
				err = s.completeGather(prev)
			}
			if err != nil {
				if g != nil {
					s.dropGathering(g)
				}
				return err
			}
			prev = g
		}
		if err := s.boundary(); err != nil {
			if prev != nil {
				s.dropGathering(prev)
			}
			return fmt.Errorf("gathering the weights: %w", err)
		}
	}
	if prev != nil {
		return s.completeGather(prev)
	}
	return nil
}

// allUnits lists units 0 … n−1.
func allUnits(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// setLR sets the masters' learning rate.
func (s *sharded) setLR(lr float64) { s.opt.SetLR(0, lr) }

// zeroGrads frees the weights' grads and the grad sums.
func (s *sharded) zeroGrads() {
	for _, p := range s.params {
		p.ZeroGrad()
	}
	s.freeSums()
}

// free releases the masters, their state and any grad sums.
func (s *sharded) free() {
	if s == nil {
		return
	}
	s.dropInFlight()
	s.opt.Free()
	for _, b := range s.buckets {
		torch.FreeAll(b.master, b.sums)
		b.master, b.sums = nil, nil
	}
}

// stateBytes is what this rank holds of the optimizer state: masters and
// moments.
func (s *sharded) stateBytes() (masters, moments int64) {
	sc := torch.NewScope()
	defer sc.Close()
	for i, b := range s.buckets {
		masters += b.master.Numel() * 4
		if st := s.opt.State(i); st.ExpAvg != nil {
			moments += (st.ExpAvg.Numel() + st.ExpAvgSq.Numel()) * 4
		}
	}
	return masters, moments
}

// sumsBytes is what the grad sums hold now.
func (s *sharded) sumsBytes() int64 {
	var n int64
	for _, b := range s.buckets {
		if b.sums != nil {
			n += b.sums.Numel() * 4
		}
	}
	return n
}
