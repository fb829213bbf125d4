package run

// board.go — the run's TensorBoard events (run.tensorboard): every step's
// metrics as scalars under the same keys as metrics.jsonl, evaluations at
// their step, and the step's first episodes as Markdown text. The file
// format is internal/metrics' (tensorboard.go); resuming truncates it to the
// checkpoint's step as it does metrics.jsonl.

import (
	"fmt"
	"strings"
	"time"

	"troupe/config"
	"troupe/internal/metrics"
	"troupe/rollout"
)

// boardEpisodes is how many episodes of each step are written as text.
const boardEpisodes = 2

type board struct{ events *metrics.Events }

// openBoard opens the event file for a run whose next logged step is next;
// a run with run.tensorboard off gets a board that writes nothing.
func openBoard(cfg *config.Config, next int) (*board, metrics.ResumeReport, error) {
	if !cfg.Run.TensorBoard {
		return &board{}, metrics.ResumeReport{}, nil
	}
	e, report, err := metrics.OpenEvents(cfg.Run.OutputDir, next)
	if err != nil {
		return nil, report, err
	}
	return &board{events: e}, report, nil
}

// write logs one step's scalars and, when ro is given, its first episodes.
func (b *board) write(step int, t time.Time, values map[string]float64, ro *rollout.Rollout, adv []float64) error {
	if b.events == nil {
		return nil
	}
	if err := b.events.Scalars(step, t, values); err != nil {
		return err
	}
	if ro == nil || len(ro.Samples) == 0 {
		return nil
	}
	return b.events.Text(step, t, "episodes", episodesMarkdown(ro, adv, boardEpisodes))
}

func (b *board) Close() error { return b.events.Close() }

// episodesMarkdown renders the first n trajectories of a rollout: the task,
// then every agent call with its reward, advantage and response.
func episodesMarkdown(ro *rollout.Rollout, adv []float64, n int) string {
	var sb strings.Builder
	shown := map[int]bool{}
	for i, s := range ro.Samples {
		if !shown[s.Traj] {
			if len(shown) == n {
				break
			}
			shown[s.Traj] = true
			fmt.Fprintf(&sb, "### trajectory %d, task %s\n\n", s.Traj, s.TaskID)
		}
		a := 0.0
		if i < len(adv) {
			a = adv[i]
		}
		fmt.Fprintf(&sb, "**%s** (turn %d): reward %.3g, advantage %.3g, valid %v, truncated %v\n\n", s.Agent, s.Turn, s.Reward, a, s.Valid, s.Truncated)
		if s.Problem != "" {
			fmt.Fprintf(&sb, "problem: %s\n\n", s.Problem)
		}
		// a fenced block keeps the model's text literal; fences inside it are broken up
		fmt.Fprintf(&sb, "```\n%s\n```\n\n", strings.ReplaceAll(s.ResponseText, "```", "`\u200b``"))
	}
	return sb.String()
}
