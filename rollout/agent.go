// agent.go — an agent: a name, the model it runs on, its prompts, its
// sampling parameters and its output parser.
//
// What it is: AgentConfig (the YAML shape, validated with errors that name
// the key and the fix), and Agent, which renders a fresh [system, user] chat
// per call from PromptData — as Dr. MAS does; history reaches an agent only
// as text in its user prompt (the team context).
//
// What it deliberately is not: a conversation. There is no multi-turn chat
// state; a workflow that wants one puts it into PromptData.
package rollout

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"text/template"
	"troupe/gen"
)

// AgentConfig is an agent's configuration. Empty prompt fields take the
// preset's; unset sampling fields and MaxNewTokens take the run's defaults.
type AgentConfig struct {
	Name          string           `yaml:"name"`           // unique within the team; rows carry it
	Model         string           `yaml:"model"`          // the trained model this agent runs on
	Preset        string           `yaml:"preset"`         // built-in prompts: see PresetNames
	System        string           `yaml:"system"`         // system message template
	Role          string           `yaml:"role"`           // role text template (.Role in the user template)
	User          string           `yaml:"user"`           // user prompt template; default DefaultUserTemplate
	Parser        string           `yaml:"parser"`         // output parser: see ParserNames
	Sampling      SamplingOverride `yaml:"sampling"`       // per-agent overrides of the run's sampling
	MaxNewTokens  int              `yaml:"max_new_tokens"` // 0 = the run's default
	FormatPenalty float64          `yaml:"format_penalty"` // subtracted from this agent's reward when its output is invalid
	RewardScale   float64          `yaml:"reward_scale"`   // multiplies the team reward credited to this agent; 0 = 1
	RewardOffset  float64          `yaml:"reward_offset"`  // added to the team reward credited to this agent, after reward_scale; 0 = none
	Thinking      bool             `yaml:"thinking"`       // chat template's thinking mode (Qwen3 enable_thinking); read by the Binding's maker, not by rollout
	ChatDate      string           `yaml:"chat_date"`      // Llama 3.1+ templates' "Today Date", written "26 Jul 2024" ("" = that date); read by the Binding's maker
}

// SamplingOverride replaces the fields that are set.
type SamplingOverride struct {
	Temperature *float64 `yaml:"temperature"`
	TopP        *float64 `yaml:"top_p"`
	TopK        *int     `yaml:"top_k"`
	// RepetitionPenalty is the agent's training repetition penalty
	// (PettingLLMs: 1.2); evaluation keeps eval.sampling's.
	RepetitionPenalty *float64 `yaml:"repetition_penalty"`
}

// Apply returns base with the set fields replaced.
func (o SamplingOverride) Apply(base Sampling) Sampling {
	if o.Temperature != nil {
		base.Temperature = *o.Temperature
	}
	if o.TopP != nil {
		base.TopP = *o.TopP
	}
	if o.TopK != nil {
		base.TopK = *o.TopK
	}
	if o.RepetitionPenalty != nil {
		base.RepetitionPenalty = *o.RepetitionPenalty
	}
	return base
}

// AgentDefaults are the run-wide values an agent config may override.
type AgentDefaults struct {
	Sampling     Sampling
	MaxNewTokens int
}

// Binding connects an agent to its model's tokenizer: the chat template,
// the codec, and the ids that end a response (e.g. <|im_end|>, <|endoftext|>).
type Binding struct {
	Chat  ChatRenderer
	Codec Codec
	Stop  []int
}

// TeamEntry is one earlier output shown to an agent.
type TeamEntry struct {
	Agent string
	Text  string
}

// String renders the entry the Dr. MAS way.
func (e TeamEntry) String() string { return fmt.Sprintf("The output of %q: %s", e.Agent, e.Text) }

// PromptData is what prompt templates see.
type PromptData struct {
	Task        string            // .Task: the task's question
	TeamContext string            // .TeamContext: the Teammates entries, one paragraph each; "" if none
	Teammates   []TeamEntry       // .Teammates: earlier outputs, oldest first
	Step        int               // .Step: 0-based turn of the episode at which this agent acts
	Loop        int               // .Loop: 0-based refinement loop (math-refine); equals .Step elsewhere
	MaxLoops    int               // .MaxLoops: loop limit of the workflow (0 if none)
	Agent       string            // .Agent: this agent's name
	Role        string            // .Role: the rendered role text (user template only)
	Extra       map[string]string // .Extra: workflow- or environment-specific fields (e.g. retrieved passages)
	// History holds earlier turns of this agent's own conversation (user
	// and assistant messages, tool output as "tool"), rendered between the
	// system message and the new user message. Empty: a fresh
	// [system, user] chat, as Dr. MAS's agents have.
	History []Message
}

// NewPromptData fills TeamContext from entries.
func NewPromptData(task string, entries []TeamEntry, step int) PromptData {
	parts := make([]string, len(entries))
	for i, e := range entries {
		parts[i] = e.String()
	}
	return PromptData{
		Task:        task,
		TeamContext: strings.Join(parts, "\n\n"),
		Teammates:   append([]TeamEntry(nil), entries...),
		Step:        step,
		Loop:        step,
	}
}

// Agent is a compiled agent. It is immutable and safe for concurrent use
// (provided its Binding is).
type Agent struct {
	Name          string
	Model         string
	Sampling      Sampling
	MaxNewTokens  int
	FormatPenalty float64
	RewardScale   float64 // > 0; 1 unless configured
	RewardOffset  float64 // finite; 0 unless configured
	Parser        Parser
	Stop          []int

	system, role, user *template.Template
	chat               ChatRenderer
	codec              Codec
}

// NewAgent validates cfg and compiles its templates. path names the agent in
// errors (e.g. "agents[1]").
func NewAgent(path string, cfg AgentConfig, def AgentDefaults, bind Binding) (*Agent, error) {
	if path == "" {
		path = "agent"
	}
	if cfg.Name == "" {
		return nil, fmt.Errorf("%s.name: must be set (rows and metrics are keyed by it)", path)
	}
	if cfg.Model == "" {
		return nil, fmt.Errorf("%s.model: must name the model agent %q runs on", path, cfg.Name)
	}
	if bind.Chat == nil || bind.Codec == nil {
		return nil, fmt.Errorf("%s: agent %q has no chat renderer or codec bound; bind model %q's tokenizer", path, cfg.Name, cfg.Model)
	}
	var pre Preset
	if cfg.Preset != "" {
		p, err := PresetByName(cfg.Preset)
		if err != nil {
			return nil, fmt.Errorf("%s.preset: %w", path, err)
		}
		pre = p
	}
	pick := func(v, d string) string {
		if v != "" {
			return v
		}
		return d
	}
	systemText := pick(cfg.System, pre.System)
	roleText := pick(cfg.Role, pre.Role)
	userText := pick(cfg.User, pick(pre.User, DefaultUserTemplate))
	parserName := pick(cfg.Parser, pick(pre.Parser, "free"))
	if roleText == "" && cfg.User == "" {
		return nil, fmt.Errorf("%s: agent %q has no role text; set %s.role, %s.user or a %s.preset (one of %s)",
			path, cfg.Name, path, path, path, strings.Join(PresetNames(), ", "))
	}
	a := &Agent{
		Name:          cfg.Name,
		Model:         cfg.Model,
		Sampling:      cfg.Sampling.Apply(def.Sampling),
		MaxNewTokens:  cfg.MaxNewTokens,
		FormatPenalty: cfg.FormatPenalty,
		RewardScale:   cfg.RewardScale,
		RewardOffset:  cfg.RewardOffset,
		Stop:          append([]int(nil), bind.Stop...),
		chat:          bind.Chat,
		codec:         bind.Codec,
	}
	if a.MaxNewTokens == 0 {
		a.MaxNewTokens = def.MaxNewTokens
	}
	if a.MaxNewTokens <= 0 {
		return nil, fmt.Errorf("%s.max_new_tokens: must be > 0 (or set the run default), got %d", path, a.MaxNewTokens)
	}
	if err := a.Sampling.Validate(); err != nil {
		return nil, fmt.Errorf("%s.%w", path, err)
	}
	if !(cfg.FormatPenalty >= 0) || math.IsInf(cfg.FormatPenalty, 0) {
		return nil, fmt.Errorf("%s.format_penalty: must be a finite number >= 0 (it is subtracted), got %g", path, cfg.FormatPenalty)
	}
	if a.RewardScale == 0 {
		a.RewardScale = 1
	}
	if !(a.RewardScale > 0) || math.IsInf(a.RewardScale, 0) {
		return nil, fmt.Errorf("%s.reward_scale: must be a finite number > 0 (0 or unset = 1), got %g", path, cfg.RewardScale)
	}
	if math.IsNaN(a.RewardOffset) || math.IsInf(a.RewardOffset, 0) {
		return nil, fmt.Errorf("%s.reward_offset: must be a finite number (0 or unset = none), got %g", path, cfg.RewardOffset)
	}
	p, err := ParserByName(parserName)
	if err != nil {
		return nil, fmt.Errorf("%s.parser: %w", path, err)
	}
	a.Parser = p
	for _, t := range []struct {
		key  string
		text string
		dst  **template.Template
	}{{"system", systemText, &a.system}, {"role", roleText, &a.role}, {"user", userText, &a.user}} {
		tpl, err := template.New(cfg.Name + "." + t.key).Option("missingkey=error").Parse(t.text)
		if err != nil {
			return nil, fmt.Errorf("%s.%s: bad template: %w", path, t.key, err)
		}
		// Render once with sample data so a misspelt field fails at load time.
		if err := tpl.Execute(&bytes.Buffer{}, PromptData{Task: "t", Agent: cfg.Name}); err != nil {
			return nil, fmt.Errorf("%s.%s: template does not render (fields are .Task .TeamContext .Teammates .Step .Loop .MaxLoops .Agent .Role .Extra): %w", path, t.key, err)
		}
		*t.dst = tpl
	}
	return a, nil
}

// NewAgents compiles a team. bind makes each agent's Binding from its
// config (the training loop looks up the model's tokenizer and wraps its chat
// template with cfg.Thinking). Errors name the agent by its index.
func NewAgents(cfgs []AgentConfig, def AgentDefaults, bind func(cfg AgentConfig) (Binding, error)) ([]*Agent, error) {
	if len(cfgs) == 0 {
		return nil, fmt.Errorf("agents: none configured; a workflow needs at least one agent")
	}
	agents := make([]*Agent, 0, len(cfgs))
	seen := map[string]bool{}
	for i, c := range cfgs {
		path := fmt.Sprintf("agents[%d]", i)
		if seen[c.Name] {
			return nil, fmt.Errorf("%s.name: %q is used twice; agent names must be unique", path, c.Name)
		}
		seen[c.Name] = true
		b, err := bind(c)
		if err != nil {
			return nil, fmt.Errorf("%s: binding model %q: %w", path, c.Model, err)
		}
		a, err := NewAgent(path, c, def, b)
		if err != nil {
			return nil, err
		}
		agents = append(agents, a)
	}
	return agents, nil
}

// Messages renders the system and user messages for one call.
func (a *Agent) Messages(d PromptData) (system, user string, err error) {
	d.Agent = a.Name
	var buf bytes.Buffer
	if err := a.role.Execute(&buf, d); err != nil {
		return "", "", fmt.Errorf("agent %q: role template: %w", a.Name, err)
	}
	d.Role = buf.String()
	buf.Reset()
	if err := a.system.Execute(&buf, d); err != nil {
		return "", "", fmt.Errorf("agent %q: system template: %w", a.Name, err)
	}
	system = buf.String()
	buf.Reset()
	if err := a.user.Execute(&buf, d); err != nil {
		return "", "", fmt.Errorf("agent %q: user template: %w", a.Name, err)
	}
	return system, buf.String(), nil
}

// Render renders the chat for one call and encodes it.
func (a *Agent) Render(d PromptData) (text string, tokens []int, err error) {
	system, user, err := a.Messages(d)
	if err != nil {
		return "", nil, err
	}
	msgs := make([]Message, 0, len(d.History)+2)
	msgs = append(msgs, Message{Role: "system", Content: system})
	msgs = append(msgs, d.History...)
	msgs = append(msgs, Message{Role: "user", Content: user})
	text, err = a.chat(msgs)
	if err != nil {
		return "", nil, fmt.Errorf("agent %q: chat template: %w", a.Name, err)
	}
	return text, a.codec.Encode(text), nil
}

// Decode turns generated ids into response text, leaving out a final stop
// token (it stays in the row's ResponseTokens, so the model learns to stop).
func (a *Agent) Decode(tokens []int, finish gen.Finish) string {
	if finish == gen.FinishStop && len(tokens) > 0 {
		tokens = tokens[:len(tokens)-1]
	}
	return a.codec.Decode(tokens)
}
