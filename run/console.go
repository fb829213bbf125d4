package run

// console.go — what a run prints beside its step lines: rollout progress,
// the answer to interrupts, the held-out summary at the end; and the writer
// they share with the signal handler.

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"troupe/ckpt"
	"troupe/dist"
	"troupe/internal/cmdline"
	"troupe/internal/metrics"
	"troupe/rollout"
)

// lockedWriter serialises writes from the run and its signal handler.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// forceQuit ends the process on a second interrupt (a variable for tests).
var forceQuit = func() { os.Exit(130) }

// interrupts delivers the first SIGINT or SIGTERM on the returned channel,
// and from then on stopping says true: a rollout or evaluation in progress
// ends within a round (the sampler asks stopping), and the run saves the
// state it has — the step before, when the step's rollout was cut short
// (its weights are that step's); the step itself once its update is done —
// and stops. A second signal quits at once; checkpoints are written
// atomically, so the newest complete one stays usable (an unfinished save
// is cleaned up by the next run). The close of gone (a rank's launcher
// died, dist/launcher.go) stops the run like a first signal, and never quits at
// once.
func interrupts(out io.Writer, gone <-chan struct{}) (stop <-chan os.Signal, stopping func() bool, release func()) {
	sigs := make(chan os.Signal, 2)
	first := make(chan os.Signal, 1)
	done := make(chan struct{})
	var asked atomic.Bool
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		for {
			select {
			case <-done:
				return
			case <-gone:
				gone = nil
				if !asked.Swap(true) {
					fmt.Fprintf(out, "the launcher of this rank is gone: stopping the step's rollout or finishing its update, then saving a checkpoint\n")
					first <- dist.LauncherDeathSignal
				}
			case sig := <-sigs:
				if !asked.Swap(true) {
					fmt.Fprintf(out, "%v: stopping the step's rollout or finishing its update, then saving a checkpoint; interrupt again to quit now\n", sig)
					first <- sig
					continue
				}
				fmt.Fprintf(out, "%v again: quitting now; the newest complete checkpoint is intact\n", sig)
				forceQuit()
			}
		}
	}()
	return first, asked.Load, func() { signal.Stop(sigs); close(done) }
}

// rolloutProgress prints how a long rollout is going: nothing for its first
// 10 seconds, then a line every 10 seconds.
func rolloutProgress(out io.Writer, step, steps int) func(rollout.RolloutProgress) {
	const every = 10 * time.Second
	var last time.Duration
	return func(p rollout.RolloutProgress) {
		if p.Elapsed < every || p.Elapsed-last < every {
			return
		}
		last = p.Elapsed
		fmt.Fprintf(out, "  step %d/%d rollout: %d/%d episodes done, %d rows, %d tokens, %.0f tok/s, %s\n", step, steps,
			p.EpisodesDone, p.Episodes, p.Rows, p.ResponseTokens, float64(p.ResponseTokens)/p.Elapsed.Seconds(), metrics.FormatDuration(p.Elapsed))
	}
}

// evalSummary is what the end of a run says about its held-out
// evaluations ("" without two of them): accuracy and mean reward at the
// first and the last, against the first (step 0 when eval.at_start); when
// an earlier evaluation beat the last and the first, the best of those,
// with the exact command that exports its checkpoint (or why it cannot);
// and, when exportStep > 0, that runDir/export holds that step's models.
func evalSummary(runDir string, exportStep int) string {
	recs, err := metrics.ReadJSONL(filepath.Join(runDir, "metrics.jsonl"))
	if err != nil {
		return ""
	}
	var steps []int
	var acc, reward []float64
	for _, r := range recs {
		if v, ok := r.Values["eval/accuracy"]; ok {
			steps, acc, reward = append(steps, r.Step), append(acc, v), append(reward, r.Values["eval/mean_reward"])
		}
	}
	if len(acc) < 2 {
		return ""
	}
	n := len(acc) - 1
	lines := []string{fmt.Sprintf("held-out accuracy: %.3f after step %d → %.3f after step %d (%+.1f points); mean reward %.3f → %.3f",
		acc[0], steps[0], acc[n], steps[n], 100*(acc[n]-acc[0]), reward[0], reward[n])}
	best := n
	for i := 1; i < n; i++ {
		if acc[i] > acc[best] && acc[i] > acc[0] {
			best = i
		}
	}
	if best != n {
		line := fmt.Sprintf("best held-out accuracy: %.3f after step %d (%+.1f points over step %d)", acc[best], steps[best], 100*(acc[best]-acc[0]), steps[0])
		kept, _ := ckpt.List(filepath.Join(runDir, "checkpoints"))
		i := slices.IndexFunc(kept, func(e ckpt.Entry) bool { return e.Step == steps[best] })
		if i >= 0 {
			out := filepath.Join(runDir, fmt.Sprintf("export-step%d", steps[best]))
			line += "; export it: " + cmdline.Train("export", "--checkpoint", kept[i].Dir, "--out", out)
		} else {
			line += " (its checkpoint was not kept: checkpoint.every and checkpoint.keep say which are)"
		}
		lines = append(lines, line)
	}
	if exportStep > 0 {
		lines = append(lines, fmt.Sprintf("%s holds the models after step %d, the last", filepath.Join(runDir, "export"), exportStep))
	}
	return strings.Join(lines, "\n")
}
