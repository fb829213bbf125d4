package torch

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The collectives of sharded training (ReduceScatter, AllGatherInto) in
// real separate processes, one per rank, at W = 2 and 4; the expected
// values are worked out here from what every rank sends.

const shardChildEnv = "TROUPE_SHARD_COLLECTIVES_CHILD" // "rank world port"

func TestShardCollectives(t *testing.T) {
	if gloo, _ := DistBackends(); !gloo {
		t.Fatal("this build of the shim has no Gloo: install libgloo-dev and rebuild it (make setup)")
	}
	for _, world := range []int{2, 4} {
		port := freePort(t)
		outs := make([]string, world)
		errs := make([]error, world)
		var wg sync.WaitGroup
		for r := range world {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cmd := exec.Command(os.Args[0], "-test.run", "^TestShardCollectivesChild$", "-test.v")
				cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d %d %d", shardChildEnv, r, world, port))
				b, err := cmd.CombinedOutput()
				outs[r], errs[r] = string(b), err
			}()
		}
		wg.Wait()
		for r := range world {
			if errs[r] != nil || !strings.Contains(outs[r], "shard collectives ok") {
				t.Fatalf("W=%d rank %d: %v\n%s", world, r, errs[r], outs[r])
			}
		}
	}
}

// TestShardCollectivesChild is one rank of TestShardCollectives.
func TestShardCollectivesChild(t *testing.T) {
	spec := os.Getenv(shardChildEnv)
	if spec == "" {
		t.Skip("a rank process of TestShardCollectives; runs only when it starts it")
	}
	f := strings.Fields(spec)
	rank, _ := strconv.Atoi(f[0])
	world, _ := strconv.Atoi(f[1])
	port, _ := strconv.Atoi(f[2])
	pg, err := NewProcessGroup(DistConfig{Host: "127.0.0.1", Port: port, Rank: rank, World: world, Timeout: 20 * time.Second, Gloo: true})
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	s := NewScope()
	defer s.Close()

	// rank r sends x_r[i] = (r+1)·(i+1) + r/8 over W·n elements; rank q's
	// chunk of the sum is Σ_r x_r[q·n + k]
	const n = 5
	send := make([]float32, world*n)
	for i := range send {
		send[i] = float32(rank+1)*float32(i+1) + float32(rank)/8
	}
	out := Zeros([]int64{n}, Float32, CPU)
	if err := pg.ReduceScatter(FromFloat32(send), out); err != nil {
		t.Fatal(err)
	}
	for k, got := range out.Float32s() {
		i := rank*n + k
		var want float32
		for r := range world {
			want += float32(r+1)*float32(i+1) + float32(r)/8
		}
		if got != want {
			t.Fatalf("reduce-scatter: rank %d element %d is %g, want %g", rank, k, got, want)
		}
	}

	// bfloat16, which Gloo's own reductions refuse: small integers, exact
	bf := Arange(0, float64(world*n), 1, BFloat16, CPU).AddScalar(float64(rank))
	bfOut := Zeros([]int64{n}, BFloat16, CPU)
	if err := pg.ReduceScatter(bf, bfOut); err != nil {
		t.Fatal(err)
	}
	for k, got := range bfOut.ToDType(Float64).Float64s() {
		if want := float64(world*(rank*n+k) + world*(world-1)/2); got != want {
			t.Fatalf("bf16 reduce-scatter: rank %d element %d is %g, want %g", rank, k, got, want)
		}
	}

	// every rank's (n) chunk lands at [r·n, (r+1)·n), in three dtypes
	for _, dt := range []DType{Float32, Float64, BFloat16} {
		mine := Arange(0, n, 1, dt, CPU).AddScalar(float64(10 * rank))
		all := Zeros([]int64{int64(world * n)}, dt, CPU)
		if err := pg.AllGatherInto(mine, all); err != nil {
			t.Fatal(err)
		}
		for i, got := range all.ToDType(Float64).Float64s() {
			if want := float64(10*(i/n) + i%n); got != want {
				t.Fatalf("all-gather %v: element %d is %g, want %g", dt, i, got, want)
			}
		}
	}

	// sizes that do not divide are refused, naming the call
	err = pg.ReduceScatter(Zeros([]int64{int64(world*n + 1)}, Float32, CPU), out)
	if err == nil || !strings.Contains(err.Error(), "reduce_scatter") || !strings.Contains(err.Error(), "world size") {
		t.Fatalf("a whole buffer of W·n+1 elements: %v", err)
	}
	if err := pg.AllGatherInto(Zeros([]int64{n}, Float32, CPU), Zeros([]int64{int64(world * n)}, Float64, CPU)); err == nil {
		t.Fatal("all-gather from float32 into float64 was accepted")
	}
	fmt.Println("shard collectives ok")
}
