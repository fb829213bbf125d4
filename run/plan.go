package run

// plan.go — `train plan`: a run's device memory, per device, worked out from
// the config and the models' config.json files without loading a weight:
// what stays resident (exact: memory.go), the key/value arenas the engines
// will allocate (exact, given the budget), and the update's transient
// memory at its peak phase (planupdate.go: grads, sums, activations — an
// estimate —, the head's backward, the collectives' buffers). Run it on any
// machine before taking a GPU. With --nproc N it is one rank's device among
// N, where models.<name>.shard spreads state over the ranks
// (policy/shard.go): the optimizer state is resident at 1/N, level 2's
// grads are float32 sums of 1/N plus the whole grads of the embedding, head
// and one layer, and level 3 gives back the layers' weights for the update
// (a negative line).

import (
	"fmt"
	"io"
	"sort"

	"troupe/config"
	"troupe/model"
	"troupe/rollout"
	"troupe/torch"
)

type Plan struct {
	Config string
	Sets   []string
	GpuGiB float64
	Prompt int
	Ranks  int // data-parallel ranks (train --nproc); 1: one process
}

func (c *Plan) Run(out io.Writer, _ []string) error {
	if c.Config == "" {
		return fmt.Errorf("plan: pass --config")
	}
	if c.GpuGiB <= 0 || c.Prompt < 1 {
		return fmt.Errorf("plan: --gpu-gib must be > 0 and --prompt-tokens >= 1")
	}
	if c.Ranks < 0 {
		return fmt.Errorf("plan: --nproc must be >= 1, got %d", c.Ranks)
	}
	cfg, err := config.LoadForPlan(c.Config, c.Sets)
	if err != nil {
		return err
	}
	ranks := c.Ranks
	if ranks <= 1 {
		ranks = 0 // one process: no group, nothing sharded
	}
	capacity := int64(c.GpuGiB * (1 << 30))
	p, err := memoryPlan(cfg, capacity, c.Prompt, ranks)
	if err != nil {
		return err
	}
	if ranks > 0 {
		fmt.Fprintf(out, "one rank of %d (each on its own device, as train --nproc %d places them):\n", ranks, ranks)
	}
	p.print(out)
	pl := planner{path: c.Config, sets: c.Sets, capacity: capacity, prompt: c.Prompt}
	launch := "train plan -c " + c.Config
	if ranks > 0 {
		launch += fmt.Sprintf(" --nproc %d", ranks)
	}
	return pl.verdict(out, cfg, p, ranks, launch)
}

// devicePlan is one device's memory in the three phases.
type devicePlan struct {
	dev         torch.Device
	capacity    int64 // GPUs: --gpu-gib; 0 for the CPU
	resident    []residentPart
	arenas      []residentPart // rollout only (engine.release frees them before the update): arenas, decode transients
	update      []residentPart // the peak phase of the largest trained model's update on this device
	updatePhase string         // which phase that is (planupdate.go)
	released    bool           // engine.release: the arenas are freed before the update
	notes       []string
}

func (d *devicePlan) sum(parts []residentPart) (n int64) {
	for _, p := range parts {
		n += p.bytes
	}
	return n
}

type plan []*devicePlan

// memoryPlan works out cfg's memory per device, on one of ranks
// data-parallel ranks (0: one process).
func memoryPlan(cfg *config.Config, capacity int64, promptTokens, ranks int) (plan, error) {
	resident, err := residentPlan(cfg, true, ranks)
	if err != nil {
		return nil, err
	}
	byDev := map[torch.Device]*devicePlan{}
	at := func(d torch.Device) *devicePlan {
		if byDev[d] == nil {
			byDev[d] = &devicePlan{dev: d, released: cfg.Engine.Release}
			if d.IsCUDA() {
				byDev[d].capacity = capacity
			}
		}
		return byDev[d]
	}
	for _, p := range resident {
		at(p.dev).resident = append(at(p.dev).resident, p)
	}

	// engines: one per full trained model, one per base for its adapters
	type engine struct {
		name     string
		dev      torch.Device
		mc       model.Config
		b        int64
		longest  int
		priority int
	}
	var engines []*engine
	bySource := map[string]*engine{}
	for _, tr := range cfg.Trained() {
		dt, _ := torch.ParseDType(tr.Model.DType) // residentPlan checked both
		dev, _ := torch.ParseDevice(tr.Model.Device)
		mc, err := model.LoadConfig(tr.Model.Path)
		if err != nil {
			return nil, fmt.Errorf("models.%s: %w", tr.Source, err)
		}
		longest := 0
		for _, a := range cfg.AgentConfigs() {
			if cfg.TrainedName(a.Name) == tr.Name {
				n := a.MaxNewTokens
				if n == 0 {
					n = cfg.MaxNewTokens
				}
				longest = max(longest, n)
			}
		}
		if cfg.Engine.Enabled {
			if e, ok := bySource[tr.Source]; ok && tr.LoRA != nil {
				e.longest = max(e.longest, longest)
			} else {
				e := &engine{name: tr.Name, dev: dev, mc: mc, b: int64(dt.Size()), longest: longest}
				if tr.LoRA != nil {
					e.name, bySource[tr.Source] = tr.Source+" (its adapters)", e
				}
				engines = append(engines, e)
			}
		}
		// the update: its peak phase (planupdate.go)
		s := cfg.Settings(tr)
		P := mc.NumParams()
		if tr.LoRA != nil {
			P = mc.LoRAParams(tr.LoRA.Rank, tr.LoRA.Targets)
		}
		b := int64(dt.Size())
		tokens := int64(s.MicroBatchSize) * int64(promptTokens+longest)
		if s.MicroBatchTokens > 0 { // a micro-batch holds at least one whole row
			tokens = int64(max(s.MicroBatchTokens, promptTokens+longest))
		}
		all := cfg.Batch.PromptsPerStep * cfg.Batch.N // every trajectory gives each of its agents at least one row
		u := updateShape{name: tr.Name, dev: dev, mc: mc, P: P, b: b, level: shardLevel(tr, ranks), ranks: ranks, tokens: tokens,
			prompt: int64(promptTokens), response: int64(longest),
			checkpointed: s.ActivationCheckpointing, bucket: int64(tr.Model.ShardBucketMiB * (1 << 20)), lora: tr.LoRA != nil, entropy: s.EntropyCoef > 0}
		u.sums = sumsWhy(s, b, u.level, all/s.MiniBatches(all))
		peak := updatePeak(u)
		d := at(dev)
		if d.update == nil || peak.bytes() > d.sum(d.update) { // models update one after another
			d.update, d.updatePhase = peak.parts, peak.what
		}
	}

	ec := cfg.Engine
	trajectories, onRank := cfg.Batch.PromptsPerStep*cfg.Batch.N, ""
	if ranks > 1 {
		trajectories, onRank = trajectories/ranks, " on this rank"
	}
	perDevice := map[torch.Device]int{}
	for _, e := range engines {
		perDevice[e.dev]++
	}
	for _, e := range engines {
		d := at(e.dev)
		slotLen := int64(ec.MaxSeqLen)
		if slotLen == 0 {
			slotLen = int64(e.longest + 2048)
			if mp := e.mc.MaxPositions; mp > 0 {
				slotLen = min(slotLen, int64(mp))
			}
		}
		perToken := int64(e.mc.NumLayers) * 2 * int64(e.mc.NumKVHeads) * int64(e.mc.HeadDim) * e.b
		budget := int64(ec.KVBudgetGiB * (1 << 30))
		how := fmt.Sprintf("engine.kv_budget_gib %g", ec.KVBudgetGiB)
		if budget == 0 {
			if e.dev.IsCUDA() {
				free := d.capacity - d.sum(d.resident)
				budget = int64(ec.KVFraction * float64(max(free, 0)) / float64(perDevice[e.dev]))
				how = fmt.Sprintf("kv_fraction %g of the %s left free", ec.KVFraction, gib(max(free, 0)))
				if n := perDevice[e.dev]; n > 1 {
					how += fmt.Sprintf(", split among %d engines", n)
				}
			} else {
				budget, how = cpuAutoBudget, "the CPU default"
			}
		}
		slots := min(int64(ec.MaxSlots), budget/(slotLen*perToken))
		d.arenas = append(d.arenas, residentPart{e.dev, fmt.Sprintf("engine %s: %d slots × %d tokens × %s per token (%s)",
			e.name, slots, slotLen, kib(perToken), how), slots * slotLen * (perToken + 16), false})
		// the decode step's float32 logits over the vocabulary and what
		// sampling derives from them: with top-k/top-p, a sort (values and
		// indices), the kept mask, float64 cumulative sums
		per, what := int64(16), "logits and sampling"
		for _, s := range []rollout.Sampling{cfg.Sampling, cfg.Eval.Sampling} {
			if (s.TopP > 0 && s.TopP < 1) || s.TopK > 0 {
				per, what = 48, "logits and top-k/top-p sampling"
			}
		}
		d.arenas = append(d.arenas, residentPart{e.dev, fmt.Sprintf("engine %s: the decode step's %s over %d × %d (estimate)", e.name, what, slots, e.mc.VocabSize),
			slots * int64(e.mc.VocabSize) * per, false})
		switch {
		case slots == 0:
			d.notes = append(d.notes, fmt.Sprintf("engine %s cannot start: its budget holds no slot of %d tokens; free memory (see above), raise engine.kv_fraction or kv_budget_gib, or lower engine.max_seq_len", e.name, slotLen))
		case slots < int64(ec.MaxSlots) && slots < int64(trajectories):
			d.notes = append(d.notes, fmt.Sprintf("engine %s decodes at most %d of a step's %d trajectories%s at once; more key/value memory (engine.kv_fraction, kv_budget_gib) or a shorter engine.max_seq_len would decode more", e.name, slots, trajectories, onRank))
		}
	}

	var out plan
	for _, d := range byDev {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].dev < out[j].dev })
	return out, nil
}

func kib(n int64) string { return fmt.Sprintf("%.0f KiB", float64(n)/1024) }

func (p plan) print(w io.Writer) {
	for _, d := range p {
		resident, arenas, update := d.sum(d.resident), d.sum(d.arenas), d.sum(d.update)
		if d.capacity > 0 {
			fmt.Fprintf(w, "%v (%s)\n", d.dev, gib(d.capacity))
		} else {
			fmt.Fprintf(w, "%v\n", d.dev)
		}
		fmt.Fprintf(w, "  resident for the whole run: %s\n", gib(resident))
		for _, x := range d.resident {
			fmt.Fprintf(w, "    %10s  %s\n", gib(x.bytes), x.what)
		}
		fmt.Fprintf(w, "  rollout: + %s of key/value arenas and decoding → %s\n", gib(arenas), gib(resident+arenas))
		for _, x := range d.arenas {
			fmt.Fprintf(w, "    %10s  %s\n", gib(x.bytes), x.what)
		}
		during := resident + update
		if !d.released {
			during += arenas // engine.release false: the arenas stay through the update
		}
		sign := "+"
		if update < 0 {
			sign, update = "−", -update
		}
		fmt.Fprintf(w, "  update (the largest model's, at its peak: %s; estimate): %s %s → %s\n", d.updatePhase, sign, gib(update), gib(during))
		for _, x := range d.update {
			fmt.Fprintf(w, "    %10s  %s\n", gib(x.bytes), x.what)
		}
		if d.capacity > 0 {
			verdict := "fits, with"
			if !d.fits() {
				verdict = "does NOT fit with"
			}
			fmt.Fprintf(w, "  peak ≈ %s of %s: %s %s of slack for the allocator and the CUDA context (planfit.go)\n",
				gib(d.peak()), gib(d.capacity), verdict, gib(planSlack(d.capacity)))
		}
		for _, n := range d.notes {
			fmt.Fprintf(w, "  note: %s\n", n)
		}
	}
}
