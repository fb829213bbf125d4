package dist

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// star connects rank 0 to ranks 1…n-1 over loopback TCP, as the hello
// leaves them, and starts every rank's watch; fatal records what would end
// each process.
type star struct {
	w     []*watch
	mu    sync.Mutex
	ended map[int]error
}

func newStar(t *testing.T, n int, grace time.Duration) *star {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	s := &star{ended: map[int]error{}}
	zero := map[int]net.Conn{}
	ends := map[int]net.Conn{}
	for r := 1; r < n; r++ {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		a, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		zero[r], ends[r] = a, c
	}
	fatal := func(r int) func(error) {
		return func(err error) {
			s.mu.Lock()
			s.ended[r] = err
			s.mu.Unlock()
		}
	}
	s.w = append(s.w, newWatch(0, "rank 0 of 3", zero, fatal(0)))
	for r := 1; r < n; r++ {
		s.w = append(s.w, newWatch(r, fmt.Sprintf("rank %d of 3", r), map[int]net.Conn{0: ends[r]}, fatal(r)))
	}
	for _, w := range s.w {
		w.grace = grace
		w.setNames(map[int]string{0: "rank 0 on host a", 1: "rank 1 on host a", 2: "rank 2 on host b"})
	}
	t.Cleanup(func() {
		for _, w := range s.w {
			w.leave(nil)
		}
	})
	return s
}

// endedWith waits up to d for rank r's process to be ended and returns why.
func (s *star) endedWith(r int, d time.Duration) error {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		s.mu.Lock()
		err := s.ended[r]
		s.mu.Unlock()
		if err != nil {
			return err
		}
	}
	return nil
}

// A rank that dies without a word (its connection closes: kill -9) ends
// the wait of a rank inside a collective after the grace — as NCCL would
// not — through rank 0's relay; the rank that is not in a collective is
// not ended, but its next collective is refused at once, naming the rank.
func TestWatchEndsWaitsForADeadRank(t *testing.T) {
	s := newStar(t, 3, 300*time.Millisecond)
	end, err := s.w[1].enter() // rank 1 waits in a collective
	if err != nil {
		t.Fatal(err)
	}
	defer end()
	s.w[2].mu.Lock()
	conn := s.w[2].conns[0]
	s.w[2].mu.Unlock()
	conn.Close() // rank 2's process is gone
	err = s.endedWith(1, 5*time.Second)
	if err == nil || !strings.Contains(err.Error(), "rank 1 of 3 stopped waiting in a collective: rank 2 on host b ended without a word") {
		t.Fatalf("rank 1, waiting in a collective with the dead rank 2, was not ended naming it: %v", err)
	}
	t.Log(err)
	if err := s.endedWith(0, 500*time.Millisecond); err != nil {
		t.Fatalf("rank 0 was not in a collective but was ended: %v", err)
	}
	_, err = s.w[0].enter()
	var lost *LostError
	if !errors.As(err, &lost) || lost.Rank != 2 {
		t.Fatalf("rank 0's next collective: %v; want it refused naming rank 2", err)
	}
}

// A rank that fails says why, and the others' messages carry it; a rank
// whose collective completes in the grace is not ended; a rank that
// finished ("bye") ends nobody who is not waiting for it; a rank that is
// leaving itself ignores the others.
func TestWatchCarriesTheFailure(t *testing.T) {
	s := newStar(t, 3, 300*time.Millisecond)
	end0, _ := s.w[0].enter()
	end2, _ := s.w[2].enter()
	end2() // rank 2's collective completes within the grace
	s.w[1].leave(errors.New("step 2: update of model \"m\": out of memory\nsecond line"))
	err := s.endedWith(0, 5*time.Second)
	if err == nil || !strings.Contains(err.Error(), `rank 1 on host a failed: step 2: update of model "m": out of memory`) || strings.Contains(err.Error(), "second line") {
		t.Fatalf("rank 0 should be ended with rank 1's first error line: %v", err)
	}
	end0()
	if err := s.endedWith(2, 800*time.Millisecond); err != nil {
		t.Fatalf("rank 2 left its collective in the grace but was ended: %v", err)
	}
	if _, err := s.w[2].enter(); err == nil || !strings.Contains(err.Error(), "rank 1 on host a failed: step 2") {
		t.Fatalf("rank 2's next collective: %v; want it refused with rank 1's failure", err)
	}

	s = newStar(t, 2, 100*time.Millisecond)
	s.w[1].leave(nil)
	time.Sleep(300 * time.Millisecond)
	if err := s.endedWith(0, 100*time.Millisecond); err != nil {
		t.Fatalf("rank 1 finished and rank 0, not waiting for it, was ended: %v", err)
	}

	s = newStar(t, 2, 100*time.Millisecond)
	end, _ := s.w[0].enter()
	defer end()
	s.w[0].leave(nil) // rank 0 is done too
	s.w[1].leave(errors.New("late"))
	if err := s.endedWith(0, 500*time.Millisecond); err != nil {
		t.Fatalf("a rank that is leaving was ended: %v", err)
	}
}
