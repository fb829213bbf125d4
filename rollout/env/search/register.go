package search

import "troupe/rollout"

func init() {
	rollout.RegisterEnvironment("search", rollout.EnvironmentSpec{
		Key:      "search",
		Defaults: func() any { return DefaultConfig() },
		Files: func(o any) map[string]string {
			c := o.(Config)
			files := map[string]string{"env.search.retriever.corpus": c.Retriever.Corpus, "env.search.retriever.index": c.Retriever.Index,
				"env.search.retriever.token_file": c.Retriever.TokenFile}
			if c.Source == "file" {
				files["env.search.train"], files["env.search.test"] = c.Train, c.Test
			}
			return files
		},
		Build: func(o any) (train, test rollout.Environment, err error) {
			tr, te, err := Envs(o.(Config))
			if err != nil {
				return nil, nil, err
			}
			if tr == nil {
				return nil, nil, fmtNoTrain()
			}
			if te == nil {
				return tr, nil, nil
			}
			return tr, te, nil
		},
		Text:      mergeText,
		Workflows: []string{"search"},
	})
}

// mergeText is the search prompts, and the synthetic world's questions,
// demonstrations and documents.
func mergeText() ([]string, error) {
	w, err := NewWorld(DefaultSyntheticConfig())
	if err != nil {
		return nil, err
	}
	var texts []string
	for i := 0; i < 300 && i < len(w.Train); i++ {
		t := w.Train[i]
		texts = append(texts, t.Question, Oracle(nil, "answer", t, "", true), Oracle(nil, "search", t, "", true),
			"<verify>yes</verify>", "<verify>no</verify>", "<information>Doc 1(Title: ")
	}
	for _, d := range w.Corpus {
		texts = append(texts, d.Text())
	}
	return texts, nil
}
