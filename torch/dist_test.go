package torch

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The collectives run in real separate processes, one per rank, as training
// does: the test binary re-executes itself as each rank (distChild below).

const distChildEnv = "TROUPE_DIST_CHILD" // "scenario rank world port"

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// runRanks starts world children for scenario and returns each one's
// combined output and error.
func runRanks(t *testing.T, scenario string, world int) ([]string, []error) {
	t.Helper()
	if gloo, _ := DistBackends(); !gloo {
		t.Fatal("this build of the shim has no Gloo: install libgloo-dev and rebuild it (make setup)")
	}
	port := freePort(t)
	outs := make([]string, world)
	errs := make([]error, world)
	var wg sync.WaitGroup
	for r := 0; r < world; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run", "^TestDistChild$", "-test.v")
			cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s %d %d %d", distChildEnv, scenario, r, world, port))
			b, err := cmd.CombinedOutput()
			outs[r], errs[r] = string(b), err
		}()
	}
	wg.Wait()
	return outs, errs
}

func TestDistCollectivesTwoRanks(t *testing.T) {
	outs, errs := runRanks(t, "collectives", 2)
	for r := range outs {
		if errs[r] != nil || !strings.Contains(outs[r], "collectives ok") {
			t.Fatalf("rank %d: %v\n%s", r, errs[r], outs[r])
		}
	}
}

// AllReduceBuckets in buckets of 1 KiB over five tensors: a float32 one of
// 1,000 elements goes in place in 4 slices, a non-contiguous float32 one
// and a small one are packed into one float32 buffer, 300 bf16 values into
// two float32 buffers (Gloo sums them widened), 5 int64 into one — 8
// collectives, the sums exact, and no staging buffer above the bucket
// (where one concatenation of every float32 tensor would be 4,360 bytes).
func TestDistAllReduceBuckets(t *testing.T) {
	outs, errs := runRanks(t, "buckets", 2)
	for r := range outs {
		if errs[r] != nil || !strings.Contains(outs[r], "buckets ok") {
			t.Fatalf("rank %d: %v\n%s", r, errs[r], outs[r])
		}
	}
}

// A rank that dies makes the other's next collective fail with an error
// naming the surviving rank, instead of hanging.
func TestDistPeerDeathIsAnError(t *testing.T) {
	outs, errs := runRanks(t, "die", 2)
	if errs[1] == nil {
		t.Fatalf("rank 1 was meant to die:\n%s", outs[1])
	}
	if errs[0] != nil || !strings.Contains(outs[0], "rank 0 of 2") || !strings.Contains(outs[0], "peer failure reported") {
		t.Fatalf("rank 0 did not report the dead peer as an error (%v):\n%s", errs[0], outs[0])
	}
}

// The configured timeout reaches the backend: a peer that stays alive but
// never joins the collective makes it fail once the timeout passes, with
// c10d's timeout as the call's error naming this rank (not the peer's exit
// seconds later, nor c10d's 30-minute default).
func TestDistTimeoutIsTheCallsError(t *testing.T) {
	outs, errs := runRanks(t, "stall", 2)
	if errs[1] != nil {
		t.Fatalf("rank 1 (the staller) failed: %v\n%s", errs[1], outs[1])
	}
	if errs[0] != nil || !strings.Contains(outs[0], "timeout reported") || !strings.Contains(outs[0], "rank 0 of 2") {
		t.Fatalf("rank 0 did not report the timeout as its error (%v):\n%s", errs[0], outs[0])
	}
	// c10d's own words: "Operation timed out!" (the wait) or "Timed out
	// waiting …" (Gloo's op), not "Connection closed by peer" (the peer's exit)
	if low := strings.ToLower(outs[0]); !strings.Contains(low, "timed out") || strings.Contains(low, "closed") {
		t.Fatalf("rank 0's error is not the timeout:\n%s", outs[0])
	}
}

// The options c10d holds are the ones asked for: Gloo's timeout and the
// network address it binds (a group of one: no peer needed).
func TestDistOptionsReachTheBackend(t *testing.T) {
	if gloo, _ := DistBackends(); !gloo {
		t.Fatal("this build of the shim has no Gloo: install libgloo-dev and rebuild it (make setup)")
	}
	pg, err := NewProcessGroup(DistConfig{Host: "127.0.0.1", Port: freePort(t), Rank: 0, World: 1, Timeout: 1234 * time.Millisecond, Gloo: true, GlooAddr: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	d, err := pg.Describe()
	if err != nil {
		t.Fatal(err)
	}
	t.Log(d)
	if !strings.Contains(d, "gloo: timeout 1234 ms") || !strings.Contains(d, "127.0.0.1") {
		t.Fatalf("the group holds %q; want Gloo with timeout 1234 ms bound to 127.0.0.1", d)
	}
}

func TestDistRefusesBadRanks(t *testing.T) {
	for _, c := range []DistConfig{
		{Host: "127.0.0.1", Port: 1, Rank: 2, World: 2, Gloo: true},
		{Host: "127.0.0.1", Port: 0, Rank: 0, World: 1, Gloo: true},
		{Host: "127.0.0.1", Port: 1, Rank: 0, World: 1},
	} {
		if pg, err := NewProcessGroup(c); err == nil {
			pg.Close()
			t.Errorf("%+v accepted", c)
		}
	}
}

// TestDistChild is one rank of a scenario; it does nothing unless started by
// runRanks.
func TestDistChild(t *testing.T) {
	spec := os.Getenv(distChildEnv)
	if spec == "" {
		t.Skip("a rank process of the dist tests; runs only when they start it")
	}
	f := strings.Fields(spec)
	rank, _ := strconv.Atoi(f[1])
	world, _ := strconv.Atoi(f[2])
	port, _ := strconv.Atoi(f[3])
	timeout := 20 * time.Second
	if f[0] == "stall" {
		timeout = 5 * time.Second // the rendezvous too: long enough for both processes to start
	}
	pg, err := NewProcessGroup(DistConfig{Host: "127.0.0.1", Port: port, Rank: rank, World: world, Timeout: timeout, Gloo: true})
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	s := NewScope()
	defer s.Close()
	r := float64(rank)
	switch f[0] {
	case "collectives":
		// sum over ranks of (r+1)·[1..5] and [r, 10r]; two dtypes in one call
		x := FromFloat32([]float32{1, 2, 3, 4, 5}).MulScalar(r + 1)
		y := FromInt64([]int64{int64(rank), int64(10 * rank)})
		if err := pg.AllReduce([]*Tensor{x, y}, ReduceSum); err != nil {
			t.Fatal(err)
		}
		if got := x.Float64s(); !reflect.DeepEqual(got, []float64{3, 6, 9, 12, 15}) {
			t.Fatalf("all-reduce sum f32: %v", got)
		}
		if got := y.Int64s(); !reflect.DeepEqual(got, []int64{1, 10}) {
			t.Fatalf("all-reduce sum i64: %v", got)
		}
		// bf16 and f16, which Gloo does not sum in every version
		for _, dt := range []DType{BFloat16, Float16} {
			h := FromFloat32([]float32{1.5, -2, 0.25}).MulScalar(r+1).To(CPU, dt)
			if err := pg.AllReduce([]*Tensor{h}, ReduceSum); err != nil {
				t.Fatalf("all-reduce sum %v: %v", dt, err)
			}
			if got := h.Float64s(); h.DType() != dt || !reflect.DeepEqual(got, []float64{4.5, -6, 0.75}) {
				t.Fatalf("all-reduce sum %v: %v (%v)", dt, got, h.DType())
			}
		}
		z := FromFloat64([]float64{r, -r})
		if err := pg.AllReduce([]*Tensor{z}, ReduceMax); err != nil {
			t.Fatal(err)
		}
		if got := z.Float64s(); !reflect.DeepEqual(got, []float64{1, 0}) {
			t.Fatalf("all-reduce max: %v", got)
		}
		g, err := pg.AllGather(Full([]int64{2, 3}, r, Float32, CPU))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(g.Shape(), []int64{2, 2, 3}) || !reflect.DeepEqual(g.Float64s(), []float64{0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1}) {
			t.Fatalf("all-gather: %v %v", g.Shape(), g.Float64s())
		}
		b := Full([]int64{4}, r+7, Float32, CPU)
		if err := pg.Broadcast([]*Tensor{b}, 1); err != nil {
			t.Fatal(err)
		}
		if got := b.Float64s(); !reflect.DeepEqual(got, []float64{8, 8, 8, 8}) {
			t.Fatalf("broadcast from rank 1: %v", got)
		}
		if err := pg.Barrier(); err != nil {
			t.Fatal(err)
		}
		fmt.Println("collectives ok")
	case "buckets":
		// element i of a tensor is v(i)·(r+1) on rank r, v(i) = i (i mod 16 in
		// bf16, whose sums stay exact): the sum over two ranks is 3·v(i)
		v := func(i int, dt DType) float64 {
			if dt == BFloat16 {
				return float64(i % 16)
			}
			return float64(i)
		}
		ramp := func(n int, dt DType) *Tensor {
			x := make([]float64, n)
			for i := range x {
				x[i] = v(i, dt) * (r + 1)
			}
			return FromFloat64(x).ToDType(dt)
		}
		a, c, d, e := ramp(1000, Float32), ramp(300, BFloat16), ramp(5, Int64), ramp(20, Float32)
		b := ramp(70, Float32).Reshape(10, 7).Transpose(0, 1) // (7, 10), not contiguous
		before := pg.Stats()
		if err := pg.AllReduceBuckets([]*Tensor{a, b, c, d, e}, ReduceSum, 1024); err != nil {
			t.Fatal(err)
		}
		st := pg.Stats().Sub(before)
		for name, x := range map[string]*Tensor{"a": a, "b": b.Transpose(0, 1).Reshape(-1), "c": c, "d": d, "e": e} {
			for i, got := range x.ToDType(Float64).Float64s() {
				if want := 3 * v(i, x.DType()); got != want {
					t.Fatalf("tensor %s element %d: %g, want %g", name, i, got, want)
				}
			}
		}
		if c.DType() != BFloat16 || b.IsContiguous() {
			t.Fatalf("the tensors changed form: c %v, b contiguous %v", c.DType(), b.IsContiguous())
		}
		if st.AllReduce != 8 || st.LargestBuffer > 1024 {
			t.Fatalf("%d all-reduces, largest staging buffer %d bytes; want 8 and at most the 1,024-byte bucket", st.AllReduce, st.LargestBuffer)
		}
		fmt.Println("buckets ok")
	case "stall":
		if err := pg.Barrier(); err != nil {
			t.Fatal(err)
		}
		if rank == 1 {
			time.Sleep(2 * timeout) // alive, connected, but never in the collective
			return
		}
		err := pg.AllReduce([]*Tensor{FromFloat32([]float32{1})}, ReduceSum)
		if err == nil {
			t.Fatal("all-reduce without the peer succeeded")
		}
		fmt.Println("timeout reported:", err)
	case "die":
		if err := pg.Barrier(); err != nil {
			t.Fatal(err)
		}
		if rank == 1 {
			os.Exit(3) // no goodbye: the process is gone
		}
		err := pg.AllReduce([]*Tensor{FromFloat32([]float32{1})}, ReduceSum)
		if err == nil {
			t.Fatal("all-reduce with a dead peer succeeded")
		}
		fmt.Println("peer failure reported:", err)
	}
}

// NCCL gets the configured timeout and the rank's device, and a group with
// NCCL alone (a GPU build without Gloo headers) carries CPU tensors through
// the device: a group of one on cuda:0 (TROUPE_CUDA=1).
func TestCUDADistNCCLOptionsAndCPUTensors(t *testing.T) {
	dev := cudaOrSkip(t)
	if _, nccl := DistBackends(); !nccl {
		t.Fatal("TROUPE_CUDA=1 but this build of the shim has no NCCL (scripts/gpu/build-shim.sh builds it where nccl.h is)")
	}
	pg, err := NewProcessGroup(DistConfig{Host: "127.0.0.1", Port: freePort(t), Rank: 0, World: 1, Timeout: 4321 * time.Millisecond, NCCL: true, Device: 0})
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	d, err := pg.Describe()
	if err != nil {
		t.Fatal(err)
	}
	t.Log(d)
	if !strings.Contains(d, "nccl: timeout 4321 ms, device "+dev.String()) || !strings.Contains(d, "waits stream-ordered") {
		t.Fatalf("the group holds %q; want NCCL with timeout 4321 ms on %v and stream-ordered waits", d, dev)
	}
	s := NewScope()
	defer s.Close()
	msg := []byte("rows of rank 0")
	g, err := pg.AllGather(FromBytes(msg, Uint8, int64(len(msg))))
	if err != nil {
		t.Fatal(err)
	}
	if g.Device() != CPU || string(g.Bytes()) != string(msg) {
		t.Fatalf("all-gather of CPU bytes through NCCL: %v %q", g.Device(), g.Bytes())
	}
	x := FromFloat64([]float64{1.5, -2})
	if err := pg.AllReduce([]*Tensor{x}, ReduceMax); err != nil {
		t.Fatal(err)
	}
	if x.Device() != CPU || !reflect.DeepEqual(x.Float64s(), []float64{1.5, -2}) {
		t.Fatalf("all-reduce of a CPU tensor through NCCL: %v %v", x.Device(), x.Float64s())
	}
	y := FromFloat32([]float32{3}).ToDevice(dev)
	if err := pg.Broadcast([]*Tensor{y}, 0); err != nil {
		t.Fatal(err)
	}
	if y.Device() != dev || y.Item() != 3 {
		t.Fatalf("broadcast on %v: %v %v", dev, y.Device(), y.Item())
	}
}
