package run

// fit.go — what a run's data must fit before its first step, checked in
// preflight (so `train check` refuses it with the run's line): an
// evaluation that has test tasks to play, and the first prompt each agent
// gets on the longest tasks of a split, with the agent's max_new_tokens
// after it, within the model's positions (max_position_embeddings) and
// within engine.max_seq_len when it is set. Before, the first refused at
// the first evaluation, steps into the run, and the others in the first
// rollout, after the weights were loaded.
//
// What it is not: a bound on later turns, whose prompts carry what the
// agents wrote (the engine refuses those when they come), or a check of
// every task: the longest few of each split by their text stand for it.

import (
	"fmt"
	"reflect"
	"sort"

	"troupe/rollout"
)

// longestTasks is how many of a split's tasks (the longest by their
// text) the prompt check renders.
const longestTasks = 4

// checkEvalSplit refuses an evaluation (eval.every, eval.at_start) of an
// environment whose test split holds no task.
func (t *team) checkEvalSplit() error {
	ev := t.cfg.Eval
	if ev.Every <= 0 && !ev.AtStart {
		return nil
	}
	if n := splitLen(t.test); n == 0 {
		key := "eval.every"
		if ev.Every <= 0 {
			key = "eval.at_start"
		}
		return fmt.Errorf("%s: the run evaluates on the test split, but environment %q has no test tasks; give it some (env.%s's test split) or turn evaluation off (--set eval.every=0 --set eval.at_start=false)", key, t.cfg.Env.Name, t.cfg.Env.Name)
	}
	return nil
}

// splitLen is a split's task count, 0 for none (a nil environment, typed
// or not).
func splitLen(e rollout.Environment) int {
	if e == nil {
		return 0
	}
	if v := reflect.ValueOf(e); v.Kind() == reflect.Pointer && v.IsNil() {
		return 0
	}
	return e.Len()
}

// checkPromptFit renders the first calls of the workflow on the longest
// tasks of the train split (and of the test split when the run
// evaluates) and refuses a prompt that cannot be answered: its tokens and
// the agent's max_new_tokens past the model's positions, or past
// engine.max_seq_len.
func (t *team) checkPromptFit() error {
	splits := []struct {
		name string
		env  rollout.Environment
	}{{"train", t.train}}
	if t.cfg.Eval.Every > 0 || t.cfg.Eval.AtStart {
		splits = append(splits, struct {
			name string
			env  rollout.Environment
		}{"test", t.test})
	}
	for _, s := range splits {
		n := splitLen(s.env)
		if n == 0 {
			continue
		}
		wf, err := rollout.NewWorkflow(t.cfg.Workflow.Name, t.cfg.Workflow.Options(), t.agents, s.env)
		if err != nil {
			return err
		}
		for _, i := range longestOf(s.env, n) {
			task := s.env.Task(i)
			calls, err := rollout.FirstCalls(wf, task)
			if err != nil {
				return err
			}
			for _, c := range calls {
				if err := t.fits(c, s.name, task.ID); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// fits checks one rendered call against its model and the engine.
func (t *team) fits(c *rollout.Call, split, task string) error {
	prompt, maxNew := len(c.PromptTokens), c.Agent.MaxNewTokens
	key := "max_new_tokens"
	for i, a := range t.cfg.Agents {
		if a.Name == c.Agent.Name && a.MaxNewTokens > 0 {
			key = fmt.Sprintf("agents[%d].max_new_tokens", i)
		}
	}
	if mc, ok := t.modelConfigs[c.Agent.Model]; ok && mc.MaxPositions > 0 && prompt+maxNew > mc.MaxPositions {
		return fmt.Errorf("%s: %d tokens after agent %s's first prompt on %s task %s (%d tokens) need %d positions, but model %q has %d (max_position_embeddings); lower %s to at most %d, or use shorter tasks",
			key, maxNew, c.Agent.Name, split, task, prompt, prompt+maxNew, c.Agent.Model, mc.MaxPositions, key, max(mc.MaxPositions-prompt, 0))
	}
	if e := t.cfg.Engine; e.Enabled && e.MaxSeqLen > 0 && prompt+maxNew > e.MaxSeqLen {
		return fmt.Errorf("engine.max_seq_len: %d tokens, shorter than agent %s's first prompt on %s task %s (%d tokens) and its %s (%d): raise it to at least %d, or 0 (sized by the engine)",
			e.MaxSeqLen, c.Agent.Name, split, task, prompt, key, maxNew, prompt+maxNew)
	}
	return nil
}

// longestOf are the indices of the longestTasks tasks of env (of n) with
// the longest question text, the first of equals first.
func longestOf(env rollout.Environment, n int) []int {
	idx := make([]int, n)
	size := make([]int, n)
	for i := range idx {
		idx[i] = i
		tk := env.Task(i)
		size[i] = len(tk.Question)
		for _, v := range tk.Meta {
			size[i] += len(v)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return size[idx[a]] > size[idx[b]] })
	return idx[:min(n, longestTasks)]
}
