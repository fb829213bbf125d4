package run

// rendezvous.go — where a data-parallel rank learns its place and how it
// meets the others: the environment its launcher sets. Three launchers set
// it, with the same core variables (WORLD_SIZE, RANK, LOCAL_RANK,
// MASTER_ADDR, MASTER_PORT):
//
//   - `train --nproc N` (cmd/train/launch.go), on one node;
//   - torchrun (torch.distributed.run), alone or under Slurm, which adds
//     LOCAL_WORLD_SIZE, GROUP_RANK (the node's index), TORCHELASTIC_RUN_ID,
//     TORCHELASTIC_RESTART_COUNT, TORCHELASTIC_ERROR_FILE and, with its c10d
//     rendezvous, TORCHELASTIC_USE_AGENT_STORE=True: MASTER_ADDR:MASTER_PORT
//     is then the launcher's own TCPStore, already listening on rank 0's node;
//   - a person or a script (srun), one process per device.
//
// The store. Rank 0 hosts a TCPStore of troupe's own at MASTER_ADDR, and
// every rank joins it; c10d's backends meet through it. Under torchrun's
// agent store troupe does not join the launcher's store but keeps its own on
// the next port (MASTER_PORT+1, or TROUPE_STORE_PORT; the same on every
// node): the launcher's store speaks the TCPStore protocol of the launcher's
// torch, and a client of another torch is not understood — torch 2.x's
// server resets a client of Debian's libtorch 1.13, troupe's CPU build, which
// does not send the handshake 2.x expects. Joining it would tie troupe's
// build to the launcher's Python; a store of its own works under any
// torchrun, and carries nothing but the rendezvous of troupe's group. Without
// the agent store (other rendezvous backends, `--nproc`, by hand) MASTER_PORT
// is free for rank 0 to host on, as torch's own env:// rendezvous does.
//
// Restarts: `torchrun --max-restarts K` starts the whole group again after a
// rank fails, under the same TORCHELASTIC_RUN_ID; the run then resumes from
// the newest checkpoint its job wrote (resume.go; checkpoints record the id).
//
// What it is not: the group and its collectives (dist.go), what the ranks
// must agree on (distconfig.go), or what a rank says when it loses another
// (peers.go).

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"troupe/torch"
)

// StorePortEnv sets the port of troupe's own store under torchrun's agent
// store (default MASTER_PORT+1).
const StorePortEnv = "TROUPE_STORE_PORT"

// TimeoutEnv bounds the rendezvous and every collective (a Go duration).
const TimeoutEnv = "TROUPE_DIST_TIMEOUT"

// launch is a rank's place in the group and the group's meeting point, as
// its launcher described them.
type launch struct {
	rank, world       int
	local, localWorld int // the rank on its node, and the node's number of ranks
	node              int // GROUP_RANK: the node's index under torchrun; -1 when not told
	masterAddr        string
	storePort         int
	storeWhy          string // how storePort was chosen, for the rendezvous error
	timeout           time.Duration
	glooIfaces        string // GLOO_SOCKET_IFNAME
}

// readLaunch reads the launcher's variables; nil when WORLD_SIZE is unset
// (or 1 without MASTER_PORT): one process. A group of one (WORLD_SIZE=1 with
// MASTER_PORT) runs every collective: the way to check the NCCL path on a
// machine with one GPU.
func readLaunch() (*launch, error) {
	ws := os.Getenv("WORLD_SIZE")
	if ws == "" || (ws == "1" && os.Getenv("MASTER_PORT") == "") {
		return nil, nil
	}
	num := func(key, def string) (int, error) {
		v := os.Getenv(key)
		if v == "" {
			v = def
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("data parallel: %s=%q is not a non-negative integer", key, v)
		}
		return n, nil
	}
	l := &launch{node: -1, glooIfaces: os.Getenv("GLOO_SOCKET_IFNAME")}
	var err error
	if l.world, err = num("WORLD_SIZE", ""); err != nil {
		return nil, err
	}
	if l.world == 0 {
		return nil, fmt.Errorf("data parallel: WORLD_SIZE=0; it is the number of ranks, at least 1")
	}
	if l.rank, err = num("RANK", ""); err != nil {
		return nil, fmt.Errorf("%w (WORLD_SIZE is %d: set RANK too, 0 … %d)", err, l.world, l.world-1)
	}
	if l.local, err = num("LOCAL_RANK", strconv.Itoa(l.rank)); err != nil {
		return nil, err
	}
	if l.localWorld, err = num("LOCAL_WORLD_SIZE", "0"); err != nil {
		return nil, err
	}
	if os.Getenv("GROUP_RANK") != "" {
		if l.node, err = num("GROUP_RANK", ""); err != nil {
			return nil, err
		}
	}
	port, err := num("MASTER_PORT", "")
	if err != nil || port == 0 || port > 65535 {
		return nil, fmt.Errorf("data parallel: WORLD_SIZE is %d but MASTER_PORT is %q; set MASTER_ADDR and MASTER_PORT to rank 0's address and a free port", l.world, os.Getenv("MASTER_PORT"))
	}
	l.masterAddr = os.Getenv("MASTER_ADDR")
	if l.masterAddr == "" {
		l.masterAddr = "127.0.0.1"
	}
	l.storePort, l.storeWhy = port, "MASTER_PORT"
	if agentStore(os.Getenv("TORCHELASTIC_USE_AGENT_STORE")) {
		l.storePort, l.storeWhy = port+1, fmt.Sprintf("MASTER_PORT+1 (MASTER_PORT %d is torchrun's own store; %s sets another port)", port, StorePortEnv)
	}
	if s := os.Getenv(StorePortEnv); s != "" {
		p, err := strconv.Atoi(s)
		if err != nil || p <= 0 || p > 65535 {
			return nil, fmt.Errorf("data parallel: %s=%q is not a port (1 … 65535)", StorePortEnv, s)
		}
		l.storePort, l.storeWhy = p, StorePortEnv
	}
	if l.storePort > 65535 {
		return nil, fmt.Errorf("data parallel: MASTER_PORT is %d, so troupe's store would listen on %d; set %s to a free port of MASTER_ADDR, the same on every node", port, l.storePort, StorePortEnv)
	}
	l.timeout = 30 * time.Minute // a checkpoint of a large model is written by rank 0 while the others wait
	if s := os.Getenv(TimeoutEnv); s != "" {
		if l.timeout, err = time.ParseDuration(s); err != nil || l.timeout <= 0 {
			return nil, fmt.Errorf("data parallel: %s=%q: want a positive duration such as 30m or 90s", TimeoutEnv, s)
		}
	}
	return l, nil
}

// agentStore reads TORCHELASTIC_USE_AGENT_STORE (Python's str(bool)).
func agentStore(v string) bool {
	b, err := strconv.ParseBool(v)
	return err == nil && b
}

// where names this rank's place for messages: "rank 2 of 4 (node 1)".
func (l *launch) where() string {
	s := fmt.Sprintf("rank %d of %d", l.rank, l.world)
	if l.node >= 0 {
		s += fmt.Sprintf(" (node %d)", l.node)
	}
	return s
}

// localAddr is the address this host reaches the store's host from (the
// source address of the route to MASTER_ADDR): what Gloo binds when
// GLOO_SOCKET_IFNAME does not name interfaces, and where the other ranks
// reach this one. Empty when there is no route yet.
func (l *launch) localAddr() string {
	c, err := net.Dial("udp", net.JoinHostPort(l.masterAddr, strconv.Itoa(l.storePort))) // sends nothing
	if err != nil {
		return ""
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).IP.String()
}

// setThreads gives each rank its share of the node's CPUs when the launcher
// did not say (TROUPE_THREADS): torchrun, like --nproc, starts
// LOCAL_WORLD_SIZE processes on one machine.
func (l *launch) setThreads() {
	if os.Getenv("TROUPE_THREADS") != "" || l.localWorld < 2 {
		return
	}
	torch.SetNumThreads(max(1, runtime.NumCPU()/l.localWorld))
}

// LauncherRunEnv is torchrun's id of the job (its --rdzv-id, or one it
// draws with --standalone), the same across its restarts.
const LauncherRunEnv = "TORCHELASTIC_RUN_ID"

// LauncherRestart is torchrun's restart count for this group
// (TORCHELASTIC_RESTART_COUNT; 0 on the first start and without torchrun).
func LauncherRestart() int {
	n, err := strconv.Atoi(os.Getenv("TORCHELASTIC_RESTART_COUNT"))
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// ReportToLauncher writes a rank's last error where torchrun reads it
// (TORCHELASTIC_ERROR_FILE), so that its summary of the failure shows the
// error instead of "<N/A>". Without torchrun it does nothing.
func ReportToLauncher(msg string) {
	path := os.Getenv("TORCHELASTIC_ERROR_FILE")
	if path == "" {
		return
	}
	// torch.distributed.elastic's error file: {"message": {"message", "extraInfo": {"timestamp"}}}
	b, err := json.Marshal(map[string]any{"message": map[string]any{
		"message":   strings.TrimSpace(msg),
		"extraInfo": map[string]string{"timestamp": strconv.FormatInt(time.Now().Unix(), 10)},
	}})
	if err == nil {
		os.WriteFile(path, b, 0o644) // best effort: the error is on stderr too
	}
}
