package run

// build.go — turning a resolved config into the parts of a run: after the
// weight-free parts and checks of preflight.go (tokenizers, agents bound to
// their models' chat templates, the environment splits, the workflow, the
// advantage estimator), the trained models (and KL references), their
// trainers, the generators the sampler calls and the engines.

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"troupe/advantage"
	"troupe/ckpt"
	"troupe/config"
	"troupe/dist"
	"troupe/gen"
	"troupe/model"
	"troupe/optim"
	"troupe/policy"
	"troupe/rollout"
	"troupe/tokenizer"
	"troupe/torch"
)

// team is everything a run acts and trains with.
type team struct {
	cfg         *config.Config
	trained     []config.Trained
	models      map[string]*model.Model // by trained model name (an adapter's view under assignment: lora)
	refs        map[string]*model.Model // KL references, by trained model name
	bases       map[string]*model.Model // assignment: lora: the frozen model per models.<source>, shared by its adapters
	baseRecords map[string]baseRecord   // and its identity, recorded in every checkpoint (lorabase.go)
	tokenizers  map[string]*tokenizer.Tokenizer
	trainers    []*policy.Trainer // in cfg.Trained() order
	agents      []*rollout.Agent
	workflow    rollout.Workflow
	train       rollout.Environment
	test        rollout.Environment // nil when the source has no test split
	estimator   advantage.Estimator
	sampler     *rollout.Sampler
	// copies are the engine weight copies, by trained model name
	// (run.policy_lag: 1): the generators and engines decode from them;
	// copyAt is how many updates the weights they hold had (overlaprollout.go)
	copies      map[string]*model.Model
	copyAt      int
	engines     []*model.Engine // one per model when engine.enabled, in name order
	engineNames []string
	engineLast  []model.EngineStats // counters at the last metrics record
	graphWarned map[int]bool        // engines whose CUDA-graph failure was reported
	tokDirs     map[string]string   // tokenizer files by trained model name, where not the configured ones
	// modelConfigs are the trained models' config.json (an adapter's is its
	// base's), read before any weight (preflight.go)
	modelConfigs map[string]model.Config
	dist         *dist.Group // nil: one process
	// offNode: train check on a machine without the config's CUDA devices
	// (preflight.go); their presence and free memory are not checked
	offNode bool
	// pendingState is the optimizer state the trainers will allocate per
	// device, after the engines size their automatic budgets
	pendingState map[torch.Device]int64
	// ranks is the data-parallel world a launcher checks for before it
	// starts the ranks (Train.Validate; 0 otherwise: dist says)
	ranks int
	// notes are what reading the data set aside, one line each
	// (preflight.go); the run, check, sft and eval print them
	notes     []string
	cpuMemory bool // the CPU allocator is counted (torch.TrackCPUMemory): memory/cpu/… metrics
}

func loadOptions(m config.Model) (model.Options, error) {
	opt, err := parseOptions(m)
	if err != nil {
		return opt, err
	}
	return opt, deviceHere(opt.Device)
}

// parseOptions is m's dtype and device, wherever this process runs.
func parseOptions(m config.Model) (model.Options, error) {
	dt, err := torch.ParseDType(m.DType)
	if err != nil {
		return model.Options{}, err
	}
	dev, err := torch.ParseDevice(m.Device)
	if err != nil {
		return model.Options{}, err
	}
	return model.Options{DType: dt, Device: dev}, nil
}

// deviceHere refuses a CUDA device this process cannot use, saying why:
// the CPU-only build, or fewer visible devices than the index.
func deviceHere(dev torch.Device) error {
	n := torch.CUDADeviceCount()
	if !dev.IsCUDA() || dev < torch.Device(n) {
		return nil
	}
	if cuda, _ := torch.CUDABuild(); !cuda {
		return fmt.Errorf("device %v: this bin/train is the CPU-only build (make, libtorch %s), which sees no CUDA devices; on a GPU node build it with `make gpu` (README, \"Quick start on a GPU node\"), or use device: cpu", dev, torch.VersionString())
	}
	visible := os.Getenv("CUDA_VISIBLE_DEVICES")
	if visible == "" {
		visible = "unset"
	}
	return fmt.Errorf("device %v: this process sees %d CUDA devices (CUDA_VISIBLE_DEVICES %s; nvidia-smi lists the GPUs and the driver); use a device below cuda:%d, or device: cpu", dev, n, visible, n)
}

// cudaDevicesOf lists the CUDA devices cfg's models and KL references
// are on ("cuda:0", …), sorted.
func cudaDevicesOf(cfg *config.Config) []string {
	seen := map[string]bool{}
	for _, tr := range cfg.Trained() {
		for _, d := range []string{tr.Model.Device, tr.Model.ReferenceDevice} {
			if dev, err := torch.ParseDevice(d); err == nil && dev.IsCUDA() {
				seen[dev.String()] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for d := range seen {
		out = append(out, d)
	}
	slices.Sort(out)
	return out
}

// buildTeam loads every model and wires the run. withTrainers=false builds
// only what evaluation needs.
func buildTeam(cfg *config.Config, withTrainers bool, from string, dp *dist.Group) (t *team, err error) {
	t = newTeam(cfg, dp)
	defer func() {
		if err != nil {
			t.free()
			t = nil
		}
	}()
	// tokenizers, model configs, agents, environments, workflow and
	// estimator: what train check also checks (preflight.go)
	if err := t.prepare(withTrainers, from); err != nil {
		return nil, err
	}
	for i, tr := range t.trained {
		opt, err := loadOptions(tr.Model)
		if err != nil {
			return nil, fmt.Errorf("models.%s: %w", tr.Source, err)
		}
		if tr.LoRA != nil {
			if err := t.loadAdapter(tr, i, opt, withTrainers, from); err != nil {
				return nil, err
			}
			continue
		}
		weights, what := tr.Model.Path, "models."+tr.Source
		if from != "" {
			weights = filepath.Join(from, filepath.FromSlash(ckpt.ModelStateDir(tr.Name)))
			what = fmt.Sprintf("checkpoint %s, model %s", from, tr.Name)
		}
		m, err := model.Load(weights, opt)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		t.models[tr.Name] = m
		if withTrainers && cfg.Settings(tr).NeedsReference() {
			// The KL reference is the base model: the one thing a
			// checkpoint does not hold.
			refOpt := opt
			if d := tr.Model.ReferenceDevice; d != "" {
				ro, err := loadOptions(config.Model{DType: tr.Model.DType, Device: d})
				if err != nil {
					return nil, fmt.Errorf("models.%s.reference_device: %w", tr.Source, err)
				}
				refOpt.Device = ro.Device
			}
			ref, err := model.Load(tr.Model.Path, refOpt)
			if err != nil {
				return nil, fmt.Errorf("models.%s (the base weights, the KL reference): %w", tr.Source, err)
			}
			t.refs[tr.Name] = ref
		}
	}
	if withTrainers && cfg.Run.PolicyLag > 0 {
		if err := t.makeEngineCopies(); err != nil { // overlaprollout.go
			return nil, err
		}
	}
	t.sampler = &rollout.Sampler{Generators: map[string]rollout.Generator{}, MaxBatchRows: cfg.Batch.MaxBatchRows}
	for name := range t.models {
		t.sampler.Generators[name] = generatorFor(t.decoder(name))
	}
	if cfg.Engine.Enabled {
		if err := t.buildEngines(); err != nil {
			return nil, err
		}
	}
	if withTrainers {
		if err := t.buildTrainers(); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// loadAdapter gives trained model tr (the i-th) its adapter on the shared
// frozen base of its source model: a fresh one, or the one saved in the
// checkpoint from. The base is loaded once per source and is also the KL
// reference, at no extra memory.
func (t *team) loadAdapter(tr config.Trained, i int, opt model.Options, withTrainers bool, from string) error {
	base, ok := t.bases[tr.Source]
	if !ok {
		path, rec, err := resolveBase(tr, from)
		if err != nil {
			return err
		}
		if base, err = model.Load(path, opt); err != nil {
			return fmt.Errorf("models.%s (the frozen base of the adapters): %w", tr.Source, err)
		}
		t.bases[tr.Source] = base
		if t.baseRecords == nil {
			t.baseRecords = map[string]baseRecord{}
		}
		t.baseRecords[tr.Source] = rec
	}
	what := "models." + tr.Source
	var a *model.Adapter
	var err error
	if from != "" {
		dir := filepath.Join(from, filepath.FromSlash(ckpt.ModelStateDir(tr.Name)))
		what = fmt.Sprintf("checkpoint %s, adapter %s", from, tr.Name)
		a, err = base.LoadAdapter(dir)
	} else {
		l := *tr.LoRA
		a, err = base.NewAdapter(model.LoRAConfig{Rank: l.Rank, Alpha: l.Alpha, Targets: l.Targets, Dropout: l.Dropout, RSLoRA: l.RSLoRA,
			Seed: rollout.DeriveSeed(t.cfg.Run.Seed, seedLoRA, uint64(i))})
	}
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	a.BaseModel = t.baseRecords[tr.Source].Path
	t.models[tr.Name] = a.Model()
	if withTrainers && t.cfg.Settings(tr).NeedsReference() {
		t.refs[tr.Name] = base
	}
	return nil
}

// tokenizerFix is how to name the right tokenizer for tr.
func tokenizerFix(tr config.Trained) string {
	return fmt.Sprintf("set models.%s.tokenizer to the model's own tokenizer (default: its path)", tr.Source)
}

// buildAgents compiles the agents, each bound to its trained model's
// tokenizer and chat template (thinking on or off per agent).
func (t *team) buildAgents(cfgs []rollout.AgentConfig, def rollout.AgentDefaults) error {
	agents, err := rollout.NewAgents(cfgs, def, func(ac rollout.AgentConfig) (rollout.Binding, error) {
		tok, ok := t.tokenizers[ac.Model]
		if !ok {
			return rollout.Binding{}, fmt.Errorf("no trained model %q", ac.Model)
		}
		thinking, date := ac.Thinking, ac.ChatDate
		if err := tokenizer.CheckChatDate(date); err != nil {
			return rollout.Binding{}, fmt.Errorf("chat_date: %w", err)
		}
		family, err := tok.DetectChatTemplate() // every prompt goes through it: refused now, not at the first rollout
		if err != nil {
			return rollout.Binding{}, err
		}
		if err := tok.CheckTemplate(family); err != nil {
			return rollout.Binding{}, err
		}
		// a Qwen3 model speaks Qwen3's chat format (its thinking block);
		// another family's template, from another model's tokenizer, renders
		// prompts it was not trained on
		if mc, ok := t.modelConfigs[ac.Model]; ok && mc.Family == model.Qwen3 && family != tokenizer.ChatTemplateQwen3 {
			source := ac.Model
			for _, tr := range t.trained {
				if tr.Name == ac.Model {
					source = tr.Source
				}
			}
			return rollout.Binding{}, fmt.Errorf("the tokenizer's chat template is %s, but the model is a Qwen3 (config.json model_type qwen3), trained on Qwen3's template; set models.%s.tokenizer to the model's own tokenizer (by default its path)", family, source)
		}
		for _, w := range tokenizer.IgnoredSettings(family, thinking, date) {
			fmt.Fprintf(os.Stderr, "warning: agent %s (model %s): %s\n", ac.Name, ac.Model, w)
		}
		chat := func(msgs []rollout.Message) (string, error) {
			tm := make([]tokenizer.Message, len(msgs))
			for i, m := range msgs {
				tm[i] = tokenizer.Message{Role: m.Role, Content: m.Content}
			}
			return tok.ApplyChatTemplate(tm, tokenizer.ChatOptions{AddGenerationPrompt: true, DisableThinking: !thinking, Date: date})
		}
		return rollout.Binding{Chat: chat, Codec: tok, Stop: stopIDs(tok, t.modelConfigs[ac.Model])}, nil
	})
	t.agents = agents
	return err
}

// environments builds the configured environment's splits with the Build
// it registered (rollout.RegisterEnvironment); test is nil when the
// environment has no test split.
func environments(cfg *config.Config) (train, test rollout.Environment, err error) {
	spec, err := rollout.EnvironmentOf(cfg.Env.Name)
	if err != nil {
		return nil, nil, err
	}
	opts, err := cfg.Env.Options()
	if err != nil {
		return nil, nil, err
	}
	return spec.Build(opts)
}

func (t *team) buildTrainers() error {
	groups, err := t.cfg.Groups()
	if err != nil {
		return err
	}
	for _, g := range groups {
		sampling := t.trainingTemperature(g.Agents)
		temp := g.Settings.LogProbTemperatureOf(sampling)
		if s := g.Settings; s.RolloutIS != optim.RolloutISOff && oneTemperature(temp) != oneTemperature(sampling) {
			return fmt.Errorf("model %q: rollout_is %s weighs by the sampler's log-probs, which are at the sampling temperature %g, but the update's log-probs are at %g (logprob_temperature %s); set logprob_temperature: sampling, or rollout_is: off",
				g.Model, s.RolloutIS, sampling, temp, s.LogProbTemperature)
		}
		tr, err := policy.NewTrainer(policy.TrainerConfig{
			Group: g, Policy: t.models[g.Model], Reference: t.refs[g.Model],
			Temperature: temp, Seed: rollout.DeriveSeed(t.cfg.Run.Seed, seedMiniBatches), Dist: t.dist.Collectives(),
			Shard: t.shardConfig(g.Model),
		})
		if err != nil {
			return err
		}
		t.trainers = append(t.trainers, tr)
	}
	return nil
}

// shardConfig is how trained model name spreads its state over the ranks.
func (t *team) shardConfig(name string) policy.ShardConfig {
	for _, tr := range t.trained {
		if tr.Name == name {
			return policy.ShardConfig{Level: tr.Model.Shard, BucketBytes: int64(tr.Model.ShardBucketMiB * (1 << 20))}
		}
	}
	return policy.ShardConfig{}
}

// sharded says whether any trainer spreads its state over the ranks.
func (t *team) sharded() bool {
	for _, tr := range t.trainers {
		if tr.ShardLevel() > 0 {
			return true
		}
	}
	return false
}

// sameTemperature says whether tr's update divides the logits by the
// temperature its agents sample at, so that the sampler's log-probs and
// the update's are of one distribution and the update compares them
// (policy/rollout.go). A greedy agent (0) reports temperature 1's, as an
// update at 0 computes.
func (t *team) sameTemperature(tr *policy.Trainer) bool {
	return oneTemperature(tr.Temperature()) == oneTemperature(t.trainingTemperature(tr.Agents()))
}

// oneTemperature is the temperature a sampler or an update applies for a
// configured one: 0 (greedy, or none) means 1.
func oneTemperature(x float64) float64 {
	if x > 0 {
		return x
	}
	return 1
}

// trainingTemperature is the sampling temperature of the given agents
// (the config refuses agents that share a model with different ones).
func (t *team) trainingTemperature(agents []string) float64 {
	for _, a := range t.agents {
		if slices.Contains(agents, a.Name) {
			return a.Sampling.Temperature
		}
	}
	return 1
}

// Seed streams derived from run.seed.
const (
	seedRollout uint64 = iota + 1
	seedMiniBatches
	seedData
	seedEval
	seedLoRA
)

// generatorFor adapts model.Generate to the sampler (the reference path,
// engine.enabled: false): a fresh generator per call, seeded with the
// call's seed, so every call is reproducible on its own and nothing stateful
// needs saving in checkpoints.
func generatorFor(m *model.Model) rollout.Generator {
	return rollout.GeneratorFunc(func(reqs []gen.Request, seed uint64) ([]gen.Result, error) {
		g := torch.NewGenerator(m.Device(), seed)
		defer g.Free()
		return m.Generate(reqs, nil, g)
	})
}

// free releases every model and trainer.
func (t *team) free() {
	if t == nil {
		return
	}
	for _, e := range t.engines {
		e.Free()
	}
	for _, c := range t.copies {
		c.Free()
	}
	for _, tr := range t.trainers {
		tr.Free()
	}
	for _, m := range t.models {
		m.Free()
	}
	for name, m := range t.refs {
		if t.models[name].Adapter() == nil { // an adapter's reference is its base, freed below
			m.Free()
		}
	}
	for _, b := range t.bases {
		b.Free()
	}
}

// trainerFor returns the trainer of a trained model.
func (t *team) trainerFor(name string) *policy.Trainer {
	for _, tr := range t.trainers {
		if tr.Model() == name {
			return tr
		}
	}
	return nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
