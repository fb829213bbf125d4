package dist

// faults.go — the tests' ways to make a rank fail at a known point of a
// step (the run calls Group.Fault after each step's rollout, before the
// rows are gathered): exit abruptly, pause until a file is removed (to cut
// a link or kill the rank from outside), or stall in a collective that
// never completes, as an NCCL collective with a dead peer does.
//
// What it is not: anything a run does unless these variables are set.

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// RankExitEnv, when "STEP:RANK", makes that rank exit abruptly (status 3)
// in that step. It acts on a group's first start only, not after a
// torchrun restart.
const RankExitEnv = "TROUPE_TEST_RANK_EXIT"

// RankPauseEnv, when "STEP:RANK:FILE", makes that rank write its process id
// to FILE and wait until FILE is removed. It acts once (FILE.done marks it
// done).
const RankPauseEnv = "TROUPE_TEST_RANK_PAUSE"

// RankStallEnv, when "STEP:RANK", makes that rank enter a collective that
// never completes: NCCL's behaviour when a peer on the node has died
// (Gloo's collectives fail instead), so that the CPU tests can show a dead
// peer ending such a wait (watch.go).
const RankStallEnv = "TROUPE_TEST_RANK_STALL"

// Fault is the RankExitEnv, RankPauseEnv and RankStallEnv hook for step.
func (g *Group) Fault(step int) {
	if g == nil {
		return
	}
	here := fmt.Sprintf("%d:%d", step, g.launch.Rank)
	if v := os.Getenv(RankExitEnv); v == here && LauncherRestart() == 0 {
		fmt.Fprintf(os.Stderr, "rank %d: exiting in step %d (%s)\n", g.launch.Rank, step, RankExitEnv)
		os.Exit(3)
	}
	if v := os.Getenv(RankStallEnv); v == here {
		g.collective(func() error { select {} }) // refused only when a rank has left: the next collective says so
		return
	}
	if v := os.Getenv(RankPauseEnv); strings.HasPrefix(v, here+":") {
		file := strings.TrimPrefix(v, here+":")
		if _, err := os.Stat(file + ".done"); err == nil {
			return
		}
		if err := os.WriteFile(file, []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
			fmt.Fprintf(os.Stderr, "rank %d: %s: %v\n", g.launch.Rank, RankPauseEnv, err)
			return
		}
		for {
			if _, err := os.Stat(file); err != nil {
				os.WriteFile(file+".done", nil, 0o644)
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}
