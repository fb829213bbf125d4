// Package writing is MAGRPO's cooperative writing environment: two agents
// answer one writing prompt together, the first with a concise summary, the
// second with a detailed expansion, and one joint reward scores the pair.
//
// Files: writing.go (options, tasks, the joint reward, the two roles'
// presets and demonstrations), register.go (the registration).
//
// The joint reward is level-gated, as CoMLRL's is, with troupe's own terms
// (each reported as a metric, reward/<term>):
//
//	structure     1.0  both texts have 8–256 words, neither repeats one word
//	                   more than max(2, n/5) times in its n, and in neither
//	                   are more than a quarter of the three-word sequences
//	                   repeats of earlier ones, and at most 1 in 20 of its
//	                   whitespace-separated tokens holds a character other than
//	                   letters, digits and ordinary punctuation   (else the rest is 0)
//	length_ratio  1.0  words(expansion) / words(summary) in [1.6, 3.2]
//	unique_words  0.5  the expansion has at least twice the summary's distinct words
//	coherence     0.5  at least half of the summary's content words (4+ letters)
//	                   reappear in the expansion
//
// so the maximum is 3.0, and the pair succeeds when it reaches it. The
// feedback for the next turn names every check that failed.
//
// Departure from CoMLRL's terms: the repetition gate. Without it a small
// policy learns to pass every check with word salad — a summary of three
// distinct words repeated ("matter because matter matter …") makes the
// expansion's distinct-word and overlap checks trivial; a LoRA run of the
// demo reached 92 % "success" that way, and with the word gate alone it
// learned to loop one phrase ("matter because they shape how people live
// matter because they …") to 96 %. Natural text's most frequent word is a
// few percent of it, and it seldom repeats a three-word sequence. Past both
// gates the policy emitted byte soup ("ehouslicain\x02 times\ufffd{U"), whose
// fragments pass the distinct-word check: hence the malformed-token gate.
//
// Tasks: JSONL files with a configurable prompt field (e.g. TLDR-style
// posts to summarise and expand), or a procedural set of topics with
// disjoint train and test topics, so the environment runs offline.
package writing

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"

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

// Term weights.
const (
	StructureWeight   = 1.0
	LengthRatioWeight = 1.0
	UniqueWordsWeight = 0.5
	CoherenceWeight   = 0.5
	MaxReward         = StructureWeight + LengthRatioWeight + UniqueWordsWeight + CoherenceWeight
)

func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\'' })
}

// mostFrequent is the most frequent word and its count (the first in
// order on ties).
func mostFrequent(ws []string) (string, int) {
	count := map[string]int{}
	best, n := "", 0
	for _, w := range ws {
		count[w]++
		if count[w] > n {
			best, n = w, count[w]
		}
	}
	return best, n
}

// malformedTokens counts the whitespace-separated tokens of text holding a
// character other than a letter, a digit or ordinary punctuation, out of all.
func malformedTokens(text string) (bad, all int) {
	for _, tok := range strings.Fields(text) {
		all++
		for _, r := range tok {
			if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune(".,;:!?'\"()-–—/%&", r) {
				bad++
				break
			}
		}
	}
	return bad, all
}

// repeatedTrigrams counts the three-word sequences of ws that repeat an
// earlier one, out of all of them.
func repeatedTrigrams(ws []string) (repeats, all int) {
	seen := map[[3]string]bool{}
	for i := 0; i+2 < len(ws); i++ {
		k := [3]string{ws[i], ws[i+1], ws[i+2]}
		if seen[k] {
			repeats++
		}
		seen[k] = true
		all++
	}
	return repeats, all
}

// Reward scores a (summary, expansion) pair and returns its terms and the
// checks that failed.
func Reward(summary, expansion string) (terms map[string]float64, failed []string) {
	terms = map[string]float64{"structure": 0, "length_ratio": 0, "unique_words": 0, "coherence": 0}
	sw, ew := words(summary), words(expansion)
	for _, c := range []struct {
		who  string
		text string
		ws   []string
	}{{"summary", summary, sw}, {"expansion", expansion, ew}} {
		n := len(c.ws)
		if n < 8 || n > 256 {
			failed = append(failed, fmt.Sprintf("the %s has %d words; write 8 to 256", c.who, n))
			continue
		}
		if w, k := mostFrequent(c.ws); k > max(2, n/5) {
			failed = append(failed, fmt.Sprintf("the %s repeats %q %d times in %d words; vary the wording", c.who, w, k, n))
		} else if r, all := repeatedTrigrams(c.ws); 4*r > all {
			failed = append(failed, fmt.Sprintf("the %s repeats its phrases (%d of its %d three-word sequences are repeats); say each thing once", c.who, r, all))
		} else if bad, all := malformedTokens(c.text); 20*bad > all {
			failed = append(failed, fmt.Sprintf("the %s has %d malformed tokens of %d (stray symbols or control characters); write plain words", c.who, bad, all))
		}
	}
	if len(failed) > 0 {
		return terms, failed
	}
	terms["structure"] = StructureWeight
	ratio := float64(len(ew)) / float64(len(sw))
	if ratio >= 1.6 && ratio <= 3.2 {
		terms["length_ratio"] = LengthRatioWeight
	} else {
		failed = append(failed, fmt.Sprintf("the expansion is %.1f× the summary's length; aim for 1.6× to 3.2×", ratio))
	}
	distinct := func(ws []string) map[string]bool {
		m := map[string]bool{}
		for _, w := range ws {
			m[w] = true
		}
		return m
	}
	sd, ed := distinct(sw), distinct(ew)
	if len(ed) >= 2*len(sd) {
		terms["unique_words"] = UniqueWordsWeight
	} else {
		failed = append(failed, fmt.Sprintf("the expansion uses %d distinct words, the summary %d; the expansion should use at least twice as many", len(ed), len(sd)))
	}
	content, kept := 0, 0
	for w := range sd {
		if len([]rune(w)) >= 4 {
			content++
			if ed[w] {
				kept++
			}
		}
	}
	if content > 0 && 2*kept >= content {
		terms["coherence"] = CoherenceWeight
	} else {
		failed = append(failed, fmt.Sprintf("only %d of the summary's %d content words reappear in the expansion; expand the same points", kept, content))
	}
	return terms, failed
}

// Env is the writing environment for one split.
type Env struct {
	rollout.TaskSource
}

func (*Env) Name() string { return "writing" }

// JointScore scores [summary, expansion].
func (e *Env) JointScore(_ rollout.Task, _ int, outputs []string) rollout.JointResult {
	if len(outputs) != 2 {
		return rollout.JointResult{Feedback: fmt.Sprintf("writing needs two texts, got %d", len(outputs))}
	}
	terms, failed := Reward(outputs[0], outputs[1])
	total := 0.0
	for _, v := range terms {
		total += v
	}
	fb := "Every check passed."
	if len(failed) > 0 {
		fb = "To improve: " + strings.Join(failed, "; ") + "."
	}
	return rollout.JointResult{Reward: total, Success: total == MaxReward, Feedback: fb, Terms: terms}
}

// Score judges a single text as an expansion of itself: not meaningful for
// one agent, so always 0 (the joint workflow uses JointScore).
func (e *Env) Score(rollout.Task, string) rollout.Score { return rollout.Score{} }

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
		return &Env{TaskSource: tasks}, nil
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
	return &Env{TaskSource: tasks}, nil
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

// UserTemplate lays out a writing prompt.
var UserTemplate = rollout.FeedbackUserTemplate("")

const teamSystem = "You are one of two writers who answer a prompt together. Each writer has its own part; write only yours."

func init() {
	rollout.RegisterRoles(teamSystem, UserTemplate, "free", map[string]string{
		"writing-summary":   "Write the concise summary: one or two sentences, 8 to 40 words. Your teammate will expand on it.",
		"writing-expansion": "Write the detailed expansion: about two to three times as long as a short summary, covering the same points with more detail and varied words.",
	})
}

// Demonstrate writes one demonstration (see rollout.Demonstrator): a
// templated summary and an expansion that passes every check, or, when it
// should be wrong, a one-line expansion.
func (e *Env) Demonstrate(agent string, task rollout.Task, prompt string, right bool) string {
	topic := task.Meta["topic"]
	if topic == "" {
		topic = "this subject"
	}
	summary := fmt.Sprintf("%s matter because they shape how people live, travel and work together.", capitalise(topic))
	if agent == "first" || strings.Contains(prompt, "Write the concise summary") {
		return summary
	}
	if !right {
		return fmt.Sprintf("%s are good.", capitalise(topic))
	}
	return summary + fmt.Sprintf(" Communities build %s slowly, over generations, and each place adds its own habits and stories. Visitors notice them first; residents rely on them daily.", topic)
}

func capitalise(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
