package main

// engine.go — one generation engine per trained model (model.Engine), sized
// from the engine section of the config, behind the sampler's Engine
// interface; and the memory hand-off between rollout and update.

import (
	"fmt"
	"sort"

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
	names := make([]string, 0, len(t.models))
	perDevice := map[torch.Device]int{}
	for name, m := range t.models {
		names = append(names, name)
		perDevice[m.Device()]++
	}
	sort.Strings(names)
	t.sampler.Engines = map[string]rollout.Engine{}
	for _, name := range names {
		m := t.models[name]
		slotLen := ec.MaxSeqLen
		if slotLen == 0 {
			longest := 0
			for _, a := range t.agents {
				if a.Model == name {
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
				free, _, err := gpu.FreeMemory(int(m.Device()))
				if err != nil {
					return fmt.Errorf("engine: model %q: reading free memory on %v for the automatic key/value budget: %v; set engine.kv_budget_gib", name, m.Device(), err)
				}
				budget = int64(ec.KVFraction * float64(free) / float64(perDevice[m.Device()]))
			} else {
				budget = cpuAutoBudget
			}
		}
		e, err := m.NewEngine(model.EngineConfig{BudgetBytes: budget, SlotLen: slotLen, MaxSlots: ec.MaxSlots, SyncEvery: ec.SyncEvery})
		if err != nil {
			return fmt.Errorf("engine: model %q: %w", name, err)
		}
		t.engines = append(t.engines, e)
		t.engineNames = append(t.engineNames, name)
		t.sampler.Engines[name] = engineAdapter{e}
	}
	return nil
}

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

// engineAdapter is a model.Engine as a rollout.Engine.
type engineAdapter struct{ e *model.Engine }

func (a engineAdapter) Submit(r rollout.GenRequest, seed uint64) (int, error) {
	return a.e.Submit(model.EngineRequest{GenRequest: modelRequest(r), Seed: seed})
}

func (a engineAdapter) Step() ([]rollout.Completion, error) {
	done, err := a.e.Step()
	if err != nil {
		return nil, err
	}
	out := make([]rollout.Completion, len(done))
	for i, c := range done {
		out[i] = rollout.Completion{ID: c.ID, GenResult: rolloutResult(c.GenResult)}
	}
	return out, nil
}

func (a engineAdapter) Pending() int { return a.e.Pending() }

func modelRequest(r rollout.GenRequest) model.GenRequest {
	return model.GenRequest{Prompt: r.Prompt, MaxNewTokens: r.MaxNewTokens, Stop: r.Stop,
		Sampling: model.Sampling{Temperature: r.Sampling.Temperature, TopK: r.Sampling.TopK, TopP: r.Sampling.TopP}}
}

func rolloutResult(o model.GenResult) rollout.GenResult {
	res := rollout.GenResult{Tokens: o.Tokens, LogProbs: o.LogProbs, Finish: rollout.FinishStop}
	if o.Finish == model.FinishLength {
		res.Finish = rollout.FinishLength
	}
	return res
}
