package optim

// schedule.go — the learning rate as a function of the train step.
//
//	warmup (step < W):  lr · (step + 1) / W
//	constant:           lr
//	cosine:             lr · (r + (1 − r) · ½(1 + cos(π · p))),
//	                    p = clamp((step − W) / (total − W), 0, 1), r = min_lr_ratio
//
// Departure from Hugging Face's schedules (used by verl): their warmup is
// lr·step/W, so step 0 runs at lr 0 and is wasted; here the first step runs
// at lr/W. After total_steps the cosine stays at its floor.
//
// The schedule is a pure function of the step index the caller passes, so a
// resumed run gets exactly the learning rates of an uninterrupted one.

import "math"

// LearningRate is the learning rate s gives at train step step (0-based).
func (s Settings) LearningRate(step int) float64 {
	if step < 0 {
		step = 0
	}
	if s.WarmupSteps > 0 && step < s.WarmupSteps {
		return s.LR * float64(step+1) / float64(s.WarmupSteps)
	}
	if s.LRSchedule != ScheduleCosine {
		return s.LR
	}
	span := s.TotalSteps - s.WarmupSteps
	p := 1.0
	if span > 0 {
		p = min(1, float64(step-s.WarmupSteps)/float64(span))
	}
	return s.LR * (s.MinLRRatio + (1-s.MinLRRatio)*0.5*(1+math.Cos(math.Pi*p)))
}
