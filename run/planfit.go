package run

// planfit.go — whether a memory plan (plan.go) fits its GPUs, and what
// would make it fit. A device fits when its peak plus the slack the CUDA
// caching allocator and the CUDA context need stays within its memory.
// When one does not, remedies are worked out by planning the config again
// with one change each — activation checkpointing, smaller micro-batches,
// grads summed in the model's dtype, the training state sharded over more
// ranks, adapters instead of full weights, one shared model — and those
// that fit are named, best first: changes that leave the run's results as
// they are, then those that need more GPUs (sharded levels 1–3 train the
// same model as one process, docs/scaling.md), then those that change the
// numerics, then those that change what is trained. `train plan` and
// `train check` exit non-zero on a plan that does not fit.
//
// What it is not: a search over every combination. A pair is tried only
// when no single change fits (checkpointing or smaller micro-batches
// together with sharding), and the slack is a rule of thumb, not a
// measurement of the allocator.

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"troupe/config"
	"troupe/optim"
)

// planSlack is what a GPU of capacity bytes needs beyond the plan's peak:
// 1 GiB for the CUDA context, cuBLAS's and NCCL's workspaces, plus 6 % of
// the device for the caching allocator's fragmentation — 5.8 GiB of 80.
func planSlack(capacity int64) int64 { return 1<<30 + capacity*6/100 }

// peak is the device's peak in the plan: the rollout (resident and the
// engines' arenas) or the update (resident, the update's transients, and
// the arenas too when engine.release is off), whichever is larger.
func (d *devicePlan) peak() int64 {
	resident, arenas := d.sum(d.resident), d.sum(d.arenas)
	during := resident + d.sum(d.update)
	if !d.released {
		during += arenas
	}
	return max(resident+arenas, during)
}

// fits: a CPU always does (its memory is checked when the run starts); a
// GPU when its peak and the slack fit its capacity.
func (d *devicePlan) fits() bool {
	return d.capacity == 0 || d.peak()+planSlack(d.capacity) <= d.capacity
}

// overflow is the first GPU of p that does not fit, or nil.
func (p plan) overflow() *devicePlan {
	for _, d := range p {
		if !d.fits() {
			return d
		}
	}
	return nil
}

// worst is the largest GPU peak of p.
func (p plan) worst() (n int64) {
	for _, d := range p {
		if d.capacity > 0 {
			n = max(n, d.peak())
		}
	}
	return n
}

// remedy is one change to a config, planned.
type remedy struct {
	sets  []string // --set key=value
	ranks int      // --nproc; 0 or 1: one process
	cost  int      // 0 same results, 1 more GPUs, 2 other numerics, 3 trains something else
	why   string   // what the change costs, for the line
	peak  int64    // the largest GPU peak with it
	fits  bool
}

func (r remedy) flags() string {
	var parts []string
	if r.ranks > 1 {
		parts = append(parts, fmt.Sprintf("--nproc %d", r.ranks))
	}
	for _, s := range r.sets {
		parts = append(parts, "--set "+s)
	}
	return strings.Join(parts, " ")
}

// planner plans a config with extra --set values on some number of ranks;
// plan.go's Plan and check.go's Check give it the config's path and flags.
type planner struct {
	path     string
	sets     []string
	capacity int64
	prompt   int
}

func (pl planner) plan(extra []string, ranks int) (plan, *config.Config, error) {
	cfg, err := config.LoadForPlan(pl.path, append(append([]string(nil), pl.sets...), extra...))
	if err != nil {
		return nil, nil, err
	}
	if ranks <= 1 {
		ranks = 0
	}
	p, err := memoryPlan(cfg, pl.capacity, pl.prompt, ranks)
	return p, cfg, err
}

// candidates are the single changes worth planning for cfg on ranks ranks.
func candidates(cfg *config.Config, ranks int) []remedy {
	var out []remedy
	checkpointed, mbs, mbt, float32Sums, full := true, 0, 0, false, false
	for _, tr := range cfg.Trained() {
		s := cfg.Settings(tr)
		checkpointed = checkpointed && s.ActivationCheckpointing
		mbs, mbt = max(mbs, s.MicroBatchSize), max(mbt, s.MicroBatchTokens)
		if tr.Model.DType != "float32" && s.GradAccumDType != optim.AccumParam {
			float32Sums = true
		}
		if tr.LoRA == nil {
			full = true
		}
	}
	if !checkpointed {
		out = append(out, remedy{sets: []string{"optim.activation_checkpointing=true"}, why: "same results; one more forward of the blocks per micro-batch"})
	}
	switch {
	case mbt > 1024:
		out = append(out, remedy{sets: []string{fmt.Sprintf("optim.micro_batch_tokens=%d", mbt/2)}, why: "same results up to rounding; more, smaller micro-batches"})
	case mbt == 0 && mbs > 1:
		out = append(out, remedy{sets: []string{fmt.Sprintf("optim.micro_batch_size=%d", mbs/2)}, why: "same results up to rounding; more, smaller micro-batches"})
		if mbs > 2 {
			out = append(out, remedy{sets: []string{"optim.micro_batch_size=1"}, why: "same results up to rounding; one sequence per micro-batch"})
		}
	}
	if float32Sums {
		out = append(out, remedy{sets: []string{"optim.grad_accum_dtype=param"}, cost: 2, why: "grads summed in the model's dtype (policy/accum.go)"})
	}
	// data parallel with the training state sharded: every model on the
	// one device a rank has, and at least one task per rank
	if oneDevice(cfg) && full {
		current := 0
		for _, name := range trainedSources(cfg) {
			current = max(current, cfg.Models[name].Shard)
		}
		for _, n := range []int{2, 4, 8} {
			if n < ranks || cfg.Batch.PromptsPerStep < n {
				continue
			}
			for level := 1; level <= 3; level++ {
				if n == ranks && level <= current {
					continue // what the plan already is
				}
				var sets []string
				for _, name := range trainedSources(cfg) {
					sets = append(sets, fmt.Sprintf("models.%s.shard=%d", name, level))
				}
				out = append(out, remedy{sets: sets, ranks: n, cost: 1, why: fmt.Sprintf("%d GPUs; the same model as one process (shard %d)", n, level)})
			}
		}
	}
	if full && cfg.Assignment != "lora" {
		out = append(out, remedy{sets: []string{"assignment=lora"}, cost: 3, why: "trains LoRA adapters on a frozen base instead of the full weights"})
	}
	if cfg.Assignment == "separate" && len(cfg.Agents) > 1 {
		out = append(out, remedy{sets: []string{"assignment=shared"}, cost: 3, why: "one model for every agent instead of one each"})
	}
	return out
}

// oneDevice: every model of cfg on the same device (what a data-parallel
// rank has).
func oneDevice(cfg *config.Config) bool {
	seen := ""
	for _, tr := range cfg.Trained() {
		d := tr.Model.Device
		if d == "cuda:0" {
			d = "cuda"
		}
		if seen != "" && d != seen {
			return false
		}
		seen = d
	}
	return true
}

// trainedSources are the models entries cfg trains in full, sorted.
func trainedSources(cfg *config.Config) []string {
	seen := map[string]bool{}
	var out []string
	for _, tr := range cfg.Trained() {
		if tr.LoRA == nil && !seen[tr.Source] {
			seen[tr.Source] = true
			out = append(out, tr.Source)
		}
	}
	sort.Strings(out)
	return out
}

// remedies plans each candidate change of cfg (on ranks ranks) and returns
// those that fit, best first; when none does, those that lower the peak
// most, with fits false.
func (pl planner) remedies(cfg *config.Config, ranks int) []remedy {
	try := func(r remedy) remedy {
		p, _, err := pl.plan(r.sets, max(r.ranks, ranks))
		if err != nil {
			r.peak = -1
			return r
		}
		r.peak, r.fits = p.worst(), p.overflow() == nil
		return r
	}
	var planned []remedy
	sharded := map[int]bool{} // one fitting level per rank count: the lowest
	for _, c := range candidates(cfg, ranks) {
		if c.ranks > 1 && sharded[c.ranks] {
			continue
		}
		r := try(c)
		if r.peak < 0 {
			continue
		}
		if r.fits && r.ranks > 1 {
			sharded[r.ranks] = true
		}
		planned = append(planned, r)
	}
	var fit []remedy
	for _, r := range planned {
		if r.fits {
			fit = append(fit, r)
		}
	}
	if len(fit) == 0 {
		// pairs: a change that keeps the results, with sharding
		for _, a := range planned {
			if a.cost != 0 {
				continue
			}
			for _, b := range planned {
				if b.ranks <= 1 {
					continue
				}
				r := try(remedy{sets: append(append([]string(nil), a.sets...), b.sets...), ranks: b.ranks, cost: 1, why: a.why + "; " + b.why})
				if r.fits {
					fit = append(fit, r)
					break
				}
			}
		}
	}
	if len(fit) == 0 {
		sort.SliceStable(planned, func(i, j int) bool { return planned[i].peak < planned[j].peak })
		return planned[:min(3, len(planned))]
	}
	// best first: by cost, then fewer GPUs, then the lower peak
	sort.SliceStable(fit, func(i, j int) bool {
		a, b := fit[i], fit[j]
		if a.cost != b.cost {
			return a.cost < b.cost
		}
		if a.ranks != b.ranks {
			return a.ranks < b.ranks
		}
		return a.peak < b.peak
	})
	// one sharded remedy per class is enough: the fewest GPUs
	var out []remedy
	shown := false
	for _, r := range fit {
		if r.ranks > 1 {
			if shown {
				continue
			}
			shown = true
		}
		out = append(out, r)
	}
	return out
}

// verdict prints, for a plan p of cfg that does not fit, which device and
// the remedies, and returns the error `plan` and `check` exit with; nil
// when p fits. launch is how the command was run ("train plan -c x.yaml"),
// for the remedies' lines.
func (pl planner) verdict(w io.Writer, cfg *config.Config, p plan, ranks int, launch string) error {
	d := p.overflow()
	if d == nil {
		return nil
	}
	fmt.Fprintf(w, "\n%v does NOT fit: peak ≈ %s + %s of allocator and CUDA-context slack > %s.\n",
		d.dev, gib(d.peak()), gib(planSlack(d.capacity)), gib(d.capacity))
	rs := pl.remedies(cfg, ranks)
	if len(rs) == 0 {
		fmt.Fprintf(w, "No single change planned here makes it fit: a GPU with more memory, fewer or smaller models, or shorter sequences.\n")
	} else if rs[0].fits {
		fmt.Fprintf(w, "Each of these fits (planned, best first; add it to %s):\n", launch)
	} else {
		fmt.Fprintf(w, "None of the changes planned here fits alone; these lower the peak most:\n")
	}
	for _, r := range rs {
		per := ""
		if r.ranks > 1 || ranks > 1 {
			per = " per rank"
		}
		fmt.Fprintf(w, "  %-60s → %s%s (%s)\n", r.flags(), gib(r.peak), per, r.why)
	}
	return fmt.Errorf("%v does not fit %s: peak ≈ %s plus %s of slack (remedies above)", d.dev, gib(d.capacity), gib(d.peak()), gib(planSlack(d.capacity)))
}
