package run

// engine.go — one generation engine per trained model (model.Engine), sized
// from the engine section of the config, behind the sampler's Engine
// interface; and the memory hand-off between rollout and update.
//
// Adapters (assignment: lora) of one base share one engine on the base:
// each adapter's model name gets a front (adapterFront) that submits its
// requests through its adapter and hands back its own completions, so the
// rows of every agent on that base decode in one batch.

import (
	"fmt"
	"slices"
	"sort"

	"troupe/gen"
	"troupe/internal/gpu"
	"troupe/model"
	"troupe/rollout"
	"troupe/torch"
)

// cpuAutoBudget bounds the automatic key/value budget of a model on CPU.
const cpuAutoBudget = 2 << 30

// buildEngines makes an engine per model and points the sampler at them.
func (t *team) buildEngines() error {
	ec := t.cfg.Engine
	// one engine per full model (on its engine copy with run.policy_lag: 1),
	// one per base for its adapters
	engineModel := func(name string) *model.Model {
		if a := t.models[name].Adapter(); a != nil {
			return a.Base()
		}
		return t.decoder(name)
	}
	users := map[*model.Model][]string{} // engine model → trained model names
	var names []string
	perDevice := map[torch.Device]int{}
	for name := range t.models {
		em := engineModel(name)
		if len(users[em]) == 0 {
			perDevice[em.Device()]++
		}
		users[em] = append(users[em], name)
		names = append(names, name)
	}
	sort.Strings(names)
	t.sampler.Engines = map[string]rollout.Engine{}
	shared := map[*model.Model]*sharedEngine{}
	for _, name := range names {
		m := engineModel(name)
		if se, ok := shared[m]; ok {
			t.sampler.Engines[name] = se.front(t.models[name].Adapter())
			continue
		}
		slotLen := ec.MaxSeqLen
		if slotLen == 0 {
			longest := 0
			for _, a := range t.agents {
				if slices.Contains(users[m], a.Model) {
					longest = max(longest, a.MaxNewTokens)
				}
			}
			slotLen = longest + 2048
			if mp := m.Config.MaxPositions; mp > 0 {
				slotLen = min(slotLen, mp)
			}
		}
		budget := int64(ec.KVBudgetGiB * (1 << 30))
		if budget == 0 {
			if m.Device().IsCUDA() {
				free, _, err := freeMemory(int(m.Device()))
				if err != nil {
					return fmt.Errorf("engine: model %q: reading free memory on %v for the automatic key/value budget: %v; set engine.kv_budget_gib", name, m.Device(), err)
				}
				// the optimizer state is allocated after the engines: leave it its room
				avail := max(int64(free)-t.pendingState[m.Device()], 0)
				budget = int64(ec.KVFraction * float64(avail) / float64(perDevice[m.Device()]))
			} else {
				budget = cpuAutoBudget
			}
		}
		e, err := m.NewEngine(model.EngineConfig{BudgetBytes: budget, SlotLen: slotLen, MaxSlots: ec.MaxSlots, SyncEvery: ec.SyncEvery, PrefillTokens: ec.PrefillTokens, NoPrefixCache: !ec.PrefixCache, CUDAGraphs: ec.CUDAGraphs && m.Device().IsCUDA() && m.DType() != torch.Float32, CPUKernels: ec.CPUKernels})
		if err != nil {
			return fmt.Errorf("engine: model %q: %w", name, err)
		}
		t.engines = append(t.engines, e)
		t.engineNames = append(t.engineNames, name)
		if a := t.models[name].Adapter(); a != nil {
			t.engineNames[len(t.engineNames)-1] = t.sourceOf(name) // it serves every adapter on the base
			se := &sharedEngine{e: e, owner: map[int]*adapterFront{}}
			shared[m] = se
			t.sampler.Engines[name] = se.front(a)
			continue
		}
		t.sampler.Engines[name] = engineAdapter{e}
	}
	return nil
}

// sharedEngine is one engine on a base model serving its adapters.
type sharedEngine struct {
	e     *model.Engine
	owner map[int]*adapterFront // pending request id → the front that submitted it
}

func (s *sharedEngine) front(a *model.Adapter) *adapterFront {
	return &adapterFront{s: s, a: a}
}

// adapterFront is an adapter's view of a shared engine, as a rollout.Engine.
type adapterFront struct {
	s       *sharedEngine
	a       *model.Adapter
	pending int
	ready   []gen.Completion
}

func (f *adapterFront) Submit(r gen.Request, seed uint64) (int, error) {
	id, err := f.s.e.Submit(model.EngineRequest{GenRequest: r, Seed: seed, Adapter: f.a})
	if err != nil {
		return 0, err
	}
	f.s.owner[id] = f
	f.pending++
	return id, nil
}

// Step returns the front's completions held from an earlier step of the
// shared engine, or steps it once and hands every completion to its front.
func (f *adapterFront) Step() ([]gen.Completion, error) {
	if len(f.ready) == 0 {
		done, err := f.s.e.Step()
		if err != nil {
			return nil, err
		}
		for _, c := range done {
			o := f.s.owner[c.ID]
			delete(f.s.owner, c.ID)
			o.ready = append(o.ready, gen.Completion{ID: c.ID, Result: c.GenResult})
		}
	}
	out := f.ready
	f.ready = nil
	f.pending -= len(out)
	return out, nil
}

func (f *adapterFront) Pending() int { return f.pending }

// releaseEngines frees every engine's arena (engine.release) so that the
// update has the memory; the next rollout allocates it again.
func (t *team) releaseEngines() {
	if !t.cfg.Engine.Release {
		return
	}
	for _, e := range t.engines {
		e.Release()
	}
}

// engineAdapter is a model.Engine as a rollout.Engine: the one place the
// run's seed (and, for adapters, adapterFront's route) joins a request.
type engineAdapter struct{ e *model.Engine }

func (a engineAdapter) Submit(r gen.Request, seed uint64) (int, error) {
	return a.e.Submit(model.EngineRequest{GenRequest: r, Seed: seed})
}

func (a engineAdapter) Step() ([]gen.Completion, error) {
	done, err := a.e.Step()
	if err != nil {
		return nil, err
	}
	out := make([]gen.Completion, len(done))
	for i, c := range done {
		out[i] = gen.Completion{ID: c.ID, Result: c.GenResult}
	}
	return out, nil
}

func (a engineAdapter) Pending() int { return a.e.Pending() }

// sourceOf is the models.<key> a trained model comes from.
func (t *team) sourceOf(name string) string {
	for _, tr := range t.trained {
		if tr.Name == name {
			return tr.Source
		}
	}
	return name
}

// freeMemory is the free and total memory of cuda:ordinal, the device NVML
// knows by its PCI bus id (internal/gpu/locate.go): with
// CUDA_VISIBLE_DEVICES or a cgroup, not NVML's device of that number.
func freeMemory(ordinal int) (free, total uint64, err error) {
	id, err := torch.CUDAPCIBusID(ordinal)
	if err != nil {
		return 0, 0, err
	}
	return gpu.FreeMemory(ordinal, id)
}
