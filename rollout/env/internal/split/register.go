package split

import "troupe/rollout"

// Game is what a procedural turn-based game package offers.
type Game interface {
	rollout.Stepper
	rollout.Demonstrator
}

// RegisterGame registers a procedural game for the tree workflow: options
// C (with Validate) under env.<key>, splits from build, and tokenizer text
// from the first 300 train instances with their tool and plan
// demonstrations and initial observations.
func RegisterGame[C interface{ Validate() error }, E Game](name, key string, defaults func() C, build func(C, string) (E, error)) {
	rollout.RegisterEnvironment(name, rollout.EnvironmentSpec{
		Key:      key,
		Defaults: func() any { return defaults() },
		Build: func(o any) (train, test rollout.Environment, err error) {
			return rollout.Splits(func(s string) (E, error) { return build(o.(C), s) })
		},
		Text: func() ([]string, error) {
			e, err := build(defaults(), Train)
			if err != nil {
				return nil, err
			}
			var texts []string
			for i := 0; i < 300 && i < e.Len(); i++ {
				t := e.Task(i)
				texts = append(texts, t.Question, e.Demonstrate("tool", t, "", true), e.Demonstrate("plan", t, "", true))
				if s, err := e.Reset(t); err == nil {
					texts = append(texts, s.Observation())
				}
			}
			return texts, nil
		},
		Workflows: []string{"tree"},
	})
}
