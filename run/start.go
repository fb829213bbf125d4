package run

// start.go — which checkpoint a run starts from: none, the one --resume
// names, or — when torchrun starts a group again for a job that wrote
// checkpoints — the job's newest good one. Every rank looks at the run
// directory first (its startView); once the group has formed, rank 0
// chooses from every rank's view and every rank follows, re-opening the
// directory until it sees the chosen checkpoint. On NFS a node's directory
// cache can hide, for up to a minute, a checkpoint rank 0's node renamed
// into place seconds earlier; ranks that chose alone would refuse each
// other and spend the job's restarts.
//
// The choice (chooseStart):
//
//   - an explicit --resume wins on a job's first start (every rank's
//     TORCHELASTIC_RESTART_COUNT is 0): a new torchrun job with the id of
//     one that went further starts where it is told (and, older than the
//     newest checkpoint, is refused without --force, as always);
//   - on a restart, or without --resume, the job's newest good checkpoint
//     — the newest any rank sees — when it is newer than --resume's;
//   - a checkpoint of the job that does not verify (a file missing, a hash
//     wrong) is passed over for the one before it, saying so; the run goes
//     on from there, and its next save of that step replaces the bad one.
//
// What it is not: the config's choice (resume.go's loadConfig) or the
// guards on the run directory (rundir.go).

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"troupe/ckpt"
	"troupe/dist"
)

// followWithin bounds how long a rank re-opens the run directory for the
// checkpoint rank 0 chose: past NFS's default directory cache (60 s).
var followWithin = 2 * time.Minute

// jobView is what a rank sees of its torchrun job's checkpoints in a run
// directory.
type jobView struct {
	Dir  string   `json:"dir,omitempty"` // the job's newest good checkpoint ("" for none)
	Step int      `json:"step"`
	Bad  []string `json:"bad,omitempty"` // newer checkpoints of the job that do not verify, with why
}

// startView is one rank's view of where the run starts.
type startView struct {
	Explicit     string  `json:"explicit,omitempty"` // the checkpoint --resume names
	ExplicitStep int     `json:"explicit_step"`
	Job          jobView `json:"job"`
}

// startChoice is where the group starts, as rank 0 chose it.
type startChoice struct {
	Dir        string   `json:"dir,omitempty"` // "" for a fresh start
	Step       int      `json:"step"`
	Relaunched bool     `json:"relaunched"`     // torchrun started the group again: its job's newest checkpoint
	Bad        []string `json:"bad,omitempty"`  // the job's newer checkpoints passed over
	Note       string   `json:"note,omitempty"` // what the run should say about the choice
	Err        string   `json:"err,omitempty"`  // why the group cannot start
}

// jobCheckpoints is this torchrun job's newest good checkpoint under
// runDir, with the job's newer ones that do not verify. Outside torchrun,
// or when the newest checkpoint is another job's, it is empty.
func jobCheckpoints(runDir string) jobView {
	id := os.Getenv(dist.LauncherRunEnv)
	var v jobView
	if id == "" {
		return v
	}
	entries, err := ckpt.List(filepath.Join(runDir, "checkpoints"))
	if err != nil {
		return v
	}
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		if hidden(e.Dir) {
			continue
		}
		var st trainState
		if err := ckpt.LoadJSON(filepath.Join(e.Dir, StateFile), &st); err == nil && st.LauncherRun != id {
			return v // another job's: this is not a restart of the job that wrote it
		}
		cp, err := ckpt.Open(e.Dir)
		if err != nil {
			v.Bad = append(v.Bad, fmt.Sprintf("%s (%v)", filepath.Base(e.Dir), err))
			continue
		}
		v.Dir, v.Step = cp.Dir, cp.Step
		return v
	}
	return v
}

// chooseStart is rank 0's choice from every rank's view (rank 0's first);
// restart is the group's torchrun restart count.
func chooseStart(views []startView, restart int) startChoice {
	best := -1 // the view with the job's newest good checkpoint
	var bad []string
	for i, v := range views {
		if v.Job.Dir != "" && (best < 0 || v.Job.Step > views[best].Job.Step) {
			best = i
		}
		bad = append(bad, v.Job.Bad...)
	}
	ex, exStep := views[0].Explicit, views[0].ExplicitStep
	job := os.Getenv(dist.LauncherRunEnv)
	switch {
	case ex != "" && restart == 0:
		c := startChoice{Dir: ex, Step: exStep}
		if best >= 0 && views[best].Job.Step > exStep {
			c.Note = fmt.Sprintf("resume: starting from step %d as --resume says, although this torchrun job (%s=%s) has a newer checkpoint, step %d (a restart of the job would continue from its newest)",
				exStep, dist.LauncherRunEnv, job, views[best].Job.Step)
		}
		return c
	case best >= 0 && (ex == "" || views[best].Job.Step > exStep):
		return startChoice{Dir: views[best].Job.Dir, Step: views[best].Job.Step, Relaunched: true, Bad: views[best].Job.Bad}
	case ex != "":
		return startChoice{Dir: ex, Step: exStep}
	case len(bad) > 0:
		return startChoice{Err: fmt.Sprintf("torchrun started the group again (job %s), but no checkpoint of the job verifies: %s; move the bad ones out of the checkpoints directory, or start over elsewhere", job, strings.Join(bad, "; "))}
	}
	return startChoice{}
}

// settleStart agrees on the checkpoint the group starts from: rank 0
// chooses from every rank's view, and every rank opens the choice,
// re-reading the directory until it sees it (within followWithin). An
// error on any rank is every rank's.
func settleStart(dp *dist.Group, me startView) (*checkpointRef, startChoice, error) {
	var choice startChoice
	var err error
	if dp == nil {
		choice = chooseStart([]startView{me}, dist.LauncherRestart())
	} else {
		choice, err = leadChoice(dp, me)
		if err != nil {
			return nil, choice, err
		}
	}
	var cp *checkpointRef
	var mine error
	if choice.Err != "" {
		mine = fmt.Errorf("%s", choice.Err)
	} else if choice.Dir != "" {
		cp, mine = followStart(choice)
	}
	if dp == nil {
		return cp, choice, mine
	}
	if err := dp.AnyError(mine); err != nil {
		return nil, choice, err
	}
	return cp, choice, nil
}

// leadChoice gathers every rank's view and returns rank 0's choice on
// every rank.
func leadChoice(dp *dist.Group, me startView) (startChoice, error) {
	var choice startChoice
	views, err := dist.GatherJSON(dp, []startView{me}, "where each rank would start")
	if err != nil {
		return choice, err
	}
	if dp.Lead() {
		choice = chooseStart(views, dp.Restart())
	}
	b, _ := json.Marshal(choice)
	s, err := dp.LeadString(string(b))
	if err != nil {
		return choice, fmt.Errorf("data parallel: learning rank 0's choice of checkpoint: %w", err)
	}
	if err := json.Unmarshal([]byte(s), &choice); err != nil {
		return choice, fmt.Errorf("data parallel: rank 0's choice of checkpoint is unreadable: %w", err)
	}
	return choice, nil
}

// followStart opens the chosen checkpoint, re-reading the directory until
// this rank sees it whole.
func followStart(c startChoice) (*checkpointRef, error) {
	deadline := time.Now().Add(followWithin)
	for {
		var cp *checkpointRef
		err := fmt.Errorf("%s is not there yet", c.Dir)
		if !hidden(c.Dir) {
			cp, err = ckpt.Open(c.Dir)
		}
		if err == nil && cp.Step != c.Step {
			err = fmt.Errorf("%s is at step %d here, step %d for rank 0", c.Dir, cp.Step, c.Step)
		}
		if err == nil {
			return cp, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("resume: rank 0 chose %s (step %d) to start from, but this rank could not open it within %v: %v; every node must see the run directory (a shared file system) or hold the same checkpoint", c.Dir, c.Step, followWithin, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// HideNewestEnv, when SECONDS, hides the newest checkpoint of every run
// directory from the ranks other than 0 for that long after they start:
// the tests' stand-in for a node whose NFS directory cache does not show
// it yet.
const HideNewestEnv = "TROUPE_TEST_HIDE_NEWEST"

var started = time.Now()

// hidden is the HideNewestEnv hook: whether dir, a checkpoint, is hidden
// from this rank now.
func hidden(dir string) bool {
	v := os.Getenv(HideNewestEnv)
	if v == "" || os.Getenv("RANK") == "" || os.Getenv("RANK") == "0" {
		return false
	}
	secs, err := strconv.Atoi(v)
	if err != nil || time.Since(started) > time.Duration(secs)*time.Second {
		return false
	}
	entries, err := ckpt.List(filepath.Dir(dir))
	return err == nil && len(entries) > 0 && entries[len(entries)-1].Dir == dir
}
