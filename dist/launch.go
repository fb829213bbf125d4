package dist

// launch.go — where a rank learns its place: the environment its launcher
// sets. Three launchers set it, with the same core variables (WORLD_SIZE,
// RANK, LOCAL_RANK, MASTER_ADDR, MASTER_PORT):
//
//   - `train --nproc N` (cmd/train/launch.go), on one node;
//   - torchrun (torch.distributed.run), alone or under Slurm, which adds
//     LOCAL_WORLD_SIZE, GROUP_RANK (the node's index), TORCHELASTIC_RUN_ID,
//     TORCHELASTIC_RESTART_COUNT, TORCHELASTIC_ERROR_FILE and, with its c10d
//     rendezvous, TORCHELASTIC_USE_AGENT_STORE=True: MASTER_ADDR:MASTER_PORT
//     is then the launcher's own TCPStore, already listening on rank 0's node;
//   - a person or a script (srun), one process per device.
//
// The store's port. Rank 0 hosts a TCPStore of troupe's own at MASTER_ADDR.
// Under torchrun's agent store troupe does not join the launcher's store but
// keeps its own on the next port (MASTER_PORT+1, or TROUPE_STORE_PORT; the
// same on every node): the launcher's store speaks the TCPStore protocol of
// the launcher's torch, and a client of another torch is not understood —
// torch 2.x's server resets a client of Debian's libtorch 1.13, troupe's
// CPU build, which does not send the handshake 2.x expects. Without the
// agent store (other rendezvous backends, `--nproc`, by hand) MASTER_PORT is
// free for rank 0 to host on, as torch's own env:// rendezvous does.
//
// The device. LOCAL_RANK numbers the ranks of a node; the CUDA ordinal is
// the rank's visible device, LOCAL_RANK modulo the devices this process
// sees (as torch's recipes do): CUDA_VISIBLE_DEVICES=4,5,6,7 makes ranks
// 0–3 use ordinals 0–3, and Slurm's per-task binding (one visible device
// per task) makes every rank use ordinal 0. NVML finds the device by its
// PCI bus id, not by the ordinal (internal/gpu).
//
// What it is not: meeting the other ranks (hello.go, join.go).

import (
	"encoding/json"
	"fmt"
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

// DefaultTimeout is TimeoutEnv's default: a checkpoint of a large model is
// written by rank 0 while the others wait.
const DefaultTimeout = 30 * time.Minute

// LauncherRunEnv is torchrun's id of the job (its --rdzv-id, or one it
// draws with --standalone), the same across its restarts.
const LauncherRunEnv = "TORCHELASTIC_RUN_ID"

// Launch is a rank's place in the group and the group's meeting point, as
// its launcher described them.
type Launch struct {
	Rank, World int
	Local       int // LOCAL_RANK: the rank on its node
	LocalWorld  int // LOCAL_WORLD_SIZE: the node's number of ranks; 0 when not told (the rendezvous counts them)
	Node        int // GROUP_RANK: the node's index under torchrun; -1 when not told
	MasterAddr  string
	StorePort   int
	storeWhy    string // how StorePort was chosen, for the rendezvous errors
	Timeout     time.Duration
	GlooIfaces  string // GLOO_SOCKET_IFNAME
}

// ReadLaunch reads the launcher's variables; nil when WORLD_SIZE is unset
// (or 1 without MASTER_PORT): one process. A group of one (WORLD_SIZE=1 with
// MASTER_PORT) runs every collective: the way to check the NCCL path on a
// machine with one GPU.
func ReadLaunch() (*Launch, error) {
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
	l := &Launch{Node: -1, GlooIfaces: os.Getenv("GLOO_SOCKET_IFNAME")}
	var err error
	if l.World, err = num("WORLD_SIZE", ""); err != nil {
		return nil, err
	}
	if l.World == 0 {
		return nil, fmt.Errorf("data parallel: WORLD_SIZE=0; it is the number of ranks, at least 1")
	}
	if l.Rank, err = num("RANK", ""); err != nil {
		return nil, fmt.Errorf("%w (WORLD_SIZE is %d: set RANK too, 0 … %d)", err, l.World, l.World-1)
	}
	if l.Rank >= l.World {
		return nil, fmt.Errorf("data parallel: RANK=%d but WORLD_SIZE=%d: ranks are 0 … %d", l.Rank, l.World, l.World-1)
	}
	if l.Local, err = num("LOCAL_RANK", strconv.Itoa(l.Rank)); err != nil {
		return nil, err
	}
	if l.LocalWorld, err = num("LOCAL_WORLD_SIZE", "0"); err != nil {
		return nil, err
	}
	if os.Getenv("GROUP_RANK") != "" {
		if l.Node, err = num("GROUP_RANK", ""); err != nil {
			return nil, err
		}
	}
	port, err := num("MASTER_PORT", "")
	if err != nil || port == 0 || port > 65535 {
		return nil, fmt.Errorf("data parallel: WORLD_SIZE is %d but MASTER_PORT is %q; set MASTER_ADDR and MASTER_PORT to rank 0's address and a free port", l.World, os.Getenv("MASTER_PORT"))
	}
	l.MasterAddr = os.Getenv("MASTER_ADDR")
	if l.MasterAddr == "" {
		l.MasterAddr = "127.0.0.1"
	}
	l.StorePort, l.storeWhy = port, "MASTER_PORT"
	if agentStore(os.Getenv("TORCHELASTIC_USE_AGENT_STORE")) {
		l.StorePort, l.storeWhy = port+1, fmt.Sprintf("MASTER_PORT+1 (MASTER_PORT %d is torchrun's own store; %s sets another port)", port, StorePortEnv)
	}
	if s := os.Getenv(StorePortEnv); s != "" {
		p, err := strconv.Atoi(s)
		if err != nil || p <= 0 || p > 65535 {
			return nil, fmt.Errorf("data parallel: %s=%q is not a port (1 … 65535)", StorePortEnv, s)
		}
		l.StorePort, l.storeWhy = p, StorePortEnv
	}
	if l.StorePort > 65535 {
		return nil, fmt.Errorf("data parallel: MASTER_PORT is %d, so troupe's store would listen on %d; set %s to a free port of MASTER_ADDR, the same on every node", port, l.StorePort, StorePortEnv)
	}
	l.Timeout = DefaultTimeout
	if s := os.Getenv(TimeoutEnv); s != "" {
		if l.Timeout, err = time.ParseDuration(s); err != nil || l.Timeout <= 0 {
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

// Where names this rank's place for messages: "rank 2 of 4 (node 1)".
func (l *Launch) Where() string {
	s := fmt.Sprintf("rank %d of %d", l.Rank, l.World)
	if l.Node >= 0 {
		s += fmt.Sprintf(" (node %d)", l.Node)
	}
	return s
}

// store names the store's address and how its port was chosen.
func (l *Launch) store() string {
	return fmt.Sprintf("%s:%d (the store's port: %s)", l.MasterAddr, l.StorePort, l.storeWhy)
}

// Ordinal is this rank's CUDA device among the visible ones: LOCAL_RANK
// modulo their number (one visible device per task, Slurm's per-task
// binding, gives every rank ordinal 0).
func (l *Launch) Ordinal(visible int) (int, error) {
	if visible <= 0 {
		return 0, fmt.Errorf("data parallel: %s (LOCAL_RANK %d) is to train on CUDA, but this process sees no CUDA device%s", l.Where(), l.Local, visibleDevices())
	}
	return l.Local % visible, nil
}

// visibleDevices words CUDA_VISIBLE_DEVICES for messages ("" when unset).
func visibleDevices() string {
	v, ok := os.LookupEnv("CUDA_VISIBLE_DEVICES")
	if !ok {
		return ""
	}
	return fmt.Sprintf(" (CUDA_VISIBLE_DEVICES=%q)", v)
}

// threadsFor is the CPU threads of each of localWorld ranks sharing a
// node of cpus: its share, at least 1.
func threadsFor(cpus, localWorld int) int {
	return max(1, cpus/max(1, localWorld))
}

// setThreads gives this rank its share of the node's CPUs when
// TROUPE_THREADS does not say: LOCAL_WORLD_SIZE when the launcher set it,
// else the number of ranks the rendezvous found on this node (srun and by
// hand set none).
func (l *Launch) setThreads(counted int) {
	if os.Getenv("TROUPE_THREADS") != "" {
		return
	}
	n := l.LocalWorld
	if n == 0 {
		n = counted
	}
	if n >= 2 {
		torch.SetNumThreads(threadsFor(runtime.NumCPU(), n))
	}
}

// LauncherRestart is torchrun's restart count for this group
// (TORCHELASTIC_RESTART_COUNT; 0 on the first start and without torchrun).
// Only the nodes whose rank failed count a restart: torchrun starts the
// other nodes' groups again without raising theirs, so a group's restart
// is the largest count of its ranks (Group.Restart).
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
