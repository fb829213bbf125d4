package config

import (
	"strings"
	"testing"
)

// models.<name>.shard: levels 0–3; refused, in one line naming the key and
// the fix, for adapters and for level 3 without activation checkpointing;
// free to change on resume (checkpoints hold the state whole).
func TestShardKeys(t *testing.T) {
	team := "agents: [{name: solver, preset: math-solver}, {name: verifier, preset: math-verifier}]\n"
	parse := func(models, extra string) (*Config, string) {
		t.Helper()
		agents := team
		if strings.HasPrefix(extra, "agents:") {
			agents = ""
		}
		y := "run: {name: t, output_dir: " + t.TempDir() + ", steps: 3}\nmodels:\n  tiny: {path: " + fakeModel(t) + models + "}\n" + agents + extra
		c, err := Parse([]byte(y), nil)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
			return nil, err.Error()
		}
		return c, ""
	}
	for _, c := range []struct{ models, extra, want string }{
		{", shard: 2", "", ""},
		{", shard: 3", "optim: {activation_checkpointing: true}\n", ""},
		{", shard: 3, shard_bucket_mib: 0.5", "optim: {activation_checkpointing: true}\n", ""},
		{", shard: 4", "", "models.tiny.shard: must be 0 (none), 1 (optimizer state), 2 (+ grads) or 3 (+ weights), got 4"},
		{", shard: -1", "", "models.tiny.shard: must be 0"},
		{", shard_bucket_mib: -2", "", "models.tiny.shard_bucket_mib: must be >= 0"},
		{", shard: 3", "", "models.tiny.shard: 3 gathers each layer's weights only while a pass uses it, which needs the checkpointed backward; set optim.activation_checkpointing: true (for agent solver), or shard: 2"},
		{", shard: 3", "agents: [{name: solver, preset: math-solver, optim: {activation_checkpointing: true}}, {name: verifier, preset: math-verifier}]\n", "(for agent verifier)"},
		{", shard: 1", "assignment: lora\n", "models.tiny.shard: 1, but agent solver trains a LoRA adapter on it (assignment: lora); adapters are not sharded"},
	} {
		_, got := parse(c.models, c.extra)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("models.tiny {%s} with %q: got error %q, want one containing %q", c.models, c.extra, got, c.want)
		}
	}

	// the level and the bucket size may change on resume
	saved, _ := parse(", shard: 1", "")
	now, _ := parse(", shard: 2, shard_bucket_mib: 8", "")
	changes, err := ResumeChanges(saved, now)
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range changes {
		if strings.HasPrefix(ch.Key, "models.tiny.shard") && ch.Trains {
			t.Errorf("%s counts as a change of what is trained", ch)
		}
	}
}
