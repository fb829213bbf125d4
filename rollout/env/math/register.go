package math

import "troupe/rollout"

func init() {
	rollout.RegisterEnvironment("math", rollout.EnvironmentSpec{
		Key:      "math",
		Defaults: func() any { return DefaultConfig() },
		Build: func(o any) (train, test rollout.Environment, err error) {
			c := o.(Config)
			if train, err = New(c, SplitTrain); err != nil {
				return nil, nil, err
			}
			if c.Source == "procedural" || c.Test != "" {
				if test, err = New(c, SplitTest); err != nil {
					return nil, nil, err
				}
			}
			return train, test, nil
		},
		Text:      mergeText,
		Workflows: []string{"math-refine", "single", "math-tool"},
		Oracle:    Oracle,
	})
}

// mergeText is a few hundred generated problems with their answers and the
// verdict tags (for `train init --text math`).
func mergeText() ([]string, error) {
	var texts []string
	for _, d := range []int{1, 2, 3} {
		cfg := DefaultProceduralConfig()
		cfg.Difficulty = d
		src, err := NewProcedural(cfg, SplitTrain)
		if err != nil {
			continue
		}
		for i := 0; i < 150; i++ {
			task := src.Task(i)
			texts = append(texts, task.Question, `The answer is \boxed{`+task.Answer+`}.`,
				"<verify>approve</verify>", "<verify>reject</verify>")
		}
	}
	return texts, nil
}
