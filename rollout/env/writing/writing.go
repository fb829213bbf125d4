// Package writing is MAGRPO's cooperative writing environment: two agents
// answer one writing prompt together, the first with a concise summary, the
// second with a detailed expansion, and one joint reward scores the pair
// (CoMLRL's TLDR task, LLM_Collab_Writing).
//
// Files: writing.go (options, tasks, the environment, the roles' presets
// and demonstrations), reward.go (the level-gated joint reward and its
// optional degeneration guards), register.go (the registration).
//
// The joint reward is the reference's: four levels, each reported as a
// metric reward/<term> (structure, length_ratio, unique_words, transitions,
// overlap), the highest 2.98; reward.go states the terms and departures.
// The feedback for the next turn names every check that fell short.
//
// One agent alone (workflow single) writes both texts in one response,
// the summary first, then a line holding only "---", then the expansion;
// the same reward scores the two halves (a response without the line
// scores as an empty summary).
//
// Tasks: JSONL files with a configurable prompt field (e.g. TLDR posts to
// summarise and expand), or a procedural set of topics with disjoint train
// and test topics, so the environment runs offline.
package writing

import (
	"encoding/json"
	"fmt"
	"strings"

	"troupe/rollout"
	"troupe/rollout/env/internal/jsonl"
)

// Config configures the environment.
type Config struct {
	Source      string `yaml:"source"`       // "procedural" or "file"
	Train       string `yaml:"train"`        // JSONL of the train split (source: file)
	Test        string `yaml:"test"`         // JSONL of the test split
	PromptField string `yaml:"prompt_field"` // the field holding the prompt (default "prompt")
	IDField     string `yaml:"id_field"`     // optional id field
	Seed        uint64 `yaml:"seed"`         // procedural: which topics go to test
	Guards      bool   `yaml:"guards"`       // troupe's degeneration guards at level 1 (reward.go)
}

// DefaultConfig is the procedural set.
func DefaultConfig() Config { return Config{Source: "procedural", PromptField: "prompt", Seed: 1} }

// Files names the dataset files config checks exist (source: file).
func (c Config) Files() map[string]string {
	return rollout.DatasetFiles("env.writing", c.Source, c.Train, c.Test)
}

// Validate checks the settings; errors name the key and the fix.
func (c Config) Validate() error {
	switch c.Source {
	case "procedural":
	case "file":
		if c.Train == "" && c.Test == "" {
			return fmt.Errorf("env.writing.train: source is file but neither train nor test names a JSONL file")
		}
	default:
		return fmt.Errorf("env.writing.source: must be \"procedural\" or \"file\", got %q", c.Source)
	}
	if c.PromptField == "" {
		return fmt.Errorf("env.writing.prompt_field: name the field holding the prompt")
	}
	return nil
}

// Env is the writing environment for one split.
type Env struct {
	rollout.TaskSource
	guards bool
}

func (*Env) Name() string { return "writing" }

// JointScore scores [summary, expansion].
func (e *Env) JointScore(_ rollout.Task, _ int, outputs []string) rollout.JointResult {
	if len(outputs) != 2 {
		return rollout.JointResult{Feedback: fmt.Sprintf("writing needs two texts, got %d", len(outputs))}
	}
	r := Reward(outputs[0], outputs[1], e.guards)
	return rollout.JointResult{Reward: r.Reward, Success: r.Success, Feedback: feedback(r), Terms: r.Terms}
}

func feedback(r Result) string {
	if len(r.Failed) == 0 {
		return fmt.Sprintf("Every check passed (reward %.2f of %.2f).", r.Reward, MaxReward)
	}
	return fmt.Sprintf("Reward %.2f of %.2f. To improve: %s.", r.Reward, MaxReward, strings.Join(r.Failed, "; "))
}

// Marker separates the summary from the expansion in one agent's response
// (workflow single): a line holding only "---".
const Marker = "---"

// Split cuts one response into (summary, expansion) at the first line
// holding only Marker; without one, the summary is empty.
func Split(response string) (summary, expansion string) {
	lines := strings.Split(response, "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) == Marker {
			return strings.TrimSpace(strings.Join(lines[:i], "\n")), strings.TrimSpace(strings.Join(lines[i+1:], "\n"))
		}
	}
	return "", strings.TrimSpace(response)
}

// Score is the single-agent baseline: one response split at Marker and
// scored by the joint reward.
func (e *Env) Score(_ rollout.Task, response string) rollout.Score {
	s, x := Split(response)
	r := Reward(s, x, e.guards)
	return rollout.Score{Reward: r.Reward, Success: r.Success, Metrics: rollout.TermMetrics(r.Terms)}
}

var topics = []string{
	"city gardens", "night trains", "public libraries", "river ferries", "mountain huts", "street markets",
	"solar ovens", "tide pools", "wind farms", "bicycle lanes", "village bakeries", "lighthouses",
	"school orchestras", "desert oases", "paper maps", "rain gauges", "canal locks", "bee keeping",
	"glass blowing", "ice roads", "weather balloons", "seed banks", "sign language", "tram networks",
	"coral reefs", "chess clubs", "rooftop farms", "water clocks", "harbour cranes", "moss gardens",
	"salt marshes", "clock towers", "kite festivals", "night markets", "stone bridges", "radio plays",
	"tea ceremonies", "fire lookouts", "cargo bikes", "wool mills",
}

var templates = []string{
	"Write about %s: first a short summary, then a detailed expansion.",
	"Describe %s for a curious reader.",
	"Explain why %s matter to the people who use them.",
}

// New builds a split. Procedural: every topic × template; a seeded fifth
// of the topics is kept for test.
func New(cfg Config, split string) (*Env, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if split != "train" && split != "test" {
		return nil, fmt.Errorf("writing: unknown split %q", split)
	}
	if cfg.Source == "file" {
		path := cfg.Train
		if split == "test" {
			path = cfg.Test
		}
		if path == "" {
			return nil, nil
		}
		tasks, err := loadJSONL(path, cfg.PromptField, cfg.IDField)
		if err != nil {
			return nil, err
		}
		return &Env{TaskSource: tasks, guards: cfg.Guards}, nil
	}
	perm := rollout.NewRand(rollout.DeriveSeed(cfg.Seed, 0x771)).Perm(len(topics))
	test := map[int]bool{}
	for _, i := range perm[:len(topics)/5] {
		test[i] = true
	}
	var tasks rollout.SliceSource
	for i, tp := range topics {
		if test[i] != (split == "test") {
			continue
		}
		for j, tm := range templates {
			tasks = append(tasks, rollout.Task{ID: fmt.Sprintf("writing-%d-%d", i, j), Question: fmt.Sprintf(tm, tp), Meta: map[string]string{"topic": tp}})
		}
	}
	return &Env{TaskSource: tasks, guards: cfg.Guards}, nil
}

func loadJSONL(path, field, idField string) (rollout.SliceSource, error) {
	return jsonl.Tasks("writing", path, func(line int, b string) (rollout.Task, error) {
		if err := jsonl.ObjectLine(b, `{"prompt": "…"}`); err != nil {
			return rollout.Task{}, fmt.Errorf("writing: dataset %s:%d: %w", path, line, err)
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(b), &rec); err != nil {
			return rollout.Task{}, fmt.Errorf("writing: dataset %s:%d: not a JSON object: %v", path, line, err)
		}
		p, ok := rec[field].(string)
		if !ok || strings.TrimSpace(p) == "" {
			return rollout.Task{}, fmt.Errorf("writing: dataset %s:%d: no text field %q; set env.writing.prompt_field", path, line, field)
		}
		t := rollout.Task{ID: fmt.Sprintf("%s:%d", path, line), Question: p}
		if idField != "" {
			if v, ok := rec[idField]; ok {
				t.ID = fmt.Sprint(v)
			}
		}
		return t, nil
	})
}

// UserTemplate lays out a writing prompt. From the second turn of the
// joint workflow on, it carries the agent's own earlier texts, its
// teammate's, and the reward's feedback on each earlier attempt.
const UserTemplate = `# Task
{{.Task}}
{{- with index .Extra "previous"}}

# Your earlier text
{{.}}
{{- end}}
{{- with index .Extra "teammates"}}

# Your teammate's earlier text
{{.}}
{{- end}}
{{- with index .Extra "feedback"}}

# Feedback on the team's earlier attempts
{{.}}
{{- end}}

# Your Role
{{.Role}}`

const teamSystem = "You are one of two writers who answer a prompt together. Each writer has its own part; write only yours."

func init() {
	rollout.RegisterRoles(teamSystem, UserTemplate, "free", map[string]string{
		"writing-summary":   "Write the concise summary: one or a few factual sentences, 8 to 40 words. Your teammate will expand on it.",
		"writing-expansion": "Write the detailed expansion: about two to three times as long as a short summary, covering the same points with more detail, more distinct words, and transition words (for example, however, as a result) to link the sentences.",
	})
	rollout.RegisterPreset("writing-single", rollout.Preset{
		System: "You are a writer who answers a prompt with a summary and an expansion.",
		Role:   "Write a concise summary of one or a few sentences (8 to 40 words), then a line holding only " + Marker + ", then a detailed expansion about two to three times as long that covers the same points with more distinct words and transition words.",
		User:   UserTemplate,
		Parser: "free",
	})
}

// Demonstrate writes one demonstration (see rollout.Demonstrator): a
// templated summary and an expansion that earns the full length-ratio and
// unique-word levels, or, when it should be wrong, a one-line expansion.
// The single agent's demonstration is both, split at Marker.
func (e *Env) Demonstrate(agent string, task rollout.Task, prompt string, right bool) string {
	topic := task.Meta["topic"]
	if topic == "" {
		topic = "this subject"
	}
	summary := fmt.Sprintf("%s matter because they shape how people live, travel and work together.", capitalise(topic))
	expansion := summary + fmt.Sprintf(" For example, communities build %s slowly, and each place adds its own habits. As a result, visitors notice them first; residents rely on them daily.", topic)
	if !right {
		expansion = fmt.Sprintf("%s are good.", capitalise(topic))
	}
	switch {
	case strings.Contains(prompt, "then a line holding only"):
		return summary + "\n" + Marker + "\n" + expansion
	case agent == "first" || strings.Contains(prompt, "Write the concise summary"):
		return summary
	}
	return expansion
}

func capitalise(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
