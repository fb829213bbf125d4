package retrieval

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The load test runs the server in a process of its own (this test binary,
// re-run with loadServerEnv set: see TestMain) so that its resident memory
// is the server's alone, and reads that memory from /proc.

const loadServerEnv = "TROUPE_RETRIEVAL_LOAD_SERVER"

func TestMain(m *testing.M) {
	if spec := os.Getenv(loadServerEnv); spec != "" {
		if err := runLoadServer(spec); err != nil {
			fmt.Fprintln(os.Stderr, "load server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runLoadServer serves a 2,000-document corpus (about 1 kB each, all
// matching "common") with the limits in spec (JSON) on loopback, prints its
// address, and serves until its stdin closes.
func runLoadServer(spec string) error {
	var lim Limits
	if err := json.Unmarshal([]byte(spec), &lim); err != nil {
		return err
	}
	ix, err := Build(bulkyCorpus(2000, 1000))
	if err != nil {
		return err
	}
	s, err := NewServer(ix, lim, "")
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { io.Copy(io.Discard, os.Stdin); cancel() }()
	fmt.Println(ln.Addr())
	return s.Serve(ctx, ln)
}

// procKiB reads a "Name:  N kB" line of /proc/PID/status.
func procKiB(pid int, name string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	return 0, fmt.Errorf("/proc/%d/status has no %s", pid, name)
}

// 200 clients at once against a server with small limits: 40 stall their
// uploads, 160 send three requests each — answerable ones, ones whose answer
// would be ~54 MB, ones whose body is past the limit. The server's peak
// resident memory may grow by at most twice its MemoryBound (the garbage
// collector's headroom) plus 24 MiB (runtime, goroutines, code first
// touched); without the limits one of the large answers alone would pass
// that.
func TestLoadOnLoopbackStaysBounded(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc: cannot read the server's resident memory")
	}
	lim := Limits{
		MaxBodyBytes: 64 << 10, MaxQueries: 512, MaxTopK: 100, MaxResponseBytes: 512 << 10,
		MaxInFlight: 4, QueueTimeout: 200 * time.Millisecond, MaxConns: 64,
		ReadHeaderTimeout: 500 * time.Millisecond, ReadTimeout: time.Second, WriteTimeout: 2 * time.Second, IdleTimeout: time.Second,
	}
	spec, _ := json.Marshal(lim)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), loadServerEnv+"="+string(spec))
	cmd.Stderr = os.Stderr
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("server process: %v", err)
		}
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("the server process printed no address: %v", err)
	}
	addr := strings.TrimSpace(line)
	pid := cmd.Process.Pid

	// warm up every path once, then take the baseline and restart the peak
	tr := &http.Transport{MaxIdleConnsPerHost: 200}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: patience}
	kinds := []struct {
		name string
		body string
	}{
		{"answerable", `{"queries": ["common w5", "w7 w9", "w11", "nothing"], "topk": 3, "return_scores": true}`},
		{"huge answer", `{"queries": ` + queries(512, "common") + `, "topk": 100, "return_scores": true}`},
		{"huge body", `{"queries": ` + queries(8000, "common") + `}`},
	}
	for _, k := range kinds {
		resp, err := client.Post("http://"+addr+"/retrieve", "application/json", strings.NewReader(k.body))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	tr.CloseIdleConnections()
	base, err := procKiB(pid, "VmRSS")
	if err != nil {
		t.Fatal(err)
	}
	hwmReset := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0) == nil

	// sample the resident memory too, in case the peak cannot be restarted
	var peak int64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			if v, err := procKiB(pid, "VmRSS"); err == nil {
				peak = max(peak, v)
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()

	var mu sync.Mutex
	statuses := map[string]int{} // "kind status" → count
	count := func(key string) { mu.Lock(); statuses[key]++; mu.Unlock() }
	var wg sync.WaitGroup
	for i := 0; i < 40; i++ {
		wg.Go(func() {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				count("stall dial-error")
				return
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(patience))
			fmt.Fprintf(c, "POST /retrieve HTTP/1.1\r\nHost: x\r\nContent-Length: 60000\r\n\r\n{\"queries\": [%s", strings.Repeat(`"common", `, 3000))
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			switch {
			case err == nil:
				count(fmt.Sprintf("stall %d", resp.StatusCode))
			case err != nil && os.IsTimeout(err):
				count("stall KEPT")
			default:
				count("stall dropped")
			}
		})
	}
	for i := 0; i < 160; i++ {
		wg.Go(func() {
			for j := 0; j < 3; j++ {
				k := kinds[(i+j)%3]
				resp, err := client.Post("http://"+addr+"/retrieve", "application/json", strings.NewReader(k.body))
				if err != nil {
					count(k.name + " transport-error")
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				count(fmt.Sprintf("%s %d", k.name, resp.StatusCode))
			}
		})
	}
	wg.Wait()
	close(stop)
	<-sampled
	hwm, err := procKiB(pid, "VmHWM")
	if err != nil {
		t.Fatal(err)
	}
	if hwmReset {
		peak = max(peak, hwm)
	}
	growth := (peak - base) << 10
	bound := 2*lim.MemoryBound() + 24<<20
	t.Logf("server RSS: %.1f MiB before the load, peak %.1f MiB (growth %.1f MiB; bound %.1f MiB = 2 × %.1f MiB + 24 MiB; peak from %s)",
		mib(base<<10), mib(peak<<10), mib(growth), mib(bound), mib(lim.MemoryBound()), map[bool]string{true: "VmHWM", false: "5 ms samples"}[hwmReset])
	t.Logf("answers: %v", statuses)
	if growth > bound {
		t.Errorf("the server's resident memory grew by %.1f MiB under load, past the bound of %.1f MiB", mib(growth), mib(bound))
	}
	for key, n := range statuses {
		switch status := key[strings.LastIndex(key, " ")+1:]; status {
		case "200", "408", "413", "503", "dropped", "transport-error":
		default:
			t.Errorf("%d × %s", n, key)
		}
	}
	if statuses["answerable 200"] == 0 || statuses["huge answer 413"] == 0 || statuses["huge body 413"] == 0 {
		t.Errorf("the load did not reach every path: %v", statuses)
	}
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }
