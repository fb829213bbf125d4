package run

// stepmetrics.go — the per-step figures beside the trainer's own: the short
// aliases the console line and default plots read, peak device memory per
// phase, the engines' counters and the CUDA allocator's figures.

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"troupe/model"
	"troupe/torch"
)

// addAliases adds the short keys the console line and the default plots read.
func addAliases(v map[string]float64) {
	for k, x := range maps.Clone(v) {
		rest, ok := strings.CutPrefix(k, "policy/")
		if !ok {
			if a, ok := strings.CutPrefix(k, "adv/agent/"); ok && strings.HasSuffix(a, "/amplification") {
				v["amplification/"+strings.TrimSuffix(a, "/amplification")] = x
			}
			continue
		}
		agent, name, _ := strings.Cut(rest, "/")
		switch name {
		case "grad_norm":
			v["grad_norm/"+agent] = x
		case "loss":
			v["loss/"+agent] = x
		}
	}
}

// memoryDevices lists the devices the models are on whose allocator
// counts: the CUDA devices, and the CPU once its allocator is tracked
// (train.go turns that on).
func memoryDevices(t *team) []torch.Device {
	var out []torch.Device
	for _, m := range t.models {
		if d := m.Device(); (d.IsCUDA() || t.cpuMemory) && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// memoryKey is a device's part of the memory/… metric names: the CUDA
// ordinal, or "cpu".
func memoryKey(d torch.Device) string {
	if d.IsCUDA() {
		return fmt.Sprint(int(d))
	}
	return "cpu"
}

// resetPeaks starts a phase's peak-memory window on every device.
func resetPeaks(t *team) {
	for _, d := range memoryDevices(t) {
		torch.ResetPeakMemory(d)
	}
}

// readPeaks reports each device's peak allocation since resetPeaks as
// memory/<device>/<phase>_peak_gib.
func readPeaks(t *team, phase string) map[string]float64 {
	v := map[string]float64{}
	for _, d := range memoryDevices(t) {
		v[fmt.Sprintf("memory/%s/%s_peak_gib", memoryKey(d), phase)] = float64(torch.Memory(d).PeakAllocated) / (1 << 30)
	}
	return v
}

// addEngineStats records what each engine did during the step.
func addEngineStats(v map[string]float64, t *team) {
	if len(t.engineLast) != len(t.engines) {
		t.engineLast = make([]model.EngineStats, len(t.engines))
	}
	for i, e := range t.engines {
		st, last := e.Stats(), t.engineLast[i]
		t.engineLast[i] = st
		p := "engine/" + t.engineNames[i] + "/"
		v[p+"slots"] = float64(e.Slots())
		v[p+"max_batch"] = float64(st.MaxBatch)
		v[p+"shared_prompts"] = float64(st.SharedPrompts - last.SharedPrompts)
		v[p+"prefill_tokens"] = float64(st.PrefillTokens - last.PrefillTokens)
		v[p+"reused_tokens"] = float64(st.ReusedTokens - last.ReusedTokens)
		if t.cfg.Engine.CUDAGraphs {
			v[p+"graphs"] = float64(st.Graphs - last.Graphs)
			v[p+"graph_replays"] = float64(st.GraphReplays - last.GraphReplays)
			if err := e.GraphError(); err != nil && !t.graphWarned[i] {
				fmt.Fprintf(os.Stderr, "warning: engine of %s: %v\n", t.engineNames[i], err)
				if t.graphWarned == nil {
					t.graphWarned = map[int]bool{}
				}
				t.graphWarned[i] = true
			}
		}
		v[p+"decode_steps"] = float64(st.DecodeSteps - last.DecodeSteps)
		v[p+"host_reads"] = float64(st.HostReads - last.HostReads)
	}
}

// addMemory records the allocators' figures for the models' devices.
func addMemory(v map[string]float64, t *team) {
	for _, d := range memoryDevices(t) {
		s := torch.Memory(d)
		p := "memory/" + memoryKey(d) + "/"
		const gib = 1 << 30
		v[p+"allocated_gib"] = float64(s.Allocated) / gib
		v[p+"reserved_gib"] = float64(s.Reserved) / gib
		v[p+"peak_gib"] = float64(s.PeakAllocated) / gib
	}
}
