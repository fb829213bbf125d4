package run

// notes.go — what a run tells its console beyond the step line: the
// samples of a step (--print-samples), the warning when a step gives the
// update nothing to learn from, and the resolved config written into the
// run directory before the first step.
//
// What it is not: the run's files of record (metrics.jsonl, samples.jsonl,
// checkpoints: state.go); the config written here is the start's, each
// checkpoint keeps its own copy.

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"troupe/config"
	"troupe/rollout"
)

// RunConfigFile is the resolved config a run writes into its directory at
// its start (and at each resume).
const RunConfigFile = "config.yaml"

// writeRunConfig writes the resolved config into the run directory
// (atomically: a reader never sees half a file).
func writeRunConfig(cfg *config.Config) (string, error) {
	raw, err := cfg.Marshal()
	if err != nil {
		return "", err
	}
	path := filepath.Join(cfg.Run.OutputDir, RunConfigFile)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, raw, 0o644); err != nil {
		return "", fmt.Errorf("writing the resolved config into the run directory: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", fmt.Errorf("writing the resolved config into the run directory: %w", err)
	}
	return path, nil
}

// printSamples prints the first n rows of a step: the prompt's tail, the
// response, the reward and the advantage.
func printSamples(out io.Writer, step, n int, rows []rollout.Sample, adv []float64) {
	for i := 0; i < n && i < len(rows); i++ {
		s := rows[i]
		fmt.Fprintf(out, "  sample %d/%d of step %d: agent %s, task %s, turn %d: reward %.3f, advantage %+.3f%s\n",
			i+1, len(rows), step, s.Agent, s.TaskID, s.Turn, s.Reward, adv[i], validity(s))
		fmt.Fprintf(out, "    prompt …%s\n", oneLine(lastRunes(s.PromptText, 160)))
		fmt.Fprintf(out, "    response %s\n", oneLine(firstRunes(s.ResponseText, 400)))
	}
}

func validity(s rollout.Sample) string {
	var notes []string
	if !s.Valid {
		notes = append(notes, "invalid format")
	}
	if s.Truncated {
		notes = append(notes, "truncated")
	}
	if len(notes) == 0 {
		return ""
	}
	return " (" + strings.Join(notes, ", ") + ")"
}

// oneLine shows line breaks as ⏎ so a sample stays one console line.
func oneLine(s string) string { return strings.ReplaceAll(strings.TrimSpace(s), "\n", "⏎") }

func lastRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[len(r)-n:])
}

func firstRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// zeroSignal warns, once per run, when every advantage of a step is zero:
// the update then has nothing to learn from.
type zeroSignal struct{ warned bool }

func (z *zeroSignal) check(out io.Writer, step int, rows []rollout.Sample, adv []float64) {
	if z.warned || len(adv) == 0 {
		return
	}
	for _, a := range adv {
		if a != 0 {
			return
		}
	}
	z.warned = true
	same := "the rewards differed across groups but not within any group"
	if len(rows) > 0 {
		same = fmt.Sprintf("every sample was scored alike (reward %.3g)", rows[0].Reward)
		for _, s := range rows {
			if s.Reward != rows[0].Reward {
				same = "the rewards differed across groups but not within any group"
				break
			}
		}
	}
	fmt.Fprintf(out, "warning: every advantage of step %d is zero (%d rows): %s, so this step gives the update no learning signal. "+
		"Typical causes: a random or untrained model (warm it up with `train sft`), a task too hard or too easy for it, or batch.n too small to see different outcomes. "+
		"This warning is printed once.\n", step, len(adv), same)
}
