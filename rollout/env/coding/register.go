package coding

import "troupe/rollout"

func init() {
	rollout.RegisterEnvironment("coding", rollout.EnvironmentSpec{
		Key:      "coding",
		Defaults: func() any { return DefaultConfig() },
		Build: func(o any) (train, test rollout.Environment, err error) {
			return rollout.SplitsOptionalTest("env.coding.train", func(split string) (*Env, error) { return New(o.(Config), split) })
		},
		Text: func() ([]string, error) {
			var texts []string
			for _, t := range Procedural(1, "train") {
				texts = append(texts, t.Question, "```python\n"+t.Meta["helper"]+"```", "```python\n"+t.Meta["main"]+"```")
			}
			return texts, nil
		},
		Workflows: []string{"joint", "single", "code-test"},
	})
}
