package planpath

import "troupe/rollout"

func init() {
	rollout.RegisterEnvironment("plan-path", rollout.EnvironmentSpec{
		Key:      "plan_path",
		Defaults: func() any { return DefaultConfig() },
		Validate: func(o any) error { return o.(Config).Validate() },
		Build: func(o any) (train, test rollout.Environment, err error) {
			return rollout.Splits(func(split string) (*Env, error) { return New(o.(Config), split) })
		},
		Text: func() ([]string, error) {
			e, err := New(DefaultConfig(), SplitTrain)
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
