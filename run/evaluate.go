package run

// evaluate.go — evaluation on the test split (periodic during training, and
// the `train eval` subcommand): accuracy, avg@n and pass@k of the team with
// the evaluation sampling, plus validity, turns and tokens.

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"troupe/ckpt"
	"troupe/config"
	"troupe/dist"
	"troupe/rollout"
	"troupe/torch"
)

// evaluate runs eval.n samples of every evaluation task with the eval
// sampling (per-agent training overrides do not apply) and the same models.
func evaluate(t *team, seed uint64, dp *dist.Group) (rollout.EvalMetrics, error) {
	cfg := t.cfg
	if t.test == nil {
		return rollout.EvalMetrics{}, fmt.Errorf("eval: the environment has no test split; set env.math.test or use source: procedural")
	}
	acs := cfg.AgentConfigs()
	for i := range acs {
		acs[i].Sampling = rollout.SamplingOverride{}
	}
	saved := t.agents
	defer func() { t.agents = saved }()
	if err := t.buildAgents(acs, rollout.AgentDefaults{Sampling: cfg.Eval.Sampling, MaxNewTokens: cfg.MaxNewTokens}); err != nil {
		return rollout.EvalMetrics{}, err
	}
	wf, err := rollout.NewWorkflow(cfg.Workflow.Name, cfg.Workflow.Options(), t.agents, t.test)
	if err != nil {
		return rollout.EvalMetrics{}, err
	}
	if e, ok := wf.(rollout.EvalWorkflow); ok { // e.g. tree sampling evaluates one candidate
		wf = e.ForEval()
	}
	n := t.test.Len()
	if cfg.Eval.Tasks > 0 && cfg.Eval.Tasks < n {
		n = cfg.Eval.Tasks
	}
	tasks := make([]rollout.Task, n)
	for i := range tasks {
		tasks[i] = t.test.Task(i)
	}
	// data parallel: each rank plays its slice of the tasks (with the seeds
	// one process would use) and the ranks exchange the episodes' records
	lo, hi := dp.Part(len(tasks))
	var own []rollout.EpisodeRecord
	stopped := false // a signal cut this rank's episodes short (rollout.ErrStopped)
	if hi > lo {
		ro, err := t.sampler.RunPart(wf, tasks[lo:hi], cfg.Eval.N, seed, lo)
		switch {
		case errors.Is(err, rollout.ErrStopped):
			stopped = true
		case err != nil:
			return rollout.EvalMetrics{}, err
		default:
			own = rollout.Records(ro.Episodes)
		}
	}
	if stopped, err := dp.AnyTrue(stopped); err != nil || stopped { // every rank stops the evaluation together
		if err == nil {
			err = rollout.ErrStopped
		}
		return rollout.EvalMetrics{}, err
	}
	all, err := dist.GatherJSON(dp, own, "the evaluation episodes")
	if err != nil {
		return rollout.EvalMetrics{}, err
	}
	return rollout.EvaluateRecords(all, cfg.Eval.Ks...)
}

// evalMetrics flattens eval results into metric keys.
func evalMetrics(m rollout.EvalMetrics) map[string]float64 {
	v := map[string]float64{
		"eval/accuracy": m.Accuracy, "eval/avg_at_n": m.AvgAtK, "eval/mean_reward": m.MeanReward,
		"eval/row_reward": m.RowReward,
		"eval/turns":      m.MeanTurns, "eval/response_tokens": m.MeanResponseTokens, "eval/tasks": float64(m.Tasks),
	}
	for k, p := range m.PassAtK {
		v[fmt.Sprintf("eval/pass_at_%d", k)] = p
	}
	for a, r := range m.ValidRatio {
		v["eval/valid/"+a] = r
	}
	for k, x := range m.Env {
		v["eval/"+k] = x
	}
	return v
}

func formatEval(m rollout.EvalMetrics) string {
	var ks []int
	for k := range m.PassAtK {
		ks = append(ks, k)
	}
	sort.Ints(ks)
	var b strings.Builder
	fmt.Fprintf(&b, "accuracy %.3f  avg@%d %.3f", m.Accuracy, m.SamplesPerTask, m.AvgAtK)
	for _, k := range ks {
		fmt.Fprintf(&b, "  pass@%d %.3f", k, m.PassAtK[k])
	}
	for _, k := range sortedKeys(m.Env) {
		fmt.Fprintf(&b, "  %s %.3f", k, m.Env[k])
	}
	fmt.Fprintf(&b, "  (%d tasks × %d, %.1f agent calls, %.0f tokens per episode)", m.Tasks, m.SamplesPerTask, m.MeanTurns, m.MeanResponseTokens) // MeanTurns counts calls: a joint turn of two agents is 2
	return b.String()
}

// evalStep evaluates during training (after `step` completed steps) and
// returns the metrics for that step's record.
func evalStep(out io.Writer, t *team, step int, dp *dist.Group) (map[string]float64, error) {
	beat := startHeartbeat(out, fmt.Sprintf("evaluation after %d steps", step))
	m, err := evaluate(t, evalSeed(t.cfg, step), dp)
	beat()
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "eval after %d steps: %s\n", step, formatEval(m))
	return evalMetrics(m), nil
}

func evalSeed(cfg *config.Config, step int) uint64 {
	return rollout.DeriveSeed(cfg.Run.Seed, seedEval, uint64(step))
}

// ---- train eval ----

type Eval struct {
	Config     string
	Sets       []string
	Checkpoint string
	// JSON prints one JSON object on out instead of the report
	// (evaljson.go); the lines about what is evaluated are left out.
	JSON bool
}

func (c *Eval) Run(out io.Writer, _ []string) (err error) {
	defer torch.Recover(&err)
	var cp *ckpt.Checkpoint
	if c.Checkpoint != "" {
		var note string
		if cp, note, err = openCheckpointArg(c.Checkpoint); err != nil { // checkpointarg.go
			return fmt.Errorf("eval: %w", err)
		}
		if note != "" && !c.JSON {
			fmt.Fprintf(out, "eval: %s\n", note)
		}
	}
	var cfg *config.Config
	switch {
	case c.Config != "" && cp != nil:
		// the weights and tokenizers come from the checkpoint: the
		// config's model paths need not exist, its team must be the
		// checkpoint's
		if cfg, err = config.LoadSaved(c.Config, c.Sets); err == nil {
			err = sameTeam(cp, cfg, "eval: --checkpoint")
		}
	case c.Config != "":
		cfg, err = config.Load(c.Config, c.Sets)
	case cp != nil:
		cfg, err = config.LoadSaved(cp.Path(configFile), c.Sets)
	default:
		err = fmt.Errorf("eval: pass --config or --checkpoint")
	}
	if err != nil {
		return err
	}
	// The checkpoint's weights are evaluated with the seed the training
	// run's own evaluation after that step used, so the two agree.
	from, step := "", 0
	if cp != nil {
		from, step = cp.Dir, cp.Step
	}
	t, err := buildTeam(cfg, false, from, nil)
	if err != nil {
		return err
	}
	defer t.free()
	if !c.JSON {
		t.printNotes(out)
	}
	for _, tr := range t.trained {
		src := tr.Model.Path
		if cp != nil {
			src = fmt.Sprintf("%s (step %d)", cp.Path(ckpt.ModelStateDir(tr.Name)), cp.Step)
		}
		if !c.JSON {
			fmt.Fprintf(out, "eval: model %s (agents %s) from %s\n", tr.Name, strings.Join(tr.Agents, ", "), src)
		}
	}
	beat := func() {}
	if !c.JSON {
		beat = startHeartbeat(&lockedWriter{w: out}, "evaluation")
	}
	m, err := evaluate(t, evalSeed(cfg, step), nil)
	beat()
	if err != nil {
		return err
	}
	if c.JSON {
		return writeEvalJSON(out, cfg, cp, m)
	}
	fmt.Fprintln(out, formatEval(m))
	for _, a := range sortedKeys(m.ValidRatio) {
		fmt.Fprintf(out, "  %-10s valid %.3f  truncated %.3f  calls/episode %.2f\n", a, m.ValidRatio[a], m.TruncatedRatio[a], m.CallsPerAgent[a])
	}
	return nil
}

func sortedKeys(m map[string]float64) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
