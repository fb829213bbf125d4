package coding

import "testing"

// BenchmarkJointScore scores the reference pair of a procedural task (five
// tests): the cost of one scored program.
func BenchmarkJointScore(b *testing.B) {
	cfg := DefaultConfig()
	e, err := New(cfg, "train")
	if err != nil {
		b.Fatal(err)
	}
	tk := e.Task(0)
	pair := []string{e.Demonstrate("first", tk, "", true), e.Demonstrate("second", tk, "", true)}
	for b.Loop() {
		if r := e.JointScore(tk, 0, pair); !r.Success {
			b.Fatalf("%+v", r)
		}
	}
}
