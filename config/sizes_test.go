package config

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// shapedModel is a model directory whose config.json says its hidden size
// and positions (the only fields the size checks read).
func shapedModel(t *testing.T, hidden, positions int) string {
	t.Helper()
	dir := t.TempDir()
	cfg := []byte(`{"hidden_size": ` + strconv.Itoa(hidden) + `, "max_position_embeddings": ` + strconv.Itoa(positions) + `}`)
	if err := os.WriteFile(filepath.Join(dir, "config.json"), cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tokenizer.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestSizesBeyondTheMachineOrTheModel: every size-like key that cannot fit
// the machine's memory, the model's positions or its width is refused in
// one line naming the key; the shipped sizes pass.
func TestSizesBeyondTheMachineOrTheModel(t *testing.T) {
	was := machineMemory
	machineMemory = func() float64 { return 16 << 30 }
	t.Cleanup(func() { machineMemory = was })
	model := shapedModel(t, 64, 4096)
	shipped := func(name string) string {
		data, err := os.ReadFile(filepath.Join("..", "configs", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	math := base(t)
	planpath, sokoban, search := shipped("atgrpo-planpath-tiny.yaml"), shipped("atgrpo-sokoban-tiny.yaml"), shipped("drmas-search-tiny.yaml")
	for _, c := range []struct {
		doc  string
		set  string
		want string // "" = accepted
	}{
		{math, "", ""},
		{planpath, "", ""},
		{sokoban, "", ""},
		{search, "", ""},
		{math, "env.math.procedural.train_size=100000000000", "env.math.procedural.train_size: 100000000000 needs at least 11920.9 GiB to hold"},
		{math, "env.math.procedural.test_size=1000000000000", "env.math.procedural.test_size: 1000000000000 needs at least"},
		{search, "env.search.synthetic.people=100000000000", "env.search.synthetic.people: 100000000000 needs at least"},
		{search, "env.search.synthetic.cities=90000000000", "env.search.synthetic.cities"},
		{planpath, "env.plan_path.train_size=10000000000", "env.plan_path.train_size: 10000000000 needs at least 1424.9 GiB to hold (153 bytes per instance of a 5 × 5 grid)"},
		{planpath, "env.plan_path.test_size=1000000000", "(153 bytes per instance"},
		{sokoban, "env.sokoban.train_size=1000000000", "env.sokoban.train_size: 1000000000 needs at least 152.7 GiB to hold (164 bytes per instance of a 6 × 6 board)"},
		{math, "max_new_tokens=100000", `max_new_tokens: 100000 tokens, but model "tiny"`},
		{math, "max_new_tokens=4096", "use fewer than 4096"},
		{math, "agents[1].max_new_tokens=9000", "agents[1].max_new_tokens: 9000 tokens"},
		{math, "engine.max_seq_len=5000", "engine.max_seq_len: 5000"},
		{math + "assignment: lora\n", "lora.rank=100000", `lora.rank: 100000 exceeds model "tiny"'s hidden_size 64`},
		{math + "assignment: lora\n", "agents[1].lora.rank=65", "agents[1].lora.rank: 65 exceeds"},
		{math + "assignment: lora\n", "lora.rank=64", ""},
		{planpath, "agents[0].preset=sokoban-tool", `agents[0].preset: "sokoban-tool" is a preset of environment "sokoban", but env.name is "plan-path"; use one of plan-path-plan, plan-path-tool`},
		{search, "agents[1].preset=math-verifier", `agents[1].preset: "math-verifier" is a preset of environment "math"`},
		{math, "agents[0].preset=search-answer", `is a preset of environment "search", but env.name is "math"`},
	} {
		sets := []string{"models.tiny.path=" + model, "run.output_dir=" + t.TempDir()}
		if c.set != "" {
			sets = append(sets, c.set)
		}
		_, err := parse([]byte(c.doc), sets, allFiles)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: refused: %v", c.set, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want %q", c.set, err, c.want)
		case err != nil && strings.Contains(err.Error(), "\n"):
			t.Errorf("%s: more than one line: %q", c.set, err)
		}
	}
}

func TestOutputDirThatCannotBeCreated(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for set, want := range map[string]string{
		"run.output_dir=" + file:                                 "run.output_dir: " + file + " is a file, not a directory; set run.output_dir to a directory (--set run.output_dir=DIR)",
		"run.output_dir=" + filepath.Join(file, "run", "deeper"): "run.output_dir: " + filepath.Join(file, "run", "deeper") + " cannot be created: " + file + " is a file",
		"run.output_dir=" + filepath.Join(dir, "new", "run"):     "",
	} {
		_, err := Parse([]byte(base(t)), []string{set})
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("%s: %v, want %q", set, err, want)
		}
	}
}
