package main

// sft.go — `train sft`: supervised warm-up on demonstrations of the
// configured workflow, so that a small or untrained model starts RL knowing
// the output format (a randomly initialised model never writes \boxed{} or
// <verify>, every row gets the same penalty, and group advantages are all 0).
//
// Demonstrations come from the real workflow: the sampler runs it with an
// oracle generator per agent instead of a model, so the prompts are exactly
// those RL will show. The oracle is the workflow's (search: registered with
// it), else the environment's (rollout.Demonstrator: the games, writing,
// coding), else math's: it answers from the task's gold answer, right with
// probability --p-correct and otherwise with the task's typical mistake (a
// nearby wrong number when it records none), and a verifying agent (by
// name) approves exactly the right answers. Each source checkpoint
// is then trained with cross-entropy on the response tokens of every agent
// that uses it, and written as a Hugging Face directory under --out.
//
// What it is not: general instruction tuning. For that, train with your own
// data elsewhere and point models.<name>.path at the result.

import (
	"fmt"
	"maps"
	"math"
	"math/big"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"troupe/ckpt"
	"troupe/config"
	"troupe/model"
	"troupe/policy"
	"troupe/rollout"
	"troupe/rollout/answer"
	mathenv "troupe/rollout/env/math"
	"troupe/tokenizer"
	"troupe/torch"
)

type sftCmd struct {
	config   string
	sets     []string
	out      string
	tasks    int
	steps    int
	batch    int
	lr       float64
	pCorrect float64
	seed     uint64
	logEvery int
	force    bool
}

func newSFT() *cobra.Command {
	c := &sftCmd{}
	cmd := &cobra.Command{
		Use:   "sft --config run.yaml --out DIR",
		Short: "Supervised warm-up on oracle demonstrations of the configured workflow (format and roles)",
		Args:  cobra.NoArgs,
		RunE:  c.run,
	}
	f := cmd.Flags()
	f.StringVarP(&c.config, "config", "c", "", "run config (YAML) whose models, agents, workflow and env define the demonstrations (required)")
	f.StringArrayVar(&c.sets, "set", nil, "override a config key (repeatable)")
	f.StringVarP(&c.out, "out", "o", "", "output directory: one Hugging Face directory per source model (required)")
	f.IntVar(&c.tasks, "tasks", 384, "train tasks to demonstrate (one episode each)")
	f.IntVar(&c.steps, "steps", 300, "optimizer steps")
	f.IntVar(&c.batch, "batch", 16, "sequences per step")
	f.Float64Var(&c.lr, "lr", 2e-3, "AdamW learning rate (constant, after 10 warm-up steps)")
	f.Float64Var(&c.pCorrect, "p-correct", 0.6, "probability that a demonstrated answer is right")
	f.Uint64Var(&c.seed, "seed", 1, "seed of the demonstrations and of the batch order")
	f.IntVar(&c.logEvery, "log-every", 25, "print the loss every this many steps")
	f.BoolVar(&c.force, "force", false, "replace existing model directories under --out")
	cmd.MarkFlagRequired("config")
	cmd.MarkFlagRequired("out")
	return cmd
}

func (c *sftCmd) run(cmd *cobra.Command, _ []string) (err error) {
	defer torch.Recover(&err)
	out := cmd.OutOrStdout()
	// every agent gets its own generator name, so the oracle knows who asks
	cfg, err := config.Load(c.config, append(append([]string(nil), c.sets...), "assignment=separate"))
	if err != nil {
		return err
	}
	if err := c.check(cfg); err != nil {
		return err
	}
	t, err := buildTeam(cfg, false, "", nil)
	if err != nil {
		return err
	}
	defer t.free()
	demos, err := c.demonstrations(t)
	if err != nil {
		return err
	}
	sources := map[string][]policy.Sequence{}
	for _, s := range demos {
		src := sourceOf(cfg, s.Agent)
		sources[src] = append(sources[src], policy.Sequence{Agent: s.Agent, Prompt: s.PromptTokens, Response: s.ResponseTokens, Advantage: 1})
	}
	for _, src := range sortedSources(sources) {
		seqs := sources[src]
		m, tokDir := t.modelOfSource(src)
		fmt.Fprintf(out, "sft: model %s: %d demonstrations\n", src, len(seqs))
		if err := c.train(out, m, seqs); err != nil {
			return fmt.Errorf("sft: model %s: %w", src, err)
		}
		dst := filepath.Join(c.out, src)
		if err := ckpt.Export(dst, m, tokDir, ckpt.ExportOptions{}); err != nil {
			return err
		}
		fmt.Fprintf(out, "sft: wrote %s (set models.%s.path to it)\n", dst, src)
	}
	return nil
}

// check refuses bad flags, naming the flag, and an --out that would replace
// a model directory (above all the input model's own) without --force.
func (c *sftCmd) check(cfg *config.Config) error {
	switch {
	case !(c.pCorrect >= 0 && c.pCorrect <= 1):
		return fmt.Errorf("sft: --p-correct must be in [0, 1], got %g", c.pCorrect)
	case c.steps < 1:
		return fmt.Errorf("sft: --steps must be ≥ 1, got %d", c.steps)
	case c.batch < 1:
		return fmt.Errorf("sft: --batch must be ≥ 1, got %d", c.batch)
	case c.tasks < 1:
		return fmt.Errorf("sft: --tasks must be ≥ 1, got %d", c.tasks)
	case !(c.lr > 0) || math.IsInf(c.lr, 0):
		return fmt.Errorf("sft: --lr must be a finite number > 0, got %g", c.lr)
	case c.logEvery < 1:
		return fmt.Errorf("sft: --log-every must be ≥ 1, got %d", c.logEvery)
	}
	for _, src := range slices.Sorted(maps.Keys(cfg.Models)) {
		dst := filepath.Join(c.out, src)
		m := cfg.Models[src]
		if sameFile(dst, m.Path) || (m.Tokenizer != "" && sameFile(dst, m.Tokenizer)) {
			return fmt.Errorf("sft: --out %s would write model %s over its own input (%s); choose another --out", c.out, src, m.Path)
		}
		if err := refuseReplace("sft", dst, "--out", c.force); err != nil {
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

func sortedSources(m map[string][]policy.Sequence) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
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

// demonstrations runs the workflow on train tasks with an oracle per agent.
func (c *sftCmd) demonstrations(t *team) ([]rollout.Sample, error) {
	tasks := make([]rollout.Task, c.tasks)
	for i := range tasks {
		tasks[i] = t.train.Task(i % t.train.Len())
	}
	s := &rollout.Sampler{Generators: map[string]rollout.Generator{}, MaxBatchRows: t.cfg.Batch.MaxBatchRows}
	for _, a := range t.agents {
		s.Generators[a.Model] = oracle(t.cfg, t.train, a, tasks, t.tokenizers[a.Model], c.pCorrect)
	}
	ro, err := s.Run(t.workflow, tasks, 1, rollout.DeriveSeed(c.seed, 7))
	if err != nil {
		return nil, err
	}
	return ro.Samples, nil
}

// oracle answers an agent's prompts from the gold answers.
func oracle(cfg *config.Config, env rollout.Environment, a *rollout.Agent, tasks []rollout.Task, tok *tokenizer.Tokenizer, pCorrect float64) rollout.Generator {
	verifying := strings.Contains(strings.ToLower(a.Name), "verif")
	o := rollout.WorkflowOracle(cfg.Workflow.Name)
	if d, ok := env.(rollout.Demonstrator); ok && o == nil {
		o = func(_ any, agent string, task rollout.Task, prompt string, right bool) string {
			return d.Demonstrate(agent, task, prompt, right)
		}
	}
	if o != nil {
		return rollout.GeneratorFunc(func(reqs []rollout.GenRequest, seed uint64) ([]rollout.GenResult, error) {
			r := rollout.NewRand(seed)
			out := make([]rollout.GenResult, len(reqs))
			for i, req := range reqs {
				prompt := tok.Decode(req.Prompt)
				task, ok := findTask(prompt, tasks)
				if !ok {
					return nil, fmt.Errorf("sft: oracle for %s: no task question found in the prompt", a.Name)
				}
				out[i] = demoResult(tok, req, o(cfg.Workflow.Options(), a.Name, task, prompt, r.Float64() < pCorrect))
			}
			return out, nil
		})
	}
	return rollout.GeneratorFunc(func(reqs []rollout.GenRequest, seed uint64) ([]rollout.GenResult, error) {
		r := rollout.NewRand(seed)
		out := make([]rollout.GenResult, len(reqs))
		for i, req := range reqs {
			prompt := tok.Decode(req.Prompt)
			task, ok := findTask(prompt, tasks)
			if !ok {
				return nil, fmt.Errorf("sft: oracle for %s: no task question found in the prompt", a.Name)
			}
			var text string
			if verifying {
				proposed, _ := answer.LastBoxed(prompt)
				if mathenv.Equivalent(proposed, mathenv.GoldAnswer(task.Answer)) {
					text = "I checked each step and the final answer is correct.\n<verify>approve</verify>"
				} else {
					text = "The final answer does not follow from the problem.\n<verify>reject</verify>"
				}
			} else {
				ans := mathenv.GoldAnswer(task.Answer)
				if r.Float64() >= pCorrect {
					if ans = task.Meta["mistake"]; ans == "" {
						ans = wrongAnswer(mathenv.GoldAnswer(task.Answer), r)
					}
				}
				text = solverDemo(task, ans)
			}
			out[i] = demoResult(tok, req, text)
		}
		return out, nil
	})
}

// demoResult encodes a demonstration as a generation result: the text, the
// stop token, cut at the request's token limit.
func demoResult(tok *tokenizer.Tokenizer, req rollout.GenRequest, text string) rollout.GenResult {
	ids := tok.Encode(text)
	if len(req.Stop) > 0 {
		ids = append(ids, req.Stop[0])
	}
	finish := rollout.FinishStop
	if len(ids) > req.MaxNewTokens {
		ids, finish = ids[:req.MaxNewTokens], rollout.FinishLength
	}
	return rollout.GenResult{Tokens: ids, LogProbs: make([]float32, len(ids)), Finish: finish}
}

// solverDemo is a Solver's demonstrated answer. A wrong one is the task's
// recorded typical mistake when it has one (Meta["mistake"]), else a nearby
// number. An expression question
// shows its working, the expression copied and set equal to the answer,
// before the boxed answer: the model learns to read the question where the
// working starts, and the answer is then next to what it depends on.
func solverDemo(task rollout.Task, ans string) string {
	if m := placeNumber.FindStringSubmatch(task.Question); m != nil && task.Meta["kind"] == "place-value" {
		// the working names every digit's place; a wrong answer picks the
		// digit of another place
		places := []string{"hundreds", "tens", "units"}[3-len(m[1]):]
		parts := make([]string, len(m[1]))
		for i := range m[1] {
			parts[i] = m[1][i:i+1] + " " + places[i]
		}
		return "Reading the number: $" + m[1] + "$ is " + strings.Join(parts, ", ") + ".\nThe answer is \\boxed{" + ans + "}."
	}
	if m := dollarExpr.FindStringSubmatch(task.Question); m != nil {
		return "Working through the problem step by step: $" + m[1] + " = " + ans + "$.\nThe answer is \\boxed{" + ans + "}."
	}
	return "Working through the problem step by step gives the result.\nThe answer is \\boxed{" + ans + "}."
}

var (
	dollarExpr  = regexp.MustCompile(`\$([^$]+)\$`)
	placeNumber = regexp.MustCompile(`of \$(\d{2,3})\$\?$`)
)

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

// wrongAnswer is a nearby wrong value of a numeric answer.
func wrongAnswer(gold string, r *rollout.Rand) string {
	q, ok := mathenv.ParseRational(mathenv.Normalize(gold))
	if !ok {
		return gold + "1"
	}
	off := int64(r.Range(1, 5))
	if r.IntN(2) == 0 {
		off = -off
	}
	w := new(big.Rat).Add(q, new(big.Rat).SetInt64(off))
	if w.IsInt() {
		return w.Num().String()
	}
	return fmt.Sprintf("\\frac{%s}{%s}", w.Num(), w.Denom())
}

// train fits m to the demonstrations: cross-entropy on the response tokens
// (mean over tokens), AdamW, batches in a seeded order.
func (c *sftCmd) train(out interface{ Write([]byte) (int, error) }, m *model.Model, seqs []policy.Sequence) (err error) {
	defer torch.Recover(&err)
	m.SetRequiresGrad(true)
	opt := torch.NewAdamW([]torch.AdamWGroup{{Params: m.Parameters(), LR: c.lr, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 0.01}}, m.DType() != torch.Float32)
	defer opt.Free()
	r := rollout.NewRand(rollout.DeriveSeed(c.seed, 11))
	order := r.Perm(len(seqs))
	pos := 0
	began := time.Now()
	running := 0.0
	for step := 0; step < c.steps; step++ {
		batch := make([]policy.Sequence, 0, c.batch)
		for len(batch) < c.batch && len(batch) < len(seqs) {
			if pos == len(order) {
				order, pos = r.Perm(len(seqs)), 0
			}
			batch = append(batch, seqs[order[pos]])
			pos++
		}
		loss, err := sftStep(m, opt, batch, c.lr*math.Min(1, float64(step+1)/10))
		if err != nil {
			return err
		}
		running = 0.9*running + 0.1*loss
		if step == 0 {
			running = loss
		}
		if (step+1)%c.logEvery == 0 || step+1 == c.steps {
			fmt.Fprintf(out, "  step %d/%d  loss %.4f  (%.1fs)\n", step+1, c.steps, running, time.Since(began).Seconds())
		}
	}
	m.SetRequiresGrad(false)
	return nil
}

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
