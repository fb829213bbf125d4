package run

// memory.go — what a run keeps resident on each device (weights, float32
// masters, AdamW moments — in the weights' dtype under optim.state_dtype
// model — and frozen references), computed from the models'
// config.json files before any weight is loaded, so that a run that cannot
// fit on a GPU fails at once with the breakdown instead of running out of
// memory part way through loading. It is a lower bound: grads, activations,
// the key/value arenas and the allocator's slack come on top.

import (
	"fmt"
	"sort"
	"strings"

	"troupe/config"
	"troupe/model"
	"troupe/optim"
	"troupe/torch"
)

// residentPart is one thing held on a device for the whole run.
type residentPart struct {
	dev   torch.Device
	what  string
	bytes int64
	state bool // optimizer state: allocated when the trainers are built, after the engines
}

// residentPlan lists what cfg keeps resident, by device, on each of ranks
// data-parallel ranks (0: one process, no group; models.<name>.shard then
// does nothing). withTrainers: the optimizer state and KL references count
// too (training, not evaluation).
func residentPlan(cfg *config.Config, withTrainers bool, ranks int) ([]residentPart, error) {
	var parts []residentPart
	bases := map[string]bool{}
	for _, tr := range cfg.Trained() {
		dt, err := torch.ParseDType(tr.Model.DType)
		if err != nil {
			return nil, fmt.Errorf("models.%s: %w", tr.Source, err)
		}
		dev, err := torch.ParseDevice(tr.Model.Device)
		if err != nil {
			return nil, fmt.Errorf("models.%s: %w", tr.Source, err)
		}
		mc, err := model.LoadConfig(tr.Model.Path)
		if err != nil {
			return nil, fmt.Errorf("models.%s: %w", tr.Source, err)
		}
		b := int64(dt.Size())
		state, held := cfg.Settings(tr).StateBytesPerParam(b) // optim/precision.go: state_dtype
		saves := ""
		if full, _ := (optim.Settings{}).StateBytesPerParam(b); full > state {
			saves = fmt.Sprintf(", %d fewer than float32 state", full-state)
		}
		P := mc.NumParams()
		if tr.LoRA != nil {
			if !bases[tr.Source] {
				bases[tr.Source] = true
				parts = append(parts, residentPart{dev, fmt.Sprintf("models.%s (the adapters' frozen base, %s parameters): weights", tr.Source, count(P)), P * b, false})
			}
			A := mc.LoRAParams(tr.LoRA.Rank, tr.LoRA.Targets)
			parts = append(parts, residentPart{dev, fmt.Sprintf("adapter %s (%s parameters): weights", tr.Name, count(A)), A * b, false})
			if withTrainers {
				parts = append(parts, residentPart{dev, fmt.Sprintf("adapter %s: optimizer state (%d bytes per parameter: %s%s)", tr.Name, state, held, saves), A * state, true})
			}
			continue
		}
		parts = append(parts, residentPart{dev, fmt.Sprintf("model %s (%s parameters): weights", tr.Name, count(P)), P * b, false})
		if !withTrainers {
			continue
		}
		if cfg.Run.PolicyLag > 0 { // the weights the engine decodes from beside the update (run/overlaprollout.go)
			parts = append(parts, residentPart{dev, fmt.Sprintf("model %s: engine weight copy (run.policy_lag 1)", tr.Name), P * b, false})
		}
		if level := shardLevel(tr, ranks); level > 0 {
			// every rank keeps float32 masters and moments of its 1/W
			parts = append(parts, residentPart{dev, fmt.Sprintf("model %s: optimizer state, shard %d over %d ranks (12 bytes per parameter / %d)", tr.Name, level, ranks, ranks),
				12 * ceilDiv(P, int64(ranks)), true})
		} else {
			parts = append(parts, residentPart{dev, fmt.Sprintf("model %s: optimizer state (%d bytes per parameter: %s%s)", tr.Name, state, held, saves), P * state, true})
		}
		if cfg.Settings(tr).NeedsReference() {
			ref := dev
			if d := tr.Model.ReferenceDevice; d != "" {
				if ref, err = torch.ParseDevice(d); err != nil {
					return nil, fmt.Errorf("models.%s.reference_device: %w", tr.Source, err)
				}
			}
			parts = append(parts, residentPart{ref, fmt.Sprintf("model %s: the frozen KL reference", tr.Name), P * b, false})
		}
	}
	return parts, nil
}

// checkResident refuses a plan whose resident part alone exceeds a CUDA
// device's free memory (free reports it; a device it cannot read is not
// checked).
func checkResident(parts []residentPart, free func(index int) (free, total uint64, err error)) error {
	need := map[torch.Device]int64{}
	for _, p := range parts {
		if p.dev.IsCUDA() {
			need[p.dev] += p.bytes
		}
	}
	devs := make([]torch.Device, 0, len(need))
	for d := range need {
		devs = append(devs, d)
	}
	sort.Slice(devs, func(i, j int) bool { return devs[i] < devs[j] })
	for _, d := range devs {
		f, total, err := free(int(d))
		if err != nil || int64(f) >= need[d] {
			continue
		}
		var b strings.Builder
		for _, p := range parts {
			if p.dev == d {
				fmt.Fprintf(&b, "\n  %s: %s", p.what, gib(p.bytes))
			}
		}
		return fmt.Errorf("%v cannot hold this run: its weights and optimizer state alone need %s, and %v has %s free of %s:%s\n"+
			"put models on other GPUs (models.<name>.device, reference_device), let agents share one model (assignment: shared), or train adapters (assignment: lora)",
			d, gib(need[d]), d, gib(int64(f)), gib(int64(total)), b.String())
	}
	return nil
}

// shardLevel is the level trained model tr shards at on ranks ranks (0 in
// one process: nothing to spread over).
func shardLevel(tr config.Trained, ranks int) int {
	if ranks < 1 || tr.LoRA != nil {
		return 0
	}
	return tr.Model.Shard
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

func gib(n int64) string { return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30)) }

// count writes a parameter count in millions or billions.
func count(n int64) string {
	if n >= 1e9 {
		return fmt.Sprintf("%.2f B", float64(n)/1e9)
	}
	return fmt.Sprintf("%.1f M", float64(n)/1e6)
}
