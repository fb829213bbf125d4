// Command fixturegen writes the small fixtures of package datasets' tests
// into testdata/datasets/: for each dataset repository `train data` reads,
// a few records in that repository's schema and file layout, as
// testdata/datasets/OWNER/NAME/PATH (the layout `train data --from` reads,
// and the tests' stand-in Hub serves).
//
// Rerun from the repository root after changing them:
//
//	go run ./datasets/internal/fixturegen
//
// The records are troupe's own, written for these tests; only the column
// names, types and file paths follow the published datasets.
//
// Files: main.go (all of it).
package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/parquet-go/parquet-go"
)

const root = "testdata/datasets"

// generatedBy is stored in the Parquet files' key-value metadata.
const generatedBy = "troupe datasets/internal/fixturegen; rerun: go run ./datasets/internal/fixturegen"

func main() {
	if err := os.RemoveAll(root); err != nil {
		log.Fatal(err)
	}
	dapoFilter()
	math500()
	aime2024H4()
	aime2025MathArena()
	olympiadBench()
	amc23()
	minerva()
	polaris()
	aime2024Maxwell()
	nqHotpot()
	wiki18()
	tldr()
	humanEval()
	mbpp()
	log.Printf("wrote the fixtures under %s", root)
}

func path(repo, file string) string {
	p := filepath.Join(root, filepath.FromSlash(repo), filepath.FromSlash(file))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		log.Fatal(err)
	}
	return p
}

func writeParquet[T any](repo, file string, rows []T) {
	if err := parquet.WriteFile(path(repo, file), rows, parquet.Compression(&parquet.Snappy),
		parquet.KeyValueMetadata("generator", generatedBy)); err != nil {
		log.Fatal(err)
	}
}

func writeJSONL(repo, file string, recs []any) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for _, r := range recs {
		if err := enc.Encode(r); err != nil {
			log.Fatal(err)
		}
	}
	if err := os.WriteFile(path(repo, file), b.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
}

type message struct {
	Content string `parquet:"content"`
	Role    string `parquet:"role"`
}

// aaabiao/dapo_filter: verl rows whose one user message ends in the
// instruction drmas_math.py removes, written four ways.
func dapoFilter() {
	type reward struct {
		GroundTruth string `parquet:"ground_truth"`
		Style       string `parquet:"style"`
	}
	type extra struct {
		Index string `parquet:"index"`
	}
	type row struct {
		DataSource  string    `parquet:"data_source"`
		Prompt      []message `parquet:"prompt,list"`
		Ability     string    `parquet:"ability"`
		RewardModel reward    `parquet:"reward_model"`
		ExtraInfo   extra     `parquet:"extra_info"`
	}
	const suffix = `Let's think step by step and output the final answer within \boxed{}.`
	qs := []struct{ content, answer string }{
		{"What is the remainder when $2^{10}$ is divided by $7$?\n\n" + suffix, "2"},
		{`How many positive divisors does $36$ have?\n\n` + suffix + "\n", "9"}, // a literal \n, as some prompts hold
		{"Find $x$ if $3x - 4 = 11$. let's think step by step and output the final answer within \\boxed{}.", "5"},
		{"A square has perimeter $20$. What is its area?", "25"}, // no instruction: kept whole
	}
	var rows []row
	for i, q := range qs {
		rows = append(rows, row{DataSource: "math_dapo", Prompt: []message{{Content: q.content, Role: "user"}}, Ability: "MATH",
			RewardModel: reward{GroundTruth: q.answer, Style: "rule-lighteval/MATH_v2"}, ExtraInfo: extra{Index: fmt.Sprintf("dapo-%d", i)}})
	}
	writeParquet("aaabiao/dapo_filter", "data/train-00000-of-00001.parquet", rows)
}

// HuggingFaceH4/MATH-500: test.jsonl, 55 problems (the config takes the
// first 50 for validation).
func math500() {
	var recs []any
	for i := 0; i < 55; i++ {
		recs = append(recs, map[string]any{
			"problem":   fmt.Sprintf("What is $%d + %d$?", i, 3),
			"solution":  fmt.Sprintf("$%d + 3 = \\boxed{%d}$.", i, i+3),
			"answer":    fmt.Sprint(i + 3),
			"subject":   "Prealgebra",
			"level":     1 + i%5,
			"unique_id": fmt.Sprintf("test/prealgebra/%d.json", i),
		})
	}
	writeJSONL("HuggingFaceH4/MATH-500", "test.jsonl", recs)
}

func aime2024H4() {
	type row struct {
		ID       int64  `parquet:"id"`
		Problem  string `parquet:"problem"`
		Solution string `parquet:"solution"`
		Answer   string `parquet:"answer"`
		URL      string `parquet:"url"`
		Year     string `parquet:"year"`
	}
	rows := []row{
		{60, "Find the number of ordered pairs $(a, b)$ of digits with $a + b = 9$.", "There are $\\boxed{010}$.", "010", "https://example.invalid/aime/1", "2024"},
		{61, "Find the remainder when $1000 + 24$ is divided by $1000$.", "It is $\\boxed{024}$.", "024", "https://example.invalid/aime/2", "2024"},
		{62, "Find $100 + 11$.", "It is $\\boxed{111}$.", "111", "https://example.invalid/aime/3", "2024"},
	}
	writeParquet("HuggingFaceH4/aime_2024", "data/train-00000-of-00001.parquet", rows)
}

// MathArena/aime_2025: integer answers (the script writes str() of them).
func aime2025MathArena() {
	type row struct {
		ProblemIdx  int64    `parquet:"problem_idx"`
		Problem     string   `parquet:"problem"`
		Answer      int64    `parquet:"answer"`
		ProblemType []string `parquet:"problem_type,list"`
	}
	rows := []row{
		{1, "Find the sum of $7$ and $695$.", 702, []string{"Algebra"}},
		{2, "How many integers $n$ satisfy $1 \\le n \\le 70$?", 70, []string{"Number Theory"}},
		{3, "Find $2 \\cdot 3 \\cdot 7$.", 42, []string{"Algebra", "Number Theory"}},
	}
	writeParquet("MathArena/aime_2025", "data/train-00000-of-00001.parquet", rows)
}

// realtreetune/olympiadbench: a JSONL test file.
func olympiadBench() {
	writeJSONL("realtreetune/olympiadbench", "olympiadbench_test.jsonl", []any{
		map[string]any{"problem": "Find the smallest prime greater than $20$.", "answer": "23", "solution": "It is 23."},
		map[string]any{"problem": "Compute $\\sqrt{49}$.", "answer": "7", "solution": "It is 7."},
	})
}

// knoveleng/AMC-23: float answers (str() writes 27.0).
func amc23() {
	type row struct {
		ID      int64   `parquet:"id"`
		Problem string  `parquet:"problem"`
		Answer  float64 `parquet:"answer"`
		URL     string  `parquet:"url"`
	}
	writeParquet("knoveleng/AMC-23", "data/train-00000-of-00001.parquet", []row{
		{0, "What is $3^3$?", 27, "https://example.invalid/amc/1"},
		{1, "What is $1/4$ as a decimal?", 0.25, "https://example.invalid/amc/2"},
	})
}

func minerva() {
	type row struct {
		Problem  string `parquet:"problem"`
		Solution string `parquet:"solution"`
		Answer   string `parquet:"answer"`
	}
	writeParquet("zwhe99/simplerl-minerva-math", "data/test-00000-of-00001.parquet", []row{
		{"A car travels $60$ km in $1.5$ hours. What is its speed in km/h?", "$60/1.5 = 40$.", "40"},
		{"What is $2 \\times 10^3$?", "It is 2000.", "2000"},
	})
}

// POLARIS-Project/Polaris-Dataset-53K: one file, no split in its name
// (all train); answers that take each path of extract_solution.
func polaris() {
	type row struct {
		Problem    string `parquet:"problem"`
		Answer     string `parquet:"answer"`
		Difficulty string `parquet:"difficulty"`
	}
	writeParquet("POLARIS-Project/Polaris-Dataset-53K", "polaris-data-53K.parquet", []row{
		{"  What is $6 \\times 7$?  ", "42", "1/8"},
		{"Simplify $\\frac{6}{8}$.", "\\frac{3}{4}", "3/8"},
		{"How many metres are in a kilometre?", "1,000", "2/8"},
		{"What is $5 + 7$?", "The answer is $\\boxed{12}$.", "1/8"},
		{"What is $9 - 2$?", "#### 7", "1/8"},
	})
}

// Maxwell-Jia/AIME_2024: capitalised columns, an integer Answer.
func aime2024Maxwell() {
	type row struct {
		ID       string `parquet:"ID"`
		Problem  string `parquet:"Problem"`
		Solution string `parquet:"Solution"`
		Answer   int64  `parquet:"Answer"`
	}
	writeParquet("Maxwell-Jia/AIME_2024", "aime_2024_problems.parquet", []row{
		{"2024-I-1", "Find $200 + 4$.", "We add: $\\boxed{204}$.", 204},
		{"2024-I-2", "Find $3 \\times 25$.", "So the answer is $75$.", 75},
		{"2024-II-1", "Find $9^2$.", "It is 81.", 81},
	})
}

// PeterJinGo/nq_hotpotqa_train: Search-R1's columns; test.parquet
// interleaves its data sources so that the first 30 of each are not the
// first rows of the file.
func nqHotpot() {
	type target struct {
		Target []string `parquet:"target,list"`
	}
	type reward struct {
		GroundTruth target `parquet:"ground_truth"`
		Style       string `parquet:"style"`
	}
	type extra struct {
		Index int64  `parquet:"index"`
		Split string `parquet:"split"`
	}
	type row struct {
		ID            string    `parquet:"id"`
		Question      string    `parquet:"question"`
		GoldenAnswers []string  `parquet:"golden_answers,list"`
		DataSource    string    `parquet:"data_source"`
		Prompt        []message `parquet:"prompt,list"`
		Ability       string    `parquet:"ability"`
		RewardModel   reward    `parquet:"reward_model"`
		ExtraInfo     extra     `parquet:"extra_info"`
	}
	mk := func(split, source string, i, index int) row {
		q := fmt.Sprintf("what is the %s fact number %d?", source, i)
		a := []string{fmt.Sprintf("%s %d", source, i), fmt.Sprintf("fact %d", i)}
		return row{ID: fmt.Sprintf("%s_%d", split, index), Question: q, GoldenAnswers: a, DataSource: source,
			Prompt:  []message{{Content: "Answer the given question. Question: " + q + "\n", Role: "user"}},
			Ability: "fact-reasoning", RewardModel: reward{GroundTruth: target{a}, Style: "rule"}, ExtraInfo: extra{Index: int64(index), Split: split}}
	}
	var train []row
	for i := 0; i < 3; i++ {
		train = append(train, mk("train", "nq", i, len(train)))
	}
	for i := 0; i < 2; i++ {
		train = append(train, mk("train", "hotpotqa", i, len(train)))
	}
	writeParquet("PeterJinGo/nq_hotpotqa_train", "train.parquet", train)
	var test []row
	count := map[string]int{}
	add := func(source string, n int) {
		for k := 0; k < n; k++ {
			test = append(test, mk("test", source, count[source], len(test)))
			count[source]++
		}
	}
	add("nq", 20)
	add("hotpotqa", 5)
	add("nq", 15) // nq's 21st to 35th: the sample takes up to its 30th
	add("bamboogle", 3)
	add("hotpotqa", 30) // hotpotqa's 6th to 35th
	writeParquet("PeterJinGo/nq_hotpotqa_train", "test.parquet", test)
}

// PeterJinGo/wiki-18-corpus: wiki-18.jsonl.gz, {"id", "contents"} with
// the title on the first line of contents.
func wiki18() {
	var plain bytes.Buffer
	enc := json.NewEncoder(&plain)
	enc.SetEscapeHTML(false)
	for i, p := range []string{
		"\"Lorvan\"\nLorvan is a city on the River Esk.",
		"\"River Esk\"\nThe River Esk flows through Lorvan to the sea.",
		"\"Harbour cranes\"\nCranes load ships in the harbour of Lorvan.",
	} {
		if err := enc.Encode(map[string]string{"id": fmt.Sprint(i), "contents": p}); err != nil {
			log.Fatal(err)
		}
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(plain.Bytes())
	if err := zw.Close(); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(path("PeterJinGo/wiki-18-corpus", "wiki-18.jsonl.gz"), gz.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
}

// trl-lib/tldr: prompt and completion, three splits.
func tldr() {
	type row struct {
		Prompt     string `parquet:"prompt"`
		Completion string `parquet:"completion"`
	}
	for _, split := range []string{"train", "validation", "test"} {
		var rows []row
		for i := 0; i < 3; i++ {
			rows = append(rows, row{
				Prompt:     fmt.Sprintf("SUBREDDIT: r/tifu\n\nTITLE: %s post %d\n\nPOST: My bicycle chain came off on the way to work & I was late.\n\nTL;DR:", split, i),
				Completion: fmt.Sprintf(" %s %d: chain off, late to work.", split, i),
			})
		}
		writeParquet("trl-lib/tldr", "data/"+split+"-00000-of-00001.parquet", rows)
	}
}

// openai/openai_humaneval: 40 tasks (CoMLRL's cut takes 33 onwards for
// training and the first 32 for evaluation).
func humanEval() {
	type row struct {
		TaskID            string `parquet:"task_id"`
		Prompt            string `parquet:"prompt"`
		CanonicalSolution string `parquet:"canonical_solution"`
		Test              string `parquet:"test"`
		EntryPoint        string `parquet:"entry_point"`
	}
	var rows []row
	for i := 0; i < 40; i++ {
		name := fmt.Sprintf("add_%d", i)
		rows = append(rows, row{
			TaskID:            fmt.Sprintf("HumanEval/%d", i),
			Prompt:            fmt.Sprintf("\n\ndef %s(x: int) -> int:\n    \"\"\" Return x plus %d.\n    >>> %s(1)\n    %d\n    \"\"\"\n", name, i, name, i+1),
			CanonicalSolution: fmt.Sprintf("    return x + %d\n", i),
			Test:              fmt.Sprintf("\n\nMETADATA = {}\n\n\ndef check(candidate):\n    assert candidate(1) == %d\n    assert candidate(-%d) == 0\n", i+1, i),
			EntryPoint:        name,
		})
	}
	writeParquet("openai/openai_humaneval", "openai_humaneval/test-00000-of-00001.parquet", rows)
}

// google-research-datasets/mbpp: the full config's four splits and the
// sanitized config beside it (which the command must not read).
func mbpp() {
	type full struct {
		TaskID            int32    `parquet:"task_id"`
		Text              string   `parquet:"text"`
		Code              string   `parquet:"code"`
		TestList          []string `parquet:"test_list,list"`
		TestSetupCode     string   `parquet:"test_setup_code"`
		ChallengeTestList []string `parquet:"challenge_test_list,list"`
	}
	type sanitized struct {
		SourceFile  string   `parquet:"source_file"`
		TaskID      int32    `parquet:"task_id"`
		Prompt      string   `parquet:"prompt"`
		Code        string   `parquet:"code"`
		TestImports []string `parquet:"test_imports,list"`
		TestList    []string `parquet:"test_list,list"`
	}
	splits := []struct {
		name  string
		first int32
		n     int
	}{{"train", 601, 3}, {"test", 11, 4}, {"validation", 511, 2}, {"prompt", 1, 2}}
	for _, sp := range splits {
		var rows []full
		var san []sanitized
		for k := 0; k < sp.n; k++ {
			id := sp.first + int32(k)
			name := fmt.Sprintf("triple_%d", id)
			code := fmt.Sprintf("def %s(n):\n    return 3 * n + %d", name, id%7)
			tests := []string{fmt.Sprintf("assert %s(1) == %d", name, 3+id%7), fmt.Sprintf("assert %s(0) == %d", name, id%7)}
			rows = append(rows, full{TaskID: id, Text: fmt.Sprintf("Write a function to return three times n plus %d.", id%7),
				Code: code, TestList: tests, ChallengeTestList: []string{}})
			san = append(san, sanitized{SourceFile: "Benchmark Questions Verification V2.ipynb", TaskID: id,
				Prompt: "Write a function that triples n.", Code: code, TestImports: []string{}, TestList: tests})
		}
		writeParquet("google-research-datasets/mbpp", "full/"+sp.name+"-00000-of-00001.parquet", rows)
		if sp.name == "train" || sp.name == "test" {
			writeParquet("google-research-datasets/mbpp", "sanitized/"+sp.name+"-00000-of-00001.parquet", san)
		}
	}
}
