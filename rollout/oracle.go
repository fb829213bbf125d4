// oracle.go — demonstration writers for `train sft`: the response an
// informed agent gives to one prompt, found by workflow and environment name.
//
// What it is: the Oracle type, the Draw it takes its random choices from,
// the Demonstrator interface an environment may implement, and OracleFor,
// which picks the writer of a (workflow, environment) pair from the
// registries: the workflow's own (WorkflowSpec.Oracle: search's roles are
// the workflow's), else the environment's (a Demonstrator, or
// EnvironmentSpec.Oracle). train sft names neither package.
//
// What it is not: a model. An oracle reads the gold answer from the task;
// the point of the demonstrations is the format and the roles.
package rollout

import "fmt"

// Oracle writes one demonstration: the response agent (the acting agent's
// name) gives to prompt (its rendered chat) on task. draw decides, when the
// oracle asks, whether the demonstration is right, and any further random
// choice (a nearby wrong number).
type Oracle func(agent string, task Task, prompt string, draw *Draw) string

// Draw is the random source of a batch of demonstrations.
type Draw struct {
	*Rand
	PCorrect float64 // probability that Right is true (train sft --p-correct)
}

// Right draws whether a demonstration is correct.
func (d *Draw) Right() bool { return d.Float64() < d.PCorrect }

// Demonstrator is implemented by environments that can write the
// demonstration `train sft` trains an agent on: the response an informed
// agent would give to prompt (right: a correct one; else a typical mistake).
type Demonstrator interface {
	Demonstrate(agent string, task Task, prompt string, right bool) string
}

// OracleFor returns the demonstration writer of workflow (with its options
// opts) playing in the environment envName (built as env): the workflow's
// Oracle, else env's Demonstrate, else the environment's registered Oracle.
// Each of the first two draws Right once per demonstration.
func OracleFor(workflow string, opts any, envName string, env Environment) (Oracle, error) {
	ws, err := WorkflowOf(workflow)
	if err != nil {
		return nil, err
	}
	if o := ws.Oracle; o != nil {
		return func(agent string, task Task, prompt string, d *Draw) string {
			return o(opts, agent, task, prompt, d.Right())
		}, nil
	}
	if dm, ok := env.(Demonstrator); ok {
		return func(agent string, task Task, prompt string, d *Draw) string {
			return dm.Demonstrate(agent, task, prompt, d.Right())
		}, nil
	}
	es, err := EnvironmentOf(envName)
	if err != nil {
		return nil, err
	}
	if es.Oracle == nil {
		return nil, fmt.Errorf("workflow %q in environment %q: neither writes demonstrations (no WorkflowSpec.Oracle, Demonstrator or EnvironmentSpec.Oracle); warm the model up elsewhere and point models.<name>.path at it", workflow, envName)
	}
	return es.Oracle, nil
}
