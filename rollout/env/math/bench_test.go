package math

import (
	"testing"

	"troupe/rollout"
)

// BenchmarkScore: the reward on a typical response (a few hundred words,
// a boxed fraction, a fraction gold answer).
func BenchmarkScore(b *testing.B) {
	task := rollout.Task{Answer: "0.75"}
	resp := ""
	for i := 0; i < 60; i++ {
		resp += "We multiply both sides and simplify the terms. "
	}
	resp += `So the answer is $\boxed{\dfrac{3}{4}}$.`
	for i := 0; i < b.N; i++ {
		if (Reward{}).Score(task, resp).Reward != 1 {
			b.Fatal("wrong score")
		}
	}
}

// BenchmarkProceduralTask: drawing one generated task (difficulty 3, mixed).
func BenchmarkProceduralTask(b *testing.B) {
	p, _ := NewProcedural(ProceduralConfig{Seed: 1, Difficulty: 3, WordFraction: 0.5, TrainSize: 1 << 30}, SplitTrain)
	for i := 0; i < b.N; i++ {
		p.Task(i)
	}
}
