package run

// dataparallel.go — what the run does with its data-parallel group
// (package dist: launch, rendezvous, agreement, collectives, failures).
// One process per device, the same config and checkpoint on every rank.
// Per step:
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
// A rank that dies or fails ends the others' waits for it (dist/watch.go);
// they stop with an error naming the step and the rank or host they lost
// (dist/peers.go), and the newest checkpoint (written atomically) stays
// intact.
//
// What it is not: the group itself (package dist) or the sharded update
// (policy/shard*.go).

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"troupe/config"
	"troupe/dist"
	"troupe/torch"
)

// weightCheckEvery is how often (in steps) the ranks compare weight hashes.
const weightCheckEvery = 10

// errorPrefix starts the line a failed command prints (cmd/train/main.go).
const errorPrefix = "train: "

// joinGroup joins the group the launcher's variables describe (nil: one
// process). A rank that must end because another left while it waited in
// a collective prints its line as a failed run does, and exits.
func joinGroup(cfg *config.Config) (*dist.Group, error) {
	return dist.Join(dist.Options{CUDA: usesCUDA(cfg), Fatal: func(err error) {
		fmt.Fprintln(os.Stderr, errorPrefix+err.Error())
		dist.ReportToLauncher(errorPrefix + err.Error())
		os.Exit(1)
	}})
}

// placeOnLocalDevice moves every model configured on "cuda" to this rank's
// device (dist: LOCAL_RANK among the visible devices; a model pinned to
// cuda:N stays there).
func placeOnLocalDevice(d *dist.Group, cfg *config.Config) {
	if d == nil || d.Ordinal() < 0 {
		return
	}
	local := "cuda:" + strconv.Itoa(d.Ordinal())
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

// checkSameWeights compares a hash of every trained model's weights across
// ranks: the sum and the position-weighted sum of every tensor, in float64.
func checkSameWeights(d *dist.Group, t *team, step int) (err error) {
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
	all, err := d.AllGather(torch.FromFloat64(hash))
	if err != nil {
		return fmt.Errorf("data parallel: comparing weights: %w", err)
	}
	flat := all.Float64s()
	for r := 1; r < d.World(); r++ {
		for i := range hash {
			if flat[r*len(hash)+i] != flat[i] {
				return fmt.Errorf("data parallel: after step %d the weights of rank %d differ from rank 0's (tensor %d of the trained models); the ranks no longer train one model — report this with the run's config", step, r, i/2)
			}
		}
	}
	return nil
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
