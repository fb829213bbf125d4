package math

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"troupe/rollout"
)

const fixtures = "../../../testdata/math/"

func load(t *testing.T, name string, f Fields) rollout.SliceSource {
	t.Helper()
	src, err := Load(fixtures+name, f)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func TestLoadJSONLWithDefaultFields(t *testing.T) {
	src := load(t, "tiny.jsonl", Fields{})
	if src.Len() != 6 {
		t.Fatalf("%d tasks, want 6", src.Len())
	}
	if got := src.Task(2); got.Question != `Simplify $\frac{6}{8}$.` || got.Answer != `\frac{3}{4}` || got.ID != "tiny.jsonl:3" {
		t.Errorf("task 2 = %+v", got)
	}
	withID := load(t, "tiny.jsonl", Fields{ID: "unique_id"})
	if withID.Task(5).ID != "tiny-5" {
		t.Errorf("id field: %q", withID.Task(5).ID)
	}
}

// A corrupt Parquet file is an error naming it, never a panic.
func TestCorruptParquetIsAnError(t *testing.T) {
	dir := t.TempDir()
	good, err := os.ReadFile(fixtures + "tiny_flat.parquet")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 40 {
		var data []byte
		switch i % 3 {
		case 0: // random bytes
			data = make([]byte, 100+rng.IntN(3000))
			for j := range data {
				data[j] = byte(rng.Uint32())
			}
		case 1: // truncated
			data = good[:rng.IntN(len(good))]
		default: // bytes flipped
			data = append([]byte(nil), good...)
			for range 1 + rng.IntN(8) {
				data[rng.IntN(len(data))] ^= byte(1 + rng.IntN(255))
			}
		}
		path := filepath.Join(dir, fmt.Sprintf("bad%d.parquet", i))
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("case %d: panic: %v", i, r)
				}
			}()
			if _, err := Load(path, Fields{}); err == nil && i%3 != 2 {
				t.Errorf("case %d: a corrupt file loaded without an error", i)
			}
		}()
	}
}

func TestParquetMatchesJSONL(t *testing.T) {
	jsonl := load(t, "tiny.jsonl", Fields{ID: "unique_id"})
	verl := load(t, "tiny_verl.parquet", Fields{Question: "prompt.-1.content", Answer: "reward_model.ground_truth"})
	if verl.Len() != jsonl.Len() {
		t.Fatalf("verl parquet has %d tasks, jsonl %d", verl.Len(), jsonl.Len())
	}
	for i := range jsonl {
		if verl[i].Question != jsonl[i].Question || verl[i].Answer != jsonl[i].Answer {
			t.Errorf("row %d: parquet (%q, %q) vs jsonl (%q, %q)", i, verl[i].Question, verl[i].Answer, jsonl[i].Question, jsonl[i].Answer)
		}
	}
	flat := load(t, "tiny_flat.parquet", Fields{ID: "id"})
	want := []rollout.Task{jsonl[0], jsonl[1], jsonl[3], jsonl[4]} // the integer answers; INT64 → text
	for i := range want {
		if flat[i].Question != want[i].Question || flat[i].Answer != want[i].Answer || flat[i].ID != want[i].ID {
			t.Errorf("flat row %d = %+v, want %+v", i, flat[i], want[i])
		}
	}
	if _, err := Load(fixtures+"tiny_verl.parquet", Fields{}); err == nil ||
		!strings.Contains(err.Error(), "none of the fields question, problem is present; set env.math.fields.question") ||
		!strings.Contains(err.Error(), "keys here: data_source, extra_info, prompt, reward_model") {
		t.Errorf("missing field error: %v", err)
	}
}

func TestLoadJSONArrayListsAndErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	arr := write("a.json", `[{"q": {"text": "Who?"}, "golden_answers": ["Ada", "Ada Lovelace"], "n": 7},
	                         {"q": {"text": "How many?"}, "golden_answers": [12345678901234567890], "n": 8}]`)
	src, err := Load(arr, Fields{Question: "q.text", ID: "n"})
	if err != nil {
		t.Fatal(err)
	}
	if got := src.Task(0); got.Answer != "Ada" || !reflect.DeepEqual(got.Answers, []string{"Ada Lovelace"}) || got.ID != "7" {
		t.Errorf("list answer: %+v", got)
	}
	if got := src.Task(1).Answer; got != "12345678901234567890" {
		t.Errorf("big JSON number kept as text: %q", got)
	}
	for _, tc := range []struct {
		name, text string
		f          Fields
		want       string
	}{
		{"bad.jsonl", "{\"question\": \"a\", \"answer\": \"1\"}\n{oops\n", Fields{}, "bad.jsonl:2: not a JSON object"},
		{"empty.jsonl", "\n\n", Fields{}, "no records"},
		{"noq.jsonl", `{"problem": "", "answer": "1"}`, Fields{}, `question "problem" is empty`},
		{"obj.jsonl", `{"question": {"a": 1}, "answer": "1"}`, Fields{}, `question "question": is an object, want text or a number`},
		{"noid.jsonl", `{"question": "q", "answer": "1"}`, Fields{ID: "uid"}, `id "uid": missing; fix env.math.fields.id (keys here: answer, question)`},
		{"d.csv", "q,a\n", Fields{}, `unknown format ".csv"; use a .jsonl, .json or .parquet file`},
	} {
		_, err := Load(write(tc.name, tc.text), tc.f)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestEnvSplits(t *testing.T) {
	env, err := New(DefaultConfig(), SplitTest)
	if err != nil {
		t.Fatal(err)
	}
	if env.Name() != "math" || env.Len() != 500 {
		t.Errorf("procedural test split: name %q, %d tasks", env.Name(), env.Len())
	}
	task := env.Task(3)
	if s := env.Score(task, `\boxed{`+task.Answer+`}`); s.Reward != 1 {
		t.Errorf("the gold answer boxed scores %g", s.Reward)
	}
	cfg := Config{Source: "file", Train: fixtures + "tiny.jsonl"}
	fileEnv, err := New(cfg, SplitTrain)
	if err != nil || fileEnv.Len() != 6 {
		t.Fatalf("file env: %v", err)
	}
	if _, err := New(cfg, SplitTest); err == nil || !strings.Contains(err.Error(), "env.math.test: no dataset file for the test split") {
		t.Errorf("missing test file error: %v", err)
	}
	if _, err := New(Config{Source: "hub"}, SplitTrain); err == nil || !strings.Contains(err.Error(), `env.math.source: must be "procedural" or "file", got "hub"`) {
		t.Errorf("bad source error: %v", err)
	}
}
