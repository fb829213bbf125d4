// sampler.go — the batched sampler: runs many episodes at once and feeds
// every pending agent call to its model's engine.
//
// One loop, whatever generates:
//
//  1. every live episode submits its pending calls, in episode order;
//  2. each busy engine steps once (models sorted by name) and hands back
//     the calls that finished;
//  3. the episodes whose calls are all back are advanced on worker
//     goroutines — decode and parse the responses, step the environment,
//     score, render the next calls — and submit those calls, in episode
//     order; repeat until no engine has work.
//
// With Engines (model.Engine behind run's adapter) this is continuous
// batching: an episode's next call goes in as soon as its previous ones are
// back, and no round waits for its slowest row. With Generators (a batch
// Generate: model.Generate when engine.enabled is false, the scripted
// generator in tests) one adapter, batchEngine, makes each Generator an
// engine whose step generates everything submitted, in batches of at most
// MaxBatchRows: the loop then runs in rounds.
//
// Determinism: what is submitted when depends only on the completions,
// which depend only on what was submitted and on the seeds — an engine
// request's DeriveSeed(seed, 2, trajectory, index of the call in its
// episode), a Generate call's DeriveSeed(seed, 0, k) for the k-th call of
// the rollout; workers touch one episode each. So a rerun with the same
// seed gives the same episodes, whatever the goroutine timing.
package rollout

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"sync"
	"time"
	"troupe/gen"
)

// Sampler runs episodes and batches their generation requests per model.
type Sampler struct {
	Generators   map[string]Generator // model name → generator; every agent's model must have one
	Engines      map[string]Engine    // model name → continuous engine; when set, used instead of Generators
	MaxBatchRows int                  // global cap on rows per Generate call; 0 = no cap
	Workers      int                  // goroutines for environment work; 0 = GOMAXPROCS
	// Progress, when set, is called on the Run's goroutine as the rollout
	// advances: after every engine step, or every round without engines.
	Progress func(RolloutProgress)
	// Stop, when set, is asked while the episodes are set up and after
	// every round; once it says true the Run ends with ErrStopped, so a
	// signal is honoured within a round, not at the end of the rollout.
	Stop func() bool
}

// ErrStopped is a Run's error when Stop said to stop.
var ErrStopped = errors.New("rollout: stopped before it finished (a signal)")

func (s *Sampler) stopped() bool { return s.Stop != nil && s.Stop() }

// RolloutProgress is how far a Run has come.
type RolloutProgress struct {
	Episodes, EpisodesDone int
	Rows, ResponseTokens   int // generated so far
	Elapsed                time.Duration
}

// report calls s.Progress, if set; no advance may be running.
func (s *Sampler) report(pending [][]*Call, st *RolloutStats, start time.Time) {
	if s.Progress == nil {
		return
	}
	p := RolloutProgress{Episodes: len(pending), Rows: st.Rows, ResponseTokens: st.ResponseTokens, Elapsed: time.Since(start)}
	for _, cs := range pending {
		if len(cs) == 0 {
			p.EpisodesDone++
		}
	}
	s.Progress(p)
}

// Rollout is the output of one Run.
type Rollout struct {
	Episodes []*Episode // prompt-major: Episodes[p*n+j] is trajectory j of task p
	Samples  []Sample   // one row per call, episode by episode
	Stats    RolloutStats
}

// RolloutStats describes how a Run went (for logs; tests never assert on times).
type RolloutStats struct {
	Rounds         int           // sampler rounds
	GenerateCalls  int           // Generate calls made
	Rows           int           // generated rows (= len(Samples))
	MaxRowsPerCall int           // largest batch sent
	PromptTokens   int           // sum of prompt lengths over rows
	ResponseTokens int           // sum of generated tokens over rows
	GenerateTime   time.Duration // time inside Generate
	WaitTime       time.Duration // time the caller waited for workers after the last Generate of a round
	Wall           time.Duration // total time of Run
}

// pendingCall is a call waiting for generation, with its episode.
type pendingCall struct {
	ep   int
	call *Call
}

// Run plays n trajectories of workflow wf on each task and returns the
// finished episodes and their rows. seed determines every random choice.
func (s *Sampler) Run(wf Workflow, tasks []Task, n int, seed uint64) (*Rollout, error) {
	return s.RunPart(wf, tasks, n, seed, 0)
}

// RunPart is Run for the slice of a larger batch that starts at task first:
// prompt and trajectory ids, and so every seed, are those the whole batch
// would give these tasks. Data-parallel ranks each run their part, and
// together they produce the rows one process would.
func (s *Sampler) RunPart(wf Workflow, tasks []Task, n int, seed uint64, first int) (*Rollout, error) {
	start := time.Now()
	if len(tasks) == 0 {
		return nil, fmt.Errorf("rollout: no tasks to run; draw a batch of at least one task")
	}
	if n < 1 {
		return nil, fmt.Errorf("rollout: n (trajectories per task) must be >= 1, got %d", n)
	}
	if s.MaxBatchRows < 0 {
		return nil, fmt.Errorf("rollout: max_batch_rows must be >= 0 (0 = no cap), got %d", s.MaxBatchRows)
	}
	for _, a := range wf.Agents() {
		if s.Engines != nil {
			if s.Engines[a.Model] == nil {
				return nil, fmt.Errorf("rollout: agent %q runs on model %q, which has no engine; the models are %v", a.Name, a.Model, s.modelNames())
			}
			continue
		}
		if s.Generators[a.Model] == nil {
			return nil, fmt.Errorf("rollout: agent %q runs on model %q, which has no generator; the models are %v", a.Name, a.Model, s.modelNames())
		}
	}
	workers := s.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}

	eps := make([]*Episode, len(tasks)*n)
	for p, t := range tasks {
		for j := 0; j < n; j++ {
			traj := (first+p)*n + j
			eps[p*n+j] = &Episode{Prompt: first + p, Traj: traj, Sample: j, Task: t, Seed: DeriveSeed(seed, 1, uint64(traj))}
		}
		if p%64 == 0 && s.stopped() {
			return nil, ErrStopped
		}
	}
	pending := make([][]*Call, len(eps))
	errs := make([]error, len(eps))
	pool := newPool(workers)
	for i := range eps {
		if i%1024 == 0 && s.stopped() {
			pool.Wait()
			return nil, ErrStopped
		}
		pool.Go(func() { pending[i], errs[i] = begin(wf, eps[i]) })
	}
	pool.Wait()
	if err := firstError(errs); err != nil {
		return nil, err
	}

	engines := s.Engines
	if engines == nil {
		engines = batchEngines(s.Generators, s.MaxBatchRows, seed, s.stopped)
	}
	return s.loop(wf, eps, pending, engines, pool, seed, start)
}

// loop drives the episodes through the engines (the file comment's steps
// 1–3) and returns their rows.
func (s *Sampler) loop(wf Workflow, eps []*Episode, pending [][]*Call, engines map[string]Engine, pool *pool, seed uint64, start time.Time) (*Rollout, error) {
	var st RolloutStats
	models := make([]string, 0, len(engines))
	for name := range engines {
		models = append(models, name)
	}
	sort.Strings(models)
	inflight := map[string]map[int]pendingCall{}
	for _, m := range models {
		inflight[m] = map[int]pendingCall{}
	}
	outstanding := make([]int, len(eps))
	errs := make([]error, len(eps))
	submit := func(ep int, calls []*Call) error {
		for _, c := range calls {
			a := c.Agent
			idx := slices.Index(eps[ep].Calls, c)
			id, err := engines[a.Model].Submit(requestOf(c), DeriveSeed(seed, 2, uint64(eps[ep].Traj), uint64(idx)))
			if err != nil {
				return fmt.Errorf("rollout: model %q: agent %q: task %q: %w", a.Model, a.Name, eps[ep].Task.ID, err)
			}
			inflight[a.Model][id] = pendingCall{ep, c}
			outstanding[ep]++
		}
		return nil
	}
	for i := range eps {
		if err := submit(i, pending[i]); err != nil {
			return nil, err
		}
	}
	for {
		var ready []int
		busy := false
		for _, m := range models {
			e := engines[m]
			if e.Pending() == 0 {
				continue
			}
			busy = true
			calls, rows := 1, len(inflight[m])
			t0 := time.Now()
			done, err := e.Step()
			st.GenerateTime += time.Since(t0)
			if err == ErrStopped {
				return nil, err
			}
			if err != nil {
				return nil, fmt.Errorf("rollout: model %q: %w", m, err)
			}
			if b, ok := e.(*batchEngine); ok {
				calls, rows = b.lastCalls, b.lastMaxRows
			}
			st.GenerateCalls += calls
			st.MaxRowsPerCall = max(st.MaxRowsPerCall, rows)
			for _, c := range done {
				pc, ok := inflight[m][c.ID]
				if !ok {
					return nil, fmt.Errorf("rollout: model %q: engine returned request %d, which is not pending", m, c.ID)
				}
				delete(inflight[m], c.ID)
				if err := pc.call.take(c.Result); err != nil {
					return nil, fmt.Errorf("rollout: model %q: agent %q: %w", m, pc.call.Agent.Name, err)
				}
				st.count(pc.call)
				if outstanding[pc.ep]--; outstanding[pc.ep] == 0 {
					ready = append(ready, pc.ep)
				}
			}
		}
		if !busy {
			break
		}
		s.report(pending, &st, start) // no advance runs between Wait and the next Go
		if s.stopped() {
			return nil, ErrStopped
		}
		st.Rounds++
		slices.Sort(ready)
		for _, i := range ready {
			done := slices.Clone(pending[i])
			pool.Go(func() { pending[i], errs[i] = advance(wf, eps[i], done) })
		}
		if err := waitAdvances(pool, &st, errs); err != nil {
			return nil, err
		}
		for _, i := range ready {
			if err := submit(i, pending[i]); err != nil {
				return nil, err
			}
		}
	}
	for m, left := range inflight {
		if len(left) > 0 {
			return nil, fmt.Errorf("rollout: model %q: the engine went idle with %d requests never returned", m, len(left))
		}
	}
	samples := Samples(eps)
	st.Wall = time.Since(start)
	return &Rollout{Episodes: eps, Samples: samples, Stats: st}, nil
}

// requestOf is the generation request of a rendered call.
func requestOf(c *Call) gen.Request {
	a := c.Agent
	return gen.Request{Prompt: c.PromptTokens, MaxNewTokens: a.MaxNewTokens, Stop: a.Stop, Sampling: a.Sampling}
}

// take checks a generated result against the call's request and stores it.
func (c *Call) take(r gen.Result) error {
	if err := checkResult(r, requestOf(c)); err != nil {
		return err
	}
	c.ResponseTokens, c.LogProbs = r.Tokens, r.LogProbs
	c.Truncated = r.Finish == gen.FinishLength
	return nil
}

// count adds a generated call to the statistics.
func (st *RolloutStats) count(c *Call) {
	st.Rows++
	st.PromptTokens += len(c.PromptTokens)
	st.ResponseTokens += len(c.ResponseTokens)
}

// checkResult enforces the Generator contract on one row.
func checkResult(r gen.Result, req gen.Request) error {
	switch {
	case len(r.Tokens) > req.MaxNewTokens:
		return fmt.Errorf("%d tokens generated, the limit was %d", len(r.Tokens), req.MaxNewTokens)
	case len(r.LogProbs) != len(r.Tokens):
		return fmt.Errorf("%d log-probs for %d tokens; need one per token", len(r.LogProbs), len(r.Tokens))
	case r.Finish == gen.FinishStop && (len(r.Tokens) == 0 || !slices.Contains(req.Stop, r.Tokens[len(r.Tokens)-1])):
		return fmt.Errorf("finish reason is stop but the last token is not one of the stop ids %v", req.Stop)
	case r.Finish != gen.FinishStop && r.Finish != gen.FinishLength:
		return fmt.Errorf("unknown finish reason %v", r.Finish)
	}
	return nil
}

// begin starts an episode and renders its first calls.
// FirstCalls renders the calls a workflow makes first on task t (its
// first turn), as a Run would, without generating anything: what a check
// of prompt lengths reads before a run.
func FirstCalls(wf Workflow, t Task) ([]*Call, error) { return begin(wf, &Episode{Task: t}) }

func begin(wf Workflow, ep *Episode) (calls []*Call, err error) {
	defer recoverInto(wf, ep, &err)
	calls, err = wf.Begin(ep)
	if err != nil {
		return nil, fmt.Errorf("rollout: workflow %q: task %q: %w", wf.Name(), ep.Task.ID, err)
	}
	return prepare(wf, ep, calls)
}

// advance decodes and parses completed calls, steps the workflow and renders
// the next calls. It runs on a worker goroutine.
func advance(wf Workflow, ep *Episode, done []*Call) (next []*Call, err error) {
	defer recoverInto(wf, ep, &err)
	for _, c := range done {
		finish := gen.FinishStop
		if c.Truncated {
			finish = gen.FinishLength
		}
		c.Response = c.Agent.Decode(c.ResponseTokens, finish)
		c.Parsed = c.Agent.Parser.Parse(c.Response)
	}
	next, err = wf.Advance(ep, done)
	if err != nil {
		return nil, fmt.Errorf("rollout: workflow %q: task %q: %w", wf.Name(), ep.Task.ID, err)
	}
	return prepare(wf, ep, next)
}

// recoverInto turns a panic in workflow, parser or environment code on a
// worker goroutine into an error naming the task, instead of a crash.
func recoverInto(wf Workflow, ep *Episode, err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("rollout: workflow %q: task %q: panic: %v", wf.Name(), ep.Task.ID, r)
	}
}

func prepare(wf Workflow, ep *Episode, calls []*Call) ([]*Call, error) {
	if len(calls) == 0 {
		if !ep.Done {
			return nil, fmt.Errorf("rollout: workflow %q: task %q: returned no calls without finishing the episode", wf.Name(), ep.Task.ID)
		}
		return nil, nil
	}
	if ep.Done {
		return nil, fmt.Errorf("rollout: workflow %q: task %q: returned %d calls after finishing the episode", wf.Name(), ep.Task.ID, len(calls))
	}
	for _, c := range calls {
		text, ids, err := c.Agent.Render(c.Data)
		if err != nil {
			return nil, fmt.Errorf("rollout: task %q: %w", ep.Task.ID, err)
		}
		c.PromptText, c.PromptTokens = text, ids
		ep.Calls = append(ep.Calls, c)
	}
	return calls, nil
}

func (s *Sampler) modelNames() []string {
	names := make([]string, 0, len(s.Generators))
	for n := range s.Generators {
		names = append(names, n)
	}
	for n := range s.Engines {
		if s.Generators[n] == nil {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// waitAdvances waits for the episodes advancing on the pool, counts the wait,
// and returns the first error among them.
func waitAdvances(p *pool, st *RolloutStats, errs []error) error {
	t0 := time.Now()
	p.Wait()
	st.WaitTime += time.Since(t0)
	return firstError(errs)
}

func firstError(errs []error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// pool runs functions on at most size goroutines at a time.
type pool struct {
	sem chan struct{}
	wg  sync.WaitGroup
}

func newPool(size int) *pool { return &pool{sem: make(chan struct{}, size)} }

func (p *pool) Go(f func()) {
	p.wg.Add(1)
	go func() {
		p.sem <- struct{}{}
		defer func() { <-p.sem; p.wg.Done() }()
		f()
	}()
}

func (p *pool) Wait() { p.wg.Wait() }
