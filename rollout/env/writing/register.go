package writing

import "troupe/rollout"

func init() {
	rollout.RegisterEnvironment("writing", rollout.EnvironmentSpec{
		Key:      "writing",
		Defaults: func() any { return DefaultConfig() },
		Build: func(o any) (train, test rollout.Environment, err error) {
			return rollout.SplitsOptionalTest("env.writing.train", func(split string) (*Env, error) { return New(o.(Config), split) })
		},
		Text: func() ([]string, error) {
			e, err := New(DefaultConfig(), "train")
			if err != nil {
				return nil, err
			}
			var texts []string
			for i := 0; i < e.Len(); i++ {
				t := e.Task(i)
				texts = append(texts, t.Question, e.Demonstrate("first", t, "", true), e.Demonstrate("second", t, "", true))
			}
			return texts, nil
		},
		Workflows: []string{"joint", "single"},
	})
}
