// Command fixturegen writes the small dataset fixtures of the math
// environment's tests into testdata/math/: a MATH-style JSONL file, and the
// same problems as two Parquet files — a flat one (problem, integer answer)
// and one in the verl layout (chat prompt list, reward_model.ground_truth).
//
// Rerun from the repository root after changing the problems:
//
//	go run ./rollout/env/math/internal/fixturegen
//
// The problems are troupe's own, written for these tests.
//
// Files: main.go (all of it).
package main

import (
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/parquet-go/parquet-go"
)

// generatedBy is stored in the Parquet files' key-value metadata.
const generatedBy = "troupe rollout/env/math/internal/fixturegen; rerun: go run ./rollout/env/math/internal/fixturegen"

type problem struct {
	ID       string
	Question string
	Answer   string
	Level    int
}

var problems = []problem{
	{"tiny-0", "What is $17 + 25$?", "42", 1},
	{"tiny-1", "A box holds 12 eggs. How many eggs are in 7 boxes?", "84", 1},
	{"tiny-2", `Simplify $\frac{6}{8}$.`, `\frac{3}{4}`, 2},
	{"tiny-3", "What is $-3 \\times 5 + 4$?", "-11", 2},
	{"tiny-4", "A rectangle has sides 2.5 cm and 4 cm. What is its area in square centimetres?", "10", 2},
	{"tiny-5", "Find $x$ if $2x + 3 = 10$.", `\frac{7}{2}`, 3},
}

type jsonlRecord struct {
	Problem  string `json:"problem"`
	Answer   string `json:"answer"`
	UniqueID string `json:"unique_id"`
	Level    int    `json:"level"`
}

type flatRow struct {
	Problem string `parquet:"problem"`
	Answer  int64  `parquet:"answer"`
	ID      string `parquet:"id"`
}

type message struct {
	Role    string `parquet:"role"`
	Content string `parquet:"content"`
}

type rewardModel struct {
	GroundTruth string `parquet:"ground_truth"`
	Style       string `parquet:"style"`
}

type extraInfo struct {
	Index int64 `parquet:"index"`
}

type verlRow struct {
	DataSource  string      `parquet:"data_source"`
	Prompt      []message   `parquet:"prompt,list"`
	RewardModel rewardModel `parquet:"reward_model"`
	ExtraInfo   extraInfo   `parquet:"extra_info"`
}

func main() {
	dir := filepath.Join("testdata", "math")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		log.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "tiny.jsonl"))
	if err != nil {
		log.Fatal(err)
	}
	enc := json.NewEncoder(f)
	enc.SetEscapeHTML(false)
	var flat []flatRow
	var verl []verlRow
	for i, p := range problems {
		if err := enc.Encode(jsonlRecord{Problem: p.Question, Answer: p.Answer, UniqueID: p.ID, Level: p.Level}); err != nil {
			log.Fatal(err)
		}
		var n int64
		if _, err := fmt.Sscan(p.Answer, &n); err == nil && fmt.Sprint(n) == p.Answer {
			flat = append(flat, flatRow{Problem: p.Question, Answer: n, ID: p.ID})
		}
		verl = append(verl, verlRow{
			DataSource: "troupe-tiny",
			Prompt: []message{
				{Role: "system", Content: "Solve the problem."},
				{Role: "user", Content: p.Question},
			},
			RewardModel: rewardModel{GroundTruth: p.Answer, Style: "rule"},
			ExtraInfo:   extraInfo{Index: int64(i)},
		})
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
	header := parquet.KeyValueMetadata("generator", generatedBy)
	if err := parquet.WriteFile(filepath.Join(dir, "tiny_flat.parquet"), flat, header); err != nil {
		log.Fatal(err)
	}
	if err := parquet.WriteFile(filepath.Join(dir, "tiny_verl.parquet"), verl, header); err != nil {
		log.Fatal(err)
	}
	log.Printf("wrote %d problems (%d with integer answers) to %s", len(problems), len(flat), dir)
}
