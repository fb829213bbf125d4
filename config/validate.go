package config

// validate.go — checking a decoded config (resolve.go turns it into what
// the run builds).

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"troupe/advantage"
	"troupe/datasets"
	"troupe/internal/kind"
	"troupe/optim"
	"troupe/rollout"

	suggestpkg "troupe/internal/suggest"
)

// Validate checks every section; the error names the key and the fix. It
// also checks that model directories and dataset files exist.
func (c *Config) Validate() error {
	c.fillAgentModels()
	checks := []func() error{c.validateRun, c.validateModels, c.validateAgents, c.validateWorkflow,
		c.validateEnv, c.validateBatch, c.validateEngine, c.validateAdvantage, c.validatePairs, c.validateOptim, c.validateLoRA, c.validateSharing,
		c.validateEval, c.validateCheckpoint, c.validateSizes, c.validatePaths}
	for _, check := range checks {
		if err := check(); err != nil {
			return fmt.Errorf("config: %w", err)
		}
	}
	return nil
}

// fillAgentModels lets a single-model config omit agents[i].model.
func (c *Config) fillAgentModels() {
	if len(c.Models) != 1 {
		return
	}
	for name := range c.Models {
		for i := range c.Agents {
			if c.Agents[i].Model == "" {
				c.Agents[i].Model = name
			}
		}
	}
}

func (c *Config) validateRun() error {
	r := c.Run
	switch {
	case r.Steps < 1:
		return fmt.Errorf("run.steps: must be >= 1, got %d", r.Steps)
	case strings.TrimSpace(r.OutputDir) == "":
		return fmt.Errorf("run.output_dir: must name the directory for metrics, checkpoints and exports")
	case r.Epochs < 0:
		return fmt.Errorf("run.epochs: must be >= 0 (0: run.steps gives the length), got %d", r.Epochs)
	case r.LogSamples < 0:
		return fmt.Errorf("run.log_samples: must be >= 0, got %d", r.LogSamples)
	case r.PolicyLag != 0 && r.PolicyLag != 1:
		return fmt.Errorf("run.policy_lag: must be 0 (every step samples from its own weights) or 1 (the next step's rollout beside this step's update), got %d", r.PolicyLag)
	case r.PolicyLag == 1 && c.Assignment == "lora":
		return fmt.Errorf("run.policy_lag: 1 is not built for assignment: lora (the engine copy holds a full model's weights, not an adapter's); set run.policy_lag: 0, or train full models (assignment: separate or shared)")
	}
	if _, err := kind.ParseDevice(r.Device); err != nil {
		return fmt.Errorf("run.device: %v", err)
	}
	return checkDType("run.dtype", r.DType)
}

func checkDType(key, s string) error {
	d, err := kind.ParseDType(s)
	if err != nil {
		return fmt.Errorf("%s: %v", key, err)
	}
	if d != kind.Float32 && d != kind.BFloat16 {
		return fmt.Errorf("%s: models train in float32 or bfloat16, got %s", key, s)
	}
	return nil
}

func (c *Config) validateModels() error {
	if len(c.Models) == 0 {
		return fmt.Errorf("models: none configured; add one, e.g. models: {policy: {path: runs/tiny-model}} (make one with `train init runs/tiny-model`)")
	}
	for _, name := range c.modelNames() {
		m := c.Models[name]
		key := "models." + name
		if err := checkName(key, name); err != nil {
			return err
		}
		if strings.TrimSpace(m.Path) == "" {
			return fmt.Errorf("%s.path: must name a Hugging Face model directory", key)
		}
		if c.files != noModels { // a checkpoint's config: the weights and tokenizer are the checkpoint's
			if err := checkModelFiles(key, m, c.files == allFiles); err != nil {
				return err
			}
		}
		if m.DType != "" {
			if err := checkDType(key+".dtype", m.DType); err != nil {
				return err
			}
		}
		if m.Device != "" {
			if _, err := kind.ParseDevice(m.Device); err != nil {
				return fmt.Errorf("%s.device: %v", key, err)
			}
		}
		if m.Shard < 0 || m.Shard > 3 {
			return fmt.Errorf("%s.shard: must be 0 (none), 1 (optimizer state), 2 (+ grads) or 3 (+ weights), got %d", key, m.Shard)
		}
		if !(m.ShardBucketMiB >= 0) || m.ShardBucketMiB > 1<<20 {
			return fmt.Errorf("%s.shard_bucket_mib: must be >= 0 (0: the defaults) and at most 1048576, got %g", key, m.ShardBucketMiB)
		}
		if m.ReferenceDevice != "" {
			if _, err := kind.ParseDevice(m.ReferenceDevice); err != nil {
				return fmt.Errorf("%s.reference_device: %v", key, err)
			}
			if c.Assignment == "lora" {
				return fmt.Errorf("%s.reference_device: under assignment: lora the KL reference is the frozen base itself, on the model's device; remove reference_device", key)
			}
		}
	}
	if c.Assignment != "separate" && c.Assignment != "shared" && c.Assignment != "lora" {
		return fmt.Errorf("assignment: must be separate (every agent trains its own copy of its model), shared (agents naming the same model train it together) or lora (every agent trains an adapter on one frozen copy of its model), got %q", c.Assignment)
	}
	return nil
}

func (c *Config) modelNames() []string {
	var names []string
	for n := range c.Models {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// checkModelFiles checks that a model's directory (its config.json) and,
// with tokenizer, its tokenizer exist.
func checkModelFiles(key string, m Model, tokenizer bool) error {
	if _, err := os.Stat(filepath.Join(m.Path, "config.json")); err != nil {
		return fmt.Errorf("%s.path: %q has no config.json (%v); %s", key, m.Path, errors.Unwrap(err), modelHint(key, m.Path))
	}
	if !tokenizer {
		return nil
	}
	tok := m.Tokenizer
	if tok == "" {
		tok = m.Path
	}
	if st, err := os.Stat(tok); err == nil && st.IsDir() {
		tok = filepath.Join(tok, "tokenizer.json")
	}
	if _, err := os.Stat(tok); err != nil {
		return fmt.Errorf("%s.tokenizer: %q not found; set it to the directory holding tokenizer.json", key, tok)
	}
	return nil
}

// stubBinding lets agent configs be checked before any tokenizer is loaded.
func stubBinding(rollout.AgentConfig) (rollout.Binding, error) {
	return rollout.Binding{
		Chat: func(msgs []rollout.Message) (string, error) {
			var b strings.Builder
			for _, m := range msgs {
				b.WriteString(m.Content + "\n")
			}
			return b.String(), nil
		},
		Codec: stubCodec{},
	}, nil
}

type stubCodec struct{}

func (stubCodec) Encode(s string) []int   { return make([]int, len(s)) }
func (stubCodec) Decode(ids []int) string { return "" }

func (c *Config) validateAgents() error {
	if len(c.Agents) == 0 {
		return fmt.Errorf("agents: none configured; a workflow needs at least one agent (e.g. name: solver, preset: math-solver)")
	}
	for i, a := range c.Agents {
		if err := checkName(fmt.Sprintf("agents[%d].name", i), a.Name); err != nil {
			return err
		}
		if _, ok := c.Models[a.Model]; !ok {
			return fmt.Errorf("agents[%d].model: %q is not one of models (%s)", i, a.Model, strings.Join(c.modelNames(), ", "))
		}
	}
	if err := c.Sampling.Validate(); err != nil {
		return err
	}
	if c.MaxNewTokens < 1 {
		return fmt.Errorf("max_new_tokens: must be >= 1, got %d", c.MaxNewTokens)
	}
	_, err := rollout.NewAgents(c.rolloutAgentConfigs(), c.AgentDefaults(), stubBinding)
	return err
}

// checkName refuses a model or agent name that could not safely become a
// file name (checkpoints and exports keep a directory per name).
func checkName(key, name string) error {
	if !safeName.MatchString(name) || name == "." || name == ".." {
		return fmt.Errorf("%s: %q is not a usable name; use letters, digits, '.', '_' and '-' (it names directories in checkpoints and exports)", key, name)
	}
	return nil
}

var safeName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

func (c *Config) validateWorkflow() error {
	spec, err := rollout.WorkflowOf(c.Workflow.Name)
	if err != nil {
		return err
	}
	opts := c.Workflow.Options()
	if err := spec.Validate(opts); err != nil {
		return err
	}
	names := c.agentNames()
	if spec.Roles != nil {
		roles := spec.Roles(opts)
		for _, key := range slices.Sorted(maps.Keys(roles)) {
			if !slices.Contains(names, roles[key]) {
				return fmt.Errorf("%s: names agent %q, which is not configured (agents: %s)", key, roles[key], strings.Join(names, ", "))
			}
		}
	}
	if spec.OwnGroups && c.Batch.N != 1 {
		return fmt.Errorf("batch.n: workflow %q samples its own comparison group; set batch.n: 1, got %d", c.Workflow.Name, c.Batch.N)
	}
	if j, ok := opts.(jointModer); ok && c.Advantage.Estimator == "magrpo" && c.Advantage.MAGRPO.Joint != j.JointMode() {
		return fmt.Errorf("advantage.magrpo.joint: %q, but workflow.%s.mode is %q; set both to the same mode", c.Advantage.MAGRPO.Joint, spec.Key, j.JointMode())
	}
	return nil
}

// jointModer is the options of a workflow whose rows are joint actions
// (workflow.joint): MAGRPO must combine them in the same mode.
type jointModer interface{ JointMode() string }

// followJointMode sets advantage.magrpo.joint to the workflow's joint mode
// (workflow.joint.mode), so that a config says the mode once; a file that
// sets advantage.magrpo.joint itself must agree with the workflow
// (validateWorkflow).
func (c *Config) followJointMode() {
	if c.Advantage.Estimator != "magrpo" {
		return
	}
	if _, err := rollout.WorkflowOf(c.Workflow.Name); err != nil {
		return // validateWorkflow names it
	}
	if j, ok := c.Workflow.Options().(jointModer); ok {
		c.Advantage.MAGRPO.Joint = j.JointMode()
	}
}

// hasKey reports whether the YAML mapping root holds the key path.
func hasKey(root *yaml.Node, path ...string) bool {
	n := root
	for _, k := range path {
		if n == nil || n.Kind != yaml.MappingNode {
			return false
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == k {
				next = n.Content[i+1]
			}
		}
		if next == nil {
			return false
		}
		n = next
	}
	return true
}

func (c *Config) agentNames() []string {
	var names []string
	for _, a := range c.Agents {
		names = append(names, a.Name)
	}
	return names
}

// validateEnv checks the named environment's options with the checks it
// registered, and that the files they name exist: every missing one is
// named at once, with the `bin/train data` command that writes it when it
// is a shipped config's dataset.
func (c *Config) validateEnv() error {
	spec, err := rollout.EnvironmentOf(c.Env.Name)
	if err != nil {
		return err
	}
	opts, err := c.Env.Options()
	if err != nil {
		return err
	}
	if err := spec.Validate(opts); err != nil {
		return err
	}
	if spec.Files == nil || c.files == modelsOnly {
		return nil
	}
	files := spec.Files(opts)
	var missing, writers []string
	for _, key := range slices.Sorted(maps.Keys(files)) {
		if p := files[key]; p != "" {
			if _, err := os.Stat(p); err != nil {
				missing = append(missing, fmt.Sprintf("%s: file %q not found", key, p))
				if cmd, ok := datasets.CommandFor(p); ok && !slices.Contains(writers, cmd) {
					writers = append(writers, cmd)
				}
			}
		}
	}
	if len(missing) == 0 {
		return nil
	}
	msg := strings.Join(missing, "; ")
	switch { // a shipped config's datasets: the command that writes them
	case len(writers) == 1:
		msg += "; " + writers[0] + " writes them (bin/train data list names every dataset)"
	case len(writers) > 1:
		msg += "; " + strings.Join(writers, " and ") + " write them (bin/train data list names every dataset)"
	}
	return errors.New(msg)
}

// validatePairs refuses a workflow with an environment or an estimator it
// cannot work with, in one line naming both.
func (c *Config) validatePairs() error {
	if spec, err := rollout.EnvironmentOf(c.Env.Name); err == nil && !slices.Contains(spec.Workflows, c.Workflow.Name) {
		return fmt.Errorf("env.name: environment %q does not play workflow %q (it plays %s); change env.name or workflow.name", c.Env.Name, c.Workflow.Name, quoteAll(spec.Workflows))
	}
	est, err := rollout.WorkflowEstimators(c.Workflow.Name)
	if err != nil {
		return err
	}
	if len(est) > 0 && !slices.Contains(est, c.Advantage.Estimator) {
		return fmt.Errorf("advantage.estimator: workflow %q does not produce the rows estimator %q needs; use one of %s", c.Workflow.Name, c.Advantage.Estimator, strings.Join(est, ", "))
	}
	// a workflow without candidate groups (tree's mode: no-tree) needs
	// atgrpo to pool a task's environments, or every group is a singleton
	if o, ok := c.Workflow.Options().(interface{ PooledGroups() bool }); ok && o.PooledGroups() &&
		c.Advantage.Estimator == "atgrpo" && c.Advantage.ATGRPO.Key == advantage.KeyEnv {
		return fmt.Errorf("advantage.atgrpo.key: workflow %q samples one candidate per turn and agent, so keyed by %q every group is a singleton; set advantage.atgrpo.key: %s (a task's environments) or %s (those of tasks_per_group tasks, as the reference's runs)", c.Workflow.Name, c.Advantage.ATGRPO.Key, advantage.KeyPrompt, advantage.KeyMerged)
	}
	return nil
}

func (c *Config) validateBatch() error {
	b := c.Batch
	switch {
	case b.PromptsPerStep < 1:
		return fmt.Errorf("batch.prompts_per_step: must be >= 1, got %d", b.PromptsPerStep)
	case b.N < 1:
		return fmt.Errorf("batch.n: must be >= 1 trajectory per task, got %d (group estimators need >= 2)", b.N)
	case b.MaxBatchRows < 0:
		return fmt.Errorf("batch.max_batch_rows: must be >= 0 (0 = no cap), got %d", b.MaxBatchRows)
	case b.EpochTasks < 0:
		return fmt.Errorf("batch.epoch_tasks: must be >= 0 (0 = every training task makes the epoch), got %d", b.EpochTasks)
	}
	return nil
}

func (c *Config) validateEngine() error {
	e := c.Engine
	switch {
	case e.KVBudgetGiB < 0:
		return fmt.Errorf("engine.kv_budget_gib: must be >= 0 (0 = automatic), got %g", e.KVBudgetGiB)
	case e.KVFraction <= 0 || e.KVFraction > 0.95:
		return fmt.Errorf("engine.kv_fraction: must be in (0, 0.95], got %g", e.KVFraction)
	case e.MaxSeqLen < 0 || e.MaxSeqLen == 1:
		return fmt.Errorf("engine.max_seq_len: must be >= 2 tokens (0 = automatic), got %d", e.MaxSeqLen)
	case e.MaxSlots < 1:
		return fmt.Errorf("engine.max_slots: must be >= 1, got %d", e.MaxSlots)
	case e.SyncEvery < 1:
		return fmt.Errorf("engine.sync_every: must be >= 1 decode step, got %d", e.SyncEvery)
	case e.PrefillTokens < 1:
		return fmt.Errorf("engine.prefill_tokens: must be >= 1 token, got %d; 16384 bounds a prefill forward's memory without slowing it", e.PrefillTokens)
	}
	if !e.Enabled || !e.CUDAGraphs {
		return nil
	}
	penalised := func(s rollout.Sampling) bool { return s.RepetitionPenalty != 0 && s.RepetitionPenalty != 1 }
	for i, a := range c.Agents {
		if s := a.Sampling.Apply(c.Sampling); penalised(s) {
			return fmt.Errorf("agents[%d].sampling.repetition_penalty: %g, but the engine's CUDA graphs do not apply a repetition penalty; set engine.cuda_graphs: false or repetition_penalty: 1", i, s.RepetitionPenalty)
		}
	}
	if penalised(c.Eval.Sampling) {
		return fmt.Errorf("eval.sampling.repetition_penalty: %g, but the engine's CUDA graphs do not apply a repetition penalty; set engine.cuda_graphs: false or repetition_penalty: 1", c.Eval.Sampling.RepetitionPenalty)
	}
	return nil
}

func (c *Config) validateAdvantage() error {
	if !slices.Contains(advantage.Names(), c.Advantage.Estimator) {
		return fmt.Errorf("advantage.estimator: unknown estimator %q%s; valid: %s", c.Advantage.Estimator, suggestpkg.DidYouMean(c.Advantage.Estimator, advantage.Names()), strings.Join(advantage.Names(), ", "))
	}
	_, err := advantage.New(c.Advantage.Estimator, c.Advantage.Options)
	return err
}

func (c *Config) validateOptim() error {
	if err := c.withRunSteps(c.Optim).Validate(); err != nil {
		return fmt.Errorf("optim.%w", err)
	}
	for i, a := range c.Agents {
		if err := c.agentSettings(a.Name).Validate(); err != nil {
			// the value this config gives every other agent is the
			// nearest sensible one
			return fmt.Errorf("agents[%d].optim.%w; this config's optim section has %s", i, err, sectionValue(c.Optim, err))
		}
	}
	return nil
}

// sectionValue is "key: value" of the optim setting an error of
// optim.Settings.Validate names (the key before its first colon).
func sectionValue(s optim.Settings, err error) string {
	key, _, _ := strings.Cut(err.Error(), ":")
	raw, merr := yaml.Marshal(s)
	if merr != nil {
		return key + " unset"
	}
	var m map[string]any
	if yaml.Unmarshal(raw, &m) != nil {
		return key + " unset"
	}
	return fmt.Sprintf("%s: %v", key, m[key])
}

// validateSharing refuses agents that train one model with different
// settings (optim.Assign decides the grouping and names every differing
// key) or whose rows the update would score at different temperatures.
func (c *Config) validateSharing() error {
	groups, err := c.Groups()
	if err != nil {
		return fmt.Errorf("%w (assignment: %s)", err, c.Assignment)
	}
	for _, g := range groups {
		for _, other := range g.Agents[1:] {
			ta, tb := c.trainingTemperature(g.Agents[0]), c.trainingTemperature(other)
			if g.Settings.LogProbTemperatureOf(ta) != g.Settings.LogProbTemperatureOf(tb) {
				return fmt.Errorf("agents %q and %q share model %q (assignment: shared) but sample at temperatures %g and %g; the update recomputes log-probs at one temperature per model, so give them the same sampling.temperature, set optim.logprob_temperature: raw, or use assignment: separate",
					g.Agents[0], other, g.Model, ta, tb)
			}
		}
	}
	return c.validateShard()
}

// validateShard refuses sharding where it cannot apply: adapters (their
// state is small, and they hang off a frozen base every rank holds whole),
// and level 3 without activation checkpointing (the plain backward needs
// every layer's weights at once).
func (c *Config) validateShard() error {
	for _, t := range c.Trained() {
		level := t.Model.Shard
		if level == 0 {
			continue
		}
		if t.LoRA != nil {
			return fmt.Errorf("models.%s.shard: %d, but agent %s trains a LoRA adapter on it (assignment: lora); adapters are not sharded (their optimizer state is small and their frozen base stays whole on every rank): set shard: 0, or train full weights (assignment: separate or shared)",
				t.Source, level, t.Agents[0])
		}
		if level == 3 && !c.Settings(t).ActivationCheckpointing {
			return fmt.Errorf("models.%s.shard: 3 gathers each layer's weights only while a pass uses it, which needs the checkpointed backward; set optim.activation_checkpointing: true (for agent %s), or shard: 2",
				t.Source, t.Agents[0])
		}
	}
	return nil
}

// Groups is the run's agent-to-model grouping: one group per trained model,
// with its agents and their (identical) settings, as optim.Assign decides it.
func (c *Config) Groups() ([]optim.Group, error) {
	var specs []optim.AgentSpec
	for _, t := range c.Trained() {
		for _, a := range t.Agents {
			specs = append(specs, optim.AgentSpec{Name: a, Model: t.Name, Settings: c.agentSettings(a)})
		}
	}
	return optim.Assign(specs)
}

func (c *Config) validateEval() error {
	e := c.Eval
	switch {
	case e.Every < 0:
		return fmt.Errorf("eval.every: must be >= 0 (0 = no periodic evaluation), got %d", e.Every)
	case e.Tasks < 0:
		return fmt.Errorf("eval.tasks: must be >= 0 (0 = the whole test split), got %d", e.Tasks)
	case e.N < 1:
		return fmt.Errorf("eval.n: must be >= 1 sample per task, got %d", e.N)
	}
	for i, k := range e.Ks {
		if k < 1 || k > e.N {
			return fmt.Errorf("eval.ks[%d]: pass@k needs 1 <= k <= eval.n (%d), got %d", i, e.N, k)
		}
	}
	if err := e.Sampling.Validate(); err != nil {
		return fmt.Errorf("eval.%w", err)
	}
	return nil
}

func (c *Config) validateCheckpoint() error {
	switch {
	case c.Checkpoint.Every < 0:
		return fmt.Errorf("checkpoint.every: must be >= 0 (0 = only at the end), got %d", c.Checkpoint.Every)
	case c.Checkpoint.Keep < 0:
		return fmt.Errorf("checkpoint.keep: must be >= 0 (0 = keep all), got %d", c.Checkpoint.Keep)
	case c.Export.MaxShardBytes < 0:
		return fmt.Errorf("export.max_shard_bytes: must be >= 0 (0 = 5 GB), got %d", c.Export.MaxShardBytes)
	}
	if c.Export.DType != "" {
		return checkDType("export.dtype", c.Export.DType)
	}
	return nil
}

// trainingTemperature is the temperature an agent samples with in training.
func (c *Config) trainingTemperature(agent string) float64 {
	for _, a := range c.Agents {
		if a.Name == agent {
			return a.Sampling.Apply(c.Sampling).Temperature
		}
	}
	return c.Sampling.Temperature
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, " or ")
}
