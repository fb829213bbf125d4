package config

// sizes.go — sizes checked against what they must fit before anything is
// allocated: the machine's memory, the model's positions and widths, and the
// environment a preset was written for. Each refusal is one line naming the
// key, the value, the bound and the fix; without it a huge dataset size
// ends in the Go runtime's "out of memory" with a stack, and a huge adapter
// rank or world size runs for as long as it takes to fail.
//
// Memory: every size-like option of the environment and workflow in use,
// and the episodes of a step (batch.prompts_per_step × batch.n) and of an
// evaluation (eval.tasks × eval.n), is multiplied by a lower bound of what
// one unit costs to hold (the table below; an instance with a grid or
// board holds its cells too; EpisodeBytes) and compared with the machine's
// physical memory (/proc/meminfo's MemTotal; no memory check where it
// cannot be read). CheckMemory is that one bound; the commands' own size
// flags (sft --tasks and --batch, init's model sizes) go through it too.
// The bounds are deliberately low — they catch sizes that cannot fit, not
// sizes that are merely tight.
//
// Models (read from each model's config.json, when it is there): a response
// may not be longer than the positions the model has (max_new_tokens,
// agents[i].max_new_tokens, engine.max_seq_len ≤ max_position_embeddings),
// and an adapter's rank may not exceed the model's hidden size (a rank
// above the narrower side of a projection adds nothing but memory).
//
// What it is not: a memory planner (`train plan` estimates a run's device
// memory); these are the checks a config must pass to be worth starting.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"troupe/internal/meminfo"
	"troupe/rollout"
)

// unitBytes is a lower bound of the memory one unit of a size-like option
// holds, by the option's name: a task or an instance (its text, answer and
// bookkeeping), an entity of a synthetic world (a document and its index
// postings).
var unitBytes = map[string]float64{
	"train_size": 128, "test_size": 128,
	"people": 256, "companies": 256, "cities": 256, "countries": 256,
}

// machineMemory is the physical memory in bytes, 0 when unknown (a
// variable for tests).
var machineMemory = func() float64 { return float64(meminfo.Total()) }

func gib(b float64) string { return fmt.Sprintf("%.1f GiB", b/(1<<30)) }

// validateSizes checks the plug-in sections' sizes against the memory, the
// presets against the environment, and lengths and ranks against the
// models.
func (c *Config) validateSizes() error {
	if err := c.validatePresets(); err != nil {
		return err
	}
	if err := c.validateMemory(); err != nil {
		return err
	}
	return c.validateModelShapes()
}

// validatePresets refuses a preset written for another environment (its
// name starts with that environment's name) when the environment in use has
// presets of its own: its prompts describe another task and its parser
// reads another answer format. An environment without presets (a new
// plug-in) may borrow any.
func (c *Config) validatePresets() error {
	envs := rollout.EnvironmentNames()
	// the longest name first, so that "plan-path-…" is not read as "plan-…"
	slices.SortFunc(envs, func(a, b string) int { return len(b) - len(a) })
	for i, a := range c.Agents {
		for _, env := range envs {
			if !strings.HasPrefix(a.Preset, env+"-") {
				continue
			}
			if env != c.Env.Name {
				var fit []string
				for _, p := range rollout.PresetNames() {
					if strings.HasPrefix(p, c.Env.Name+"-") {
						fit = append(fit, p)
					}
				}
				if len(fit) == 0 {
					break // an environment without presets of its own borrows any
				}
				return fmt.Errorf("agents[%d].preset: %q is a preset of environment %q, but env.name is %q; use one of %s, or write the agent's prompts (system, role, user, parser)", i, a.Preset, env, c.Env.Name, strings.Join(fit, ", "))
			}
			break
		}
	}
	return nil
}

// validateMemory multiplies the size-like options of the environment and
// workflow in use by what one unit holds at least, and refuses a total
// beyond the machine's memory.
func (c *Config) validateMemory() error {
	mem := machineMemory()
	if mem <= 0 {
		return nil
	}
	flat, err := flatConfig(c)
	if err != nil {
		return err
	}
	var prefixes []string
	if s, err := rollout.EnvironmentOf(c.Env.Name); err == nil {
		prefixes = append(prefixes, "env."+s.Key+".")
	}
	if s, err := rollout.WorkflowOf(c.Workflow.Name); err == nil {
		prefixes = append(prefixes, "workflow."+s.Key+".")
	}
	sections := map[string]map[string]float64{} // parent key → leaf → value
	for k, v := range flat {
		if !slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(k, p) }) {
			continue
		}
		n, err := strconv.ParseFloat(v, 64)
		if err != nil {
			continue
		}
		i := strings.LastIndexByte(k, '.')
		if sections[k[:i]] == nil {
			sections[k[:i]] = map[string]float64{}
		}
		sections[k[:i]][k[i+1:]] = n
	}
	for _, parent := range slices.Sorted(mapsKeys(sections)) {
		s := sections[parent]
		grid, shape := 0.0, "" // cells of one instance's board, if it has one
		switch {
		case s["rows"] > 0 && s["cols"] > 0:
			grid, shape = s["rows"]*s["cols"], fmt.Sprintf(" of a %.0f × %.0f grid", s["rows"], s["cols"])
		case s["size"] > 0:
			grid, shape = s["size"]*s["size"], fmt.Sprintf(" of a %.0f × %.0f board", s["size"], s["size"])
		}
		for _, leaf := range slices.Sorted(mapsKeys(s)) {
			per, ok := unitBytes[leaf]
			if !ok {
				continue
			}
			unit := "bytes each"
			if leaf == "train_size" || leaf == "test_size" {
				per += grid
				unit = "bytes per instance" + shape
			}
			if err := CheckMemory(fmt.Sprintf("%s.%s: %.0f", parent, leaf, s[leaf]), s[leaf], per, unit); err != nil {
				return err
			}
		}
	}
	// the episodes of a step and of an evaluation, each held whole until
	// its rows are scored
	b := c.Batch
	if err := CheckMemory(fmt.Sprintf("batch.prompts_per_step × batch.n: %d × %d episodes per step", b.PromptsPerStep, b.N),
		float64(b.PromptsPerStep)*float64(b.N), EpisodeBytes, "bytes per episode"); err != nil {
		return err
	}
	if e := c.Eval; e.Tasks > 0 {
		if err := CheckMemory(fmt.Sprintf("eval.tasks × eval.n: %d × %d episodes per evaluation", e.Tasks, e.N),
			float64(e.Tasks)*float64(e.N), EpisodeBytes, "bytes per episode"); err != nil {
			return err
		}
	}
	return nil
}

// EpisodeBytes is a lower bound of what one episode of a rollout holds
// until its rows are scored: its task, its rendered prompt and the prompt's
// token ids (a few hundred of each at the least), a response and its row.
const EpisodeBytes = 1024

// CheckMemory refuses what (a key or flag and its value, or a product of
// them) when count units of at least per bytes each need more than this
// machine's physical memory; unit says what one unit is. It is the one
// memory bound of every size key and flag, checked before anything is
// allocated (no check where the memory cannot be read).
func CheckMemory(what string, count, per float64, unit string) error {
	mem := machineMemory()
	if mem <= 0 {
		return nil
	}
	if need := count * per; need > mem {
		return fmt.Errorf("%s needs at least %s to hold (%.0f %s), more than this machine's %s; lower it", what, gib(need), per, unit, gib(mem))
	}
	return nil
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// modelShape is what the checks need of a model's config.json.
type modelShape struct {
	HiddenSize   int `json:"hidden_size"`
	MaxPositions int `json:"max_position_embeddings"`
}

// readModelShape reads path/config.json; ok is false when it is missing or
// unreadable (the loader reports that with its own message).
func readModelShape(path string) (modelShape, bool) {
	raw, err := os.ReadFile(filepath.Join(path, "config.json"))
	if err != nil {
		return modelShape{}, false
	}
	var s struct {
		modelShape
		Text *modelShape `json:"text_config"`
	}
	if json.Unmarshal(raw, &s) != nil {
		return modelShape{}, false
	}
	if s.HiddenSize == 0 && s.Text != nil {
		return *s.Text, true
	}
	return s.modelShape, true
}

// validateModelShapes checks response lengths against each model's
// positions and adapter ranks against its hidden size.
func (c *Config) validateModelShapes() error {
	if c.files == noModels {
		return nil // a checkpoint's config: the models may be elsewhere now
	}
	for i, a := range c.Agents {
		m, ok := c.Models[a.Model]
		if !ok {
			continue
		}
		shape, ok := readModelShape(m.Path)
		if !ok {
			continue
		}
		if p := shape.MaxPositions; p > 0 {
			key, n := "max_new_tokens", c.MaxNewTokens
			if a.MaxNewTokens > 0 {
				key, n = fmt.Sprintf("agents[%d].max_new_tokens", i), a.MaxNewTokens
			}
			if n >= p {
				return fmt.Errorf("%s: %d tokens, but model %q (%s) has %d positions for prompt and response together; use fewer than %d", key, n, a.Model, m.Path, p, p)
			}
			if c.Engine.MaxSeqLen > p {
				return fmt.Errorf("engine.max_seq_len: %d, but model %q (%s) has %d positions; use at most %d (0 = automatic)", c.Engine.MaxSeqLen, a.Model, m.Path, p, p)
			}
		}
		if l := c.agentLoRA(a); l != nil && shape.HiddenSize > 0 && l.Rank > shape.HiddenSize {
			key := "lora.rank"
			if a.LoRA.Rank != 0 {
				key = fmt.Sprintf("agents[%d].lora.rank", i)
			}
			return fmt.Errorf("%s: %d exceeds model %q's hidden_size %d; a rank above the narrower side of a projection adds only memory — use at most %d (8–64 is usual)", key, l.Rank, a.Model, shape.HiddenSize, shape.HiddenSize)
		}
	}
	return nil
}
