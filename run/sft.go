package run

// sft.go — `train sft`: supervised warm-up on demonstrations of the
// configured workflow, so that a small or untrained model starts RL knowing
// the output format (a randomly initialised model never writes \boxed{} or
// <verify>, every row gets the same penalty, and group advantages are all 0).
//
// Demonstrations come from the real workflow: the sampler runs it with an
// oracle generator per agent instead of a model, so the prompts are exactly
// those RL will show. The oracle is found by name in the registries
// (rollout.OracleFor): the workflow's (search), else the environment's (the
// games, writing, coding, math); it answers from the task's gold answer,
// right with probability --p-correct. Each source checkpoint is then
// trained with cross-entropy on the response tokens of every agent that
// uses it, and written as a Hugging Face directory under --out. With
// --redraw every pass over the tasks draws its demonstrations anew: below
// --p-correct 1 the model then learns how often a demonstration is wrong,
// where fixed demonstrations, seen many times, teach it which questions to
// get wrong.
//
// SIGINT or SIGTERM stops it after the step being taken: the model trained
// so far is written (atomically, as every model is), the models not yet
// trained are named, and the command exits non-zero (interrupt.go).
//
// What it is not: general instruction tuning. For that, train with your own
// data elsewhere and point models.<name>.path at the result.

import (
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"troupe/ckpt"
	"troupe/config"
	"troupe/gen"
	"troupe/model"
	"troupe/policy"
	"troupe/rollout"
	"troupe/tokenizer"
	"troupe/torch"
)

type SFT struct {
	Config   string
	Sets     []string
	Out      string
	Tasks    int
	Steps    int
	Batch    int
	Lr       float64
	PCorrect float64
	Redraw   bool
	Seed     uint64
	LogEvery int
	Force    bool
}

func (c *SFT) Run(out io.Writer, _ []string) (err error) {
	defer torch.Recover(&err)
	// every agent gets its own generator name, so the oracle knows who asks
	cfg, err := config.Load(c.Config, append(append([]string(nil), c.Sets...), "assignment=separate"))
	if err != nil {
		return err
	}
	if err := c.check(cfg); err != nil {
		return err
	}
	beat := startHeartbeat(out, "sft: loading the models")
	t, err := buildTeam(cfg, false, "", nil)
	beat()
	if err != nil {
		return err
	}
	defer t.free()
	t.printNotes(out)
	beat = startHeartbeat(out, "sft: writing the demonstrations")
	p := &passes{c: c, t: t}
	first, err := p.pass(0)
	beat()
	if err != nil {
		return err
	}
	stopped, release := commandStop(out, "sft", "finishing this step and writing the model trained so far",
		"the model being trained is not written; those written before it stay")
	defer release()
	sources := slices.Sorted(maps.Keys(first))
	for i, src := range sources {
		m, tokDir := t.modelOfSource(src)
		redrawn := ""
		if c.Redraw {
			redrawn = ", drawn anew for every pass"
		}
		fmt.Fprintf(out, "sft: model %s: %d demonstrations%s\n", src, len(first[src]), redrawn)
		done, err := c.train(out, m, func(k int) ([]policy.Sequence, error) { return p.of(src, k) }, stopped)
		if err != nil {
			return fmt.Errorf("sft: model %s: %w", src, err)
		}
		dst := filepath.Join(c.Out, src)
		if done > 0 {
			if err := ckpt.Export(dst, m, tokDir, ckpt.ExportOptions{}); err != nil {
				return err
			}
		}
		if sig := stopped(); sig != nil {
			wrote := "nothing written for it"
			if done > 0 {
				wrote = "written to " + dst + " as trained so far"
			}
			return fmt.Errorf("sft: interrupted by %v: model %s took %d of its %d steps (%s); not trained: %s", sig, src, done, c.Steps, wrote, listOrNone(sources[i+1:]))
		}
		fmt.Fprintf(out, "sft: wrote %s (set models.%s.path to it)\n", dst, src)
	}
	return nil
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// check refuses bad flags, naming the flag, and an --out that would replace
// a model directory (above all the input model's own) without --force.
func (c *SFT) check(cfg *config.Config) error {
	switch {
	case !(c.PCorrect >= 0 && c.PCorrect <= 1):
		return fmt.Errorf("sft: --p-correct must be in [0, 1], got %g", c.PCorrect)
	case c.Steps < 1:
		return fmt.Errorf("sft: --steps must be ≥ 1, got %d", c.Steps)
	case c.Batch < 1:
		return fmt.Errorf("sft: --batch must be ≥ 1, got %d", c.Batch)
	case c.Tasks < 1:
		return fmt.Errorf("sft: --tasks must be ≥ 1, got %d", c.Tasks)
	case !(c.Lr > 0) || c.Lr > math.MaxFloat32:
		return fmt.Errorf("sft: --lr must be a number > 0 and finite in float32 (at most %.4g), got %g", math.MaxFloat32, c.Lr)
	case c.LogEvery < 1:
		return fmt.Errorf("sft: --log-every must be ≥ 1, got %d", c.LogEvery)
	}
	// every demonstration is held for the whole run, and a step's batch
	// of sequences at once (config.CheckMemory: the one memory bound)
	if err := config.CheckMemory(fmt.Sprintf("sft: --tasks %d", c.Tasks), float64(c.Tasks), config.EpisodeBytes, "bytes per demonstration"); err != nil {
		return err
	}
	if err := config.CheckMemory(fmt.Sprintf("sft: --batch %d", c.Batch), float64(c.Batch), config.EpisodeBytes, "bytes per sequence"); err != nil {
		return err
	}
	inputs := []string{c.Config} // every model and tokenizer the config names, and the config
	for _, m := range cfg.Models {
		inputs = append(inputs, m.Path, m.Tokenizer)
	}
	for _, src := range slices.Sorted(maps.Keys(cfg.Models)) {
		dst := filepath.Join(c.Out, src)
		m := cfg.Models[src]
		if sameFile(dst, m.Path) || (m.Tokenizer != "" && sameFile(dst, m.Tokenizer)) {
			return fmt.Errorf("sft: --out %s would write model %s over its own input (%s); choose another --out", c.Out, src, m.Path)
		}
		if err := RefuseInputAsOutput("sft", dst, "--out", inputs...); err != nil {
			return err
		}
		if err := RefuseReplace("sft", dst, "--out", c.Force); err != nil {
			return err
		}
	}
	return nil
}

func sourceOf(cfg *config.Config, agent string) string {
	for _, a := range cfg.Agents {
		if a.Name == agent {
			return a.Model
		}
	}
	return ""
}

// modelOfSource returns the loaded copy of a source checkpoint (the first
// agent's) and its tokenizer directory.
func (t *team) modelOfSource(src string) (*model.Model, string) {
	for _, tr := range t.trained {
		if tr.Source == src {
			return t.models[tr.Name], t.tokenizerDir(tr.Name)
		}
	}
	return nil, ""
}

// passes holds the demonstrations of each pass over the tasks, by source
// model: one set, reused, or (--redraw) a new draw for every pass, so that
// a wrong demonstration is a slip the model learns the rate of, not a fact
// about one question it learns by heart. A pass's draw depends on its
// number only: every source model trains on the same demonstrations.
type passes struct {
	c           *SFT
	t           *team
	first, last map[string][]policy.Sequence
	lastK       int
}

// of returns the demonstrations source trains on in pass k (0-based).
func (p *passes) of(src string, k int) ([]policy.Sequence, error) {
	if !p.c.Redraw {
		k = 0
	}
	set, err := p.pass(k)
	if err != nil {
		return nil, err
	}
	return set[src], nil
}

// pass returns the demonstrations of pass k, grouped by source model; it
// keeps the first and the latest.
func (p *passes) pass(k int) (map[string][]policy.Sequence, error) {
	switch {
	case k == 0 && p.first != nil:
		return p.first, nil
	case k > 0 && k == p.lastK:
		return p.last, nil
	}
	seed := rollout.DeriveSeed(p.c.Seed, 7) // pass 0: the draw without --redraw
	if k > 0 {
		seed = rollout.DeriveSeed(p.c.Seed, 7, uint64(k))
	}
	demos, err := p.c.demonstrations(p.t, seed)
	if err != nil {
		return nil, err
	}
	set := map[string][]policy.Sequence{}
	for _, s := range demos {
		src := sourceOf(p.t.cfg, s.Agent)
		set[src] = append(set[src], policy.Sequence{Agent: s.Agent, Prompt: s.PromptTokens, Response: s.ResponseTokens, Advantage: 1})
	}
	if k == 0 {
		p.first = set
	} else {
		p.last, p.lastK = set, k
	}
	return set, nil
}

// demonstrations runs the workflow on train tasks with an oracle per agent.
func (c *SFT) demonstrations(t *team, seed uint64) ([]rollout.Sample, error) {
	tasks := make([]rollout.Task, c.Tasks)
	for i := range tasks {
		tasks[i] = t.train.Task(i % t.train.Len())
	}
	o, err := rollout.OracleFor(t.cfg.Workflow.Name, t.cfg.Workflow.Options(), t.cfg.Env.Name, t.train)
	if err != nil {
		return nil, fmt.Errorf("sft: %w", err)
	}
	s := &rollout.Sampler{Generators: map[string]rollout.Generator{}, MaxBatchRows: t.cfg.Batch.MaxBatchRows}
	for _, a := range t.agents {
		s.Generators[a.Model] = oracle(o, a, tasks, t.tokenizers[a.Model], c.PCorrect)
	}
	ro, err := s.Run(t.workflow, tasks, 1, seed)
	if err != nil {
		return nil, err
	}
	return ro.Samples, nil
}

// oracle answers an agent's prompts with the demonstrations of o.
func oracle(o rollout.Oracle, a *rollout.Agent, tasks []rollout.Task, tok *tokenizer.Tokenizer, pCorrect float64) rollout.Generator {
	return rollout.GeneratorFunc(func(reqs []gen.Request, seed uint64) ([]gen.Result, error) {
		draw := &rollout.Draw{Rand: rollout.NewRand(seed), PCorrect: pCorrect}
		out := make([]gen.Result, len(reqs))
		for i, req := range reqs {
			prompt := tok.Decode(req.Prompt)
			task, ok := findTask(prompt, tasks)
			if !ok {
				return nil, fmt.Errorf("sft: oracle for %s: no task question found in the prompt", a.Name)
			}
			out[i] = demoResult(tok, req, o(a.Name, task, prompt, draw))
		}
		return out, nil
	})
}

// demoResult encodes a demonstration as a generation result: the text, the
// stop token, cut at the request's token limit.
func demoResult(tok *tokenizer.Tokenizer, req gen.Request, text string) gen.Result {
	ids := tok.Encode(text)
	if len(req.Stop) > 0 {
		ids = append(ids, req.Stop[0])
	}
	finish := gen.FinishStop
	if len(ids) > req.MaxNewTokens {
		ids, finish = ids[:req.MaxNewTokens], gen.FinishLength
	}
	return gen.Result{Tokens: ids, LogProbs: make([]float32, len(ids)), Finish: finish}
}

// findTask returns the task whose question the prompt contains (the longest,
// when one question contains another).
func findTask(prompt string, tasks []rollout.Task) (rollout.Task, bool) {
	best := -1
	for i, t := range tasks {
		if strings.Contains(prompt, t.Question) && (best < 0 || len(t.Question) > len(tasks[best].Question)) {
			best = i
		}
	}
	if best < 0 {
		return rollout.Task{}, false
	}
	return tasks[best], true
}

// train fits m to the demonstrations: cross-entropy on the response tokens
// (mean over tokens), AdamW, batches in a seeded order. It returns the
// steps taken: fewer than c.Steps when stopped returns a signal.
func (c *SFT) train(out interface{ Write([]byte) (int, error) }, m *model.Model, pass func(k int) ([]policy.Sequence, error), stopped func() os.Signal) (done int, err error) {
	defer torch.Recover(&err)
	seqs, err := pass(0)
	if err != nil {
		return 0, err
	}
	m.SetRequiresGrad(true)
	opt := torch.NewAdamW([]torch.AdamWGroup{{Params: m.Parameters(), LR: c.Lr, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 0.01}}, m.DType() != torch.Float32)
	defer opt.Free()
	r := rollout.NewRand(rollout.DeriveSeed(c.Seed, 11))
	order := r.Perm(len(seqs))
	pos, k := 0, 0
	began := time.Now()
	lastLine := began // a line at least every heartbeatEvery, whatever --log-every
	running := 0.0
	defer m.SetRequiresGrad(false)
	for step := 0; step < c.Steps; step++ {
		if stopped() != nil {
			fmt.Fprintln(out, sftProgress(step, c.Steps, running, time.Since(began)))
			return step, nil
		}
		batch := make([]policy.Sequence, 0, c.Batch)
		for len(batch) < c.Batch && len(batch) < len(seqs) {
			if pos == len(order) {
				k++
				if seqs, err = pass(k); err != nil {
					return step, err
				}
				order, pos = r.Perm(len(seqs)), 0
			}
			batch = append(batch, seqs[order[pos]])
			pos++
		}
		loss, err := sftStep(m, opt, batch, c.Lr*math.Min(1, float64(step+1)/10))
		if err != nil {
			return step, err
		}
		afterSFTStep(step + 1)
		running = 0.9*running + 0.1*loss
		if step == 0 {
			running = loss
		}
		if (step+1)%c.LogEvery == 0 || step+1 == c.Steps || time.Since(lastLine) >= heartbeatEvery {
			fmt.Fprintln(out, sftProgress(step+1, c.Steps, running, time.Since(began)))
			lastLine = time.Now()
		}
	}
	return c.Steps, nil
}

// afterSFTStep runs after each step with the steps taken (a seam for
// tests).
var afterSFTStep = func(int) {}

func sftStep(m *model.Model, opt *torch.AdamW, batch []policy.Sequence, lr float64) (loss float64, err error) {
	defer torch.Recover(&err)
	s := torch.NewScope()
	defer s.Close()
	b, err := policy.Pack(batch, m.Device())
	if err != nil {
		return 0, err
	}
	logp, _, err := b.LogProbs(m, model.LogProbOptions{})
	if err != nil {
		return 0, err
	}
	l := logp.Sum().Neg().Div(b.Mask.ToDType(torch.Float32).Sum())
	l.Backward()
	torch.ClipGradNorm(m.Parameters(), 1)
	opt.SetLR(0, lr)
	opt.Step()
	m.MarkUpdated()
	opt.ZeroGrad()
	return l.Item(), nil
}
