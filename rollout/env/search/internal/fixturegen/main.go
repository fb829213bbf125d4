// Command fixturegen writes the small dataset fixtures of the search
// environment's tests into testdata/search/: questions in Search-R1's NQ /
// HotpotQA layouts (Parquet and JSONL) and a passage corpus in its JSONL
// layout ({"id", "contents": "Title\ntext"}).
//
// Rerun from the repository root after changing the questions:
//
//	go run ./rollout/env/search/internal/fixturegen
//
// The questions and passages are troupe's own, written for these tests.
//
// Files: main.go (all of it).
package main

import (
	"encoding/json"
	"log"
	"os"
	"path/filepath"

	"github.com/parquet-go/parquet-go"
)

const generatedBy = "troupe rollout/env/search/internal/fixturegen; rerun: go run ./rollout/env/search/internal/fixturegen"

type question struct {
	ID       string
	Question string
	Golds    []string
	Source   string
}

var questions = []question{
	{"train_0", "what river flows through the city of lorvan", []string{"Esk", "the River Esk"}, "nq"},
	{"train_1", "who designed the bridge of seven arches", []string{"Mara Quell"}, "nq"},
	{"train_2", "in which year was the lorvan observatory opened", []string{"1861"}, "hotpotqa"},
	{"train_3", "the architect of the seven arches bridge was born in which town", []string{"Tessford"}, "hotpotqa"},
}

var corpus = []struct{ ID, Contents string }{
	{"0", "\"Lorvan\"\nLorvan is a harbour city on the River Esk. Its observatory opened in 1861."},
	{"1", "\"Bridge of Seven Arches\"\nThe Bridge of Seven Arches crosses the Esk at Lorvan. It was designed by Mara Quell."},
	{"2", "\"Mara Quell\"\nMara Quell was an engineer and architect, born in Tessford."},
	{"3", "\"Tessford\"\nTessford is a market town known for its wool trade."},
}

type message struct {
	Role    string `parquet:"role"`
	Content string `parquet:"content"`
}

type groundTruth struct {
	Target []string `parquet:"target,list"`
}

type rewardModel struct {
	GroundTruth groundTruth `parquet:"ground_truth"`
	Style       string      `parquet:"style"`
}

type extraInfo struct {
	Split string `parquet:"split"`
	Index int64  `parquet:"index"`
}

// row is the layout of Search-R1's nq_search / hotpotqa parquet files.
type row struct {
	ID            string      `parquet:"id"`
	Question      string      `parquet:"question"`
	GoldenAnswers []string    `parquet:"golden_answers,list"`
	DataSource    string      `parquet:"data_source"`
	Prompt        []message   `parquet:"prompt,list"`
	Ability       string      `parquet:"ability"`
	RewardModel   rewardModel `parquet:"reward_model"`
	ExtraInfo     extraInfo   `parquet:"extra_info"`
}

type jsonlRow struct {
	ID            string   `json:"id"`
	Question      string   `json:"question"`
	GoldenAnswers []string `json:"golden_answers"`
	DataSource    string   `json:"data_source"`
}

func main() {
	dir := filepath.Join("testdata", "search")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		log.Fatal(err)
	}
	var rows []row
	f, err := os.Create(filepath.Join(dir, "qa_tiny.jsonl"))
	if err != nil {
		log.Fatal(err)
	}
	enc := json.NewEncoder(f)
	enc.SetEscapeHTML(false)
	for i, q := range questions {
		rows = append(rows, row{
			ID: q.ID, Question: q.Question, GoldenAnswers: q.Golds, DataSource: q.Source,
			Prompt:      []message{{Role: "user", Content: "Answer the given question. Question: " + q.Question}},
			Ability:     "fact-reasoning",
			RewardModel: rewardModel{GroundTruth: groundTruth{Target: q.Golds}, Style: "rule"},
			ExtraInfo:   extraInfo{Split: "train", Index: int64(i)},
		})
		if err := enc.Encode(jsonlRow{ID: q.ID, Question: q.Question, GoldenAnswers: q.Golds, DataSource: q.Source}); err != nil {
			log.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
	header := parquet.KeyValueMetadata("generator", generatedBy)
	if err := parquet.WriteFile(filepath.Join(dir, "qa_tiny.parquet"), rows, header); err != nil {
		log.Fatal(err)
	}
	c, err := os.Create(filepath.Join(dir, "corpus_tiny.jsonl"))
	if err != nil {
		log.Fatal(err)
	}
	enc = json.NewEncoder(c)
	enc.SetEscapeHTML(false)
	for _, d := range corpus {
		if err := enc.Encode(map[string]string{"id": d.ID, "contents": d.Contents}); err != nil {
			log.Fatal(err)
		}
	}
	if err := c.Close(); err != nil {
		log.Fatal(err)
	}
	log.Printf("wrote %d questions and %d passages to %s", len(questions), len(corpus), dir)
}
