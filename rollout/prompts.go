// prompts.go — prompt presets: the math team's (math-solver, math-verifier,
// math-single), the preset registry plug-ins add theirs to
// (RegisterPreset, RegisterRoles), and the template pieces they share
// (TeamAndRole, FeedbackUserTemplate).
//
// What it is: the default system message, role text, user template and
// parser of each preset role, in the layout of the Dr. MAS orchestras —
// markdown sections "# Task Introduction", "# Your Teammates' Outputs"
// (only when there are any) and "# Your Role", with teammates' outputs as
// `The output of "<agent>": <text>` (see TeamEntry).
//
// What it deliberately is not: the reference prompts. The wording here is
// troupe's own; only the structure follows the paper. Every field can be
// replaced from the config.
package rollout

import (
	"fmt"
	"sort"
	"strings"

	"troupe/internal/suggest"
)

// TeamAndRole ends a user template: the teammates' outputs (only when
// there are any), then the agent's role. Environments' templates end with
// it too.
const TeamAndRole = `{{- if .TeamContext}}

# Your Teammates' Outputs
{{.TeamContext}}
{{- end}}

# Your Role
{{.Role}}`

// FeedbackUserTemplate lays out the prompt of an agent in a cooperative
// task (a JointScorer's): intro and the task, the feedback on the team's
// last attempt when there is any (JointResult.Feedback, which the joint
// workflow passes as .Extra.feedback), then the role.
func FeedbackUserTemplate(intro string) string {
	return "# Task\n" + intro + "{{.Task}}\n{{- with index .Extra \"feedback\"}}\n\n# Feedback on the team's last attempt\n{{.}}\n{{- end}}\n\n# Your Role\n{{.Role}}"
}

// DefaultUserTemplate is the user prompt used when an agent config sets
// none. Fields: see PromptData.
const DefaultUserTemplate = "# Task Introduction\n{{.Task}}\n" + TeamAndRole

// Preset is a named set of prompt defaults for one kind of agent.
type Preset struct {
	System string // system message template
	Role   string // role text template, rendered into the user prompt as .Role
	User   string // user prompt template
	Parser string // output parser name (see ParserByName)
}

const mathTeamSystem = "You are one member of a small team that solves mathematics problems together. Each member has its own role; follow yours exactly."

var presets = map[string]Preset{
	"math-solver": {
		System: mathTeamSystem,
		Role: `You are the Solver.
{{- if .TeamContext}} Read your teammates' outputs above: if a reviewer found a mistake, correct it; if the earlier attempt was right, you may keep its answer, but re-derive it.{{end}}
Work through the problem step by step, checking each calculation as you go.
Finish with the final answer alone inside \boxed{}, for example \boxed{42}.`,
		User:   DefaultUserTemplate,
		Parser: "boxed",
	},
	"math-verifier": {
		System: mathTeamSystem,
		Role: `You are the Verifier. Review the most recent solution above.
Re-check every step and every calculation, and make sure the boxed answer answers the question actually asked.
If you find an error, name the first one and explain briefly why it is wrong.
End with exactly one verdict on its own line: <verify>approve</verify> if the solution is correct, or <verify>reject</verify> if it is not.`,
		User:   DefaultUserTemplate,
		Parser: "verdict",
	},
	"math-single": {
		System: "You are a careful assistant who solves mathematics problems.",
		Role: `Solve the problem step by step, checking each calculation as you go.
Finish with the final answer alone inside \boxed{}, for example \boxed{42}.`,
		User:   DefaultUserTemplate,
		Parser: "boxed",
	},
}

// PresetNames lists the built-in presets.
func PresetNames() []string {
	names := make([]string, 0, len(presets))
	for n := range presets {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// PresetByName returns a built-in preset.
func PresetByName(name string) (Preset, error) {
	p, ok := presets[name]
	if !ok {
		return Preset{}, fmt.Errorf("unknown preset %q%s; use one of %s", name, suggest.DidYouMean(name, PresetNames()), strings.Join(PresetNames(), ", "))
	}
	return p, nil
}

// RegisterRoles registers one preset per role of a team whose members
// share a system message, a user template and a parser: roles maps each
// preset's name to its role text.
func RegisterRoles(system, user, parser string, roles map[string]string) {
	for name, role := range roles {
		RegisterPreset(name, Preset{System: system, Role: role, User: user, Parser: parser})
	}
}

// RegisterPreset adds a preset; a plug-in package calls it from init.
// Registering a name twice is a programming error and panics.
func RegisterPreset(name string, p Preset) {
	if _, dup := presets[name]; dup {
		panic(fmt.Sprintf("rollout: preset %q registered twice", name))
	}
	presets[name] = p
}
