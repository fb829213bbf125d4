package dist

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"troupe/torch"
)

// launchEnv clears every variable ReadLaunch reads, then sets kv.
func launchEnv(t *testing.T, kv ...string) {
	t.Helper()
	for _, k := range []string{"WORLD_SIZE", "RANK", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK", "MASTER_ADDR", "MASTER_PORT",
		"TORCHELASTIC_USE_AGENT_STORE", LauncherRunEnv, StorePortEnv, TimeoutEnv, "GLOO_SOCKET_IFNAME", "TORCHELASTIC_RESTART_COUNT"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	for i := 0; i+1 < len(kv); i += 2 {
		t.Setenv(kv[i], kv[i+1])
	}
}

// Under torchrun's agent store troupe's store moves to the next port (or
// TROUPE_STORE_PORT); otherwise rank 0 hosts on MASTER_PORT.
func TestReadLaunchStorePort(t *testing.T) {
	torchrun := []string{"WORLD_SIZE", "4", "RANK", "3", "LOCAL_RANK", "1", "LOCAL_WORLD_SIZE", "2", "GROUP_RANK", "1",
		"MASTER_ADDR", "node0", "MASTER_PORT", "29500", LauncherRunEnv, "job"}
	for _, c := range []struct {
		name string
		env  []string
		port int
	}{
		{"by hand", []string{"WORLD_SIZE", "2", "RANK", "1", "MASTER_PORT", "29500"}, 29500},
		{"torchrun, static rendezvous", append(torchrun, "TORCHELASTIC_USE_AGENT_STORE", "False"), 29500},
		{"torchrun, agent store", append(torchrun, "TORCHELASTIC_USE_AGENT_STORE", "True"), 29501},
		{"torchrun, agent store, port given", append(torchrun, "TORCHELASTIC_USE_AGENT_STORE", "True", StorePortEnv, "31000"), 31000},
	} {
		launchEnv(t, c.env...)
		l, err := ReadLaunch()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if l.StorePort != c.port {
			t.Errorf("%s: the store's port is %d (%s), want %d", c.name, l.StorePort, l.storeWhy, c.port)
		}
	}
	launchEnv(t, append(torchrun, "TORCHELASTIC_USE_AGENT_STORE", "True", TimeoutEnv, "90s")...)
	l, err := ReadLaunch()
	if err != nil {
		t.Fatal(err)
	}
	if l.Rank != 3 || l.World != 4 || l.Local != 1 || l.LocalWorld != 2 || l.Node != 1 || l.MasterAddr != "node0" || l.Timeout != 90*time.Second {
		t.Fatalf("read %+v", *l)
	}
	if got := l.Where(); got != "rank 3 of 4 (node 1)" {
		t.Fatalf("where: %q", got)
	}
}

// Bad values are refused naming the variable and the value.
func TestReadLaunchRefuses(t *testing.T) {
	for _, c := range []struct {
		env  []string
		want string
	}{
		{[]string{"WORLD_SIZE", "2", "RANK", "x", "MASTER_PORT", "1"}, `RANK="x"`},
		{[]string{"WORLD_SIZE", "2", "RANK", "0"}, "MASTER_PORT"},
		{[]string{"WORLD_SIZE", "2", "RANK", "0", "MASTER_PORT", "65535", "TORCHELASTIC_USE_AGENT_STORE", "True"}, StorePortEnv},
		{[]string{"WORLD_SIZE", "2", "RANK", "0", "MASTER_PORT", "1", StorePortEnv, "0"}, StorePortEnv + `="0"`},
		{[]string{"WORLD_SIZE", "2", "RANK", "0", "MASTER_PORT", "1", TimeoutEnv, "-1s"}, TimeoutEnv + `="-1s"`},
		{[]string{"WORLD_SIZE", "2", "RANK", "2", "MASTER_PORT", "1"}, "RANK=2 but WORLD_SIZE=2"},
	} {
		launchEnv(t, c.env...)
		if _, err := ReadLaunch(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error naming %s", c.env, err, c.want)
		}
	}
	launchEnv(t)
	if l, err := ReadLaunch(); l != nil || err != nil {
		t.Fatalf("no WORLD_SIZE: %+v, %v; want one process", l, err)
	}
}

// The error file has the layout torchrun's summary reads.
func TestReportToLauncher(t *testing.T) {
	path := filepath.Join(t.TempDir(), "error.json")
	t.Setenv("TORCHELASTIC_ERROR_FILE", path)
	ReportToLauncher("train: it broke\n")
	var got struct {
		Message struct {
			Message   string            `json:"message"`
			ExtraInfo map[string]string `json:"extraInfo"`
		} `json:"message"`
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &got); err != nil || got.Message.Message != "train: it broke" || got.Message.ExtraInfo["timestamp"] == "" {
		t.Fatalf("%s: %v", raw, err)
	}
}

// The CUDA ordinal is the rank's visible device: LOCAL_RANK itself when the
// process sees the node's GPUs, 0 under Slurm's per-task binding (one
// visible device), LOCAL_RANK modulo the visible count otherwise; no
// visible device is refused naming CUDA_VISIBLE_DEVICES.
func TestOrdinal(t *testing.T) {
	for _, c := range []struct{ local, visible, want int }{
		{3, 8, 3}, {3, 4, 3}, {7, 1, 0}, {3, 1, 0}, {5, 4, 1}, {8, 8, 0},
	} {
		l := &Launch{Rank: c.local, World: 16, Local: c.local, Node: -1}
		if got, err := l.Ordinal(c.visible); err != nil || got != c.want {
			t.Errorf("LOCAL_RANK %d with %d visible devices: cuda:%d (%v), want cuda:%d", c.local, c.visible, got, err, c.want)
		}
	}
	t.Setenv("CUDA_VISIBLE_DEVICES", "")
	l := &Launch{Rank: 1, World: 2, Local: 1, Node: -1}
	if _, err := l.Ordinal(0); err == nil || !strings.Contains(err.Error(), `sees no CUDA device (CUDA_VISIBLE_DEVICES="")`) {
		t.Errorf("no visible device: %v", err)
	}
}

// Without TROUPE_THREADS a rank takes its share of the node's CPUs:
// LOCAL_WORLD_SIZE when the launcher set it, else the count of ranks the
// rendezvous found on the node (srun and by-hand launches set none).
func TestThreadsShareTheNode(t *testing.T) {
	for _, c := range []struct{ cpus, ranks, want int }{{64, 8, 8}, {64, 3, 21}, {2, 4, 1}, {16, 0, 16}} {
		if got := threadsFor(c.cpus, c.ranks); got != c.want {
			t.Errorf("%d CPUs, %d ranks: %d threads, want %d", c.cpus, c.ranks, got, c.want)
		}
	}
	t.Setenv("TROUPE_THREADS", "")
	os.Unsetenv("TROUPE_THREADS")
	before := torch.NumThreads()
	defer torch.SetNumThreads(before)
	for _, c := range []struct{ localWorld, counted int }{{2, 0}, {0, 2}} {
		torch.SetNumThreads(before)
		(&Launch{LocalWorld: c.localWorld}).setThreads(c.counted)
		if got, want := torch.NumThreads(), threadsFor(runtime.NumCPU(), 2); got != want {
			t.Errorf("LOCAL_WORLD_SIZE %d, %d ranks counted on the node: %d threads, want %d", c.localWorld, c.counted, got, want)
		}
	}
}
