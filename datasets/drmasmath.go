package datasets

// drmasmath.go — drmas-math: Dr. MAS's math data as its
// examples/data_preprocess/drmas_math.py writes it (langfengQ/DrMAS at
// 19c632b), in verl's Parquet layout: every row holds data_source,
// ability, reward_model {ground_truth, style}, prompt [{role: user,
// content: the question}], extra_info {split, index, answer, question} and
// env_kwargs {ground_truth, question, data_source}. The config reads
// prompt.-1.content and reward_model.ground_truth.
//
//   - train.parquet: aaabiao/dapo_filter's train split, data_source
//     "dapo_filter"; each prompt must be one message, whose content loses
//     the trailing "Let's think step by step and output the final answer
//     within \boxed{}." (the script's regular expression, case-insensitive,
//     with any newlines, literal "\n" and spaces before it); a prompt that
//     still holds the phrase is refused, as the script asserts. The
//     source's reward_model is kept; its ground_truth is extra_info.answer.
//   - test_sampled.parquet: MATH-500's first 50 (data_source
//     "math500_first50"), AIME 2024 ("aime24"), AIME 2025 ("aime25").
//   - test.parquet: MATH-500 ("math500"), AIME 2024, AIME 2025,
//     OlympiadBench ("olympiadbench"), AMC 2023 ("amc23"), Minerva
//     ("minerva"). A test row's question is the source's problem, its
//     ground truth str() of the source's answer (an int 73 is "73"),
//     reward_model.style "rule"; extra_info.index counts within each source.
//
// Departure: the script's output also keeps each source's columns it did
// not pop (MATH-500's solution, subject, level, unique_id; AIME's id, url,
// …), null where a concatenated source lacks them. These files hold the
// six columns above, the ones verl, Dr. MAS and troupe read.

import (
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/parquet-go/parquet-go"
)

// The dataset repositories drmas_math.py loads.
const (
	repoDAPOFilter      = "aaabiao/dapo_filter"
	repoMATH500         = "HuggingFaceH4/MATH-500"
	repoAIME24H4        = "HuggingFaceH4/aime_2024"
	repoAIME25MathArena = "MathArena/aime_2025"
	repoOlympiadBench   = "realtreetune/olympiadbench"
	repoAMC23           = "knoveleng/AMC-23"
	repoMinerva         = "zwhe99/simplerl-minerva-math"
)

type verlMessage struct {
	Role    string `parquet:"role"`
	Content string `parquet:"content"`
}

type verlReward struct {
	GroundTruth string `parquet:"ground_truth"`
	Style       string `parquet:"style"`
}

type verlExtra struct {
	Split    string `parquet:"split"`
	Index    int64  `parquet:"index"`
	Answer   string `parquet:"answer"`
	Question string `parquet:"question"`
}

type verlEnvKwargs struct {
	GroundTruth string `parquet:"ground_truth"`
	Question    string `parquet:"question"`
	DataSource  string `parquet:"data_source"`
}

// verlRow is one row of drmas_math.py's output.
type verlRow struct {
	DataSource  string        `parquet:"data_source"`
	Ability     string        `parquet:"ability"`
	RewardModel verlReward    `parquet:"reward_model"`
	Prompt      []verlMessage `parquet:"prompt,list"`
	ExtraInfo   verlExtra     `parquet:"extra_info"`
	EnvKwargs   verlEnvKwargs `parquet:"env_kwargs"`
}

func newVerlRow(dataSource, ability, split string, index int, question, groundTruth, style string) verlRow {
	return verlRow{
		DataSource:  dataSource,
		Ability:     ability,
		RewardModel: verlReward{GroundTruth: groundTruth, Style: style},
		Prompt:      []verlMessage{{Role: "user", Content: question}},
		ExtraInfo:   verlExtra{Split: split, Index: int64(index), Answer: groundTruth, Question: question},
		EnvKwargs:   verlEnvKwargs{GroundTruth: groundTruth, Question: question, DataSource: dataSource},
	}
}

// instructionSuffix is the instruction drmas_math.py removes from the end
// of a dapo_filter prompt.
var instructionSuffix = regexp.MustCompile(`(?i)(\r?\n|\\n)*\s*Let'?s\s+think\s+step\s+by\s+step\s+and\s+output\s+the\s+final\s+answer\s+within\s*\\boxed\{\}\.\s*$`)

func drmasTrain(j *job, w io.Writer) (int64, error) {
	recs, err := j.splitRecords(repoDAPOFilter, "", "train")
	if err != nil {
		return 0, err
	}
	rows := make([]verlRow, 0, len(recs))
	for i, r := range recs {
		row, err := dapoRow(r, i)
		if err != nil {
			return 0, fmt.Errorf("%s row %d: %w", repoDAPOFilter, i, err)
		}
		rows = append(rows, row)
	}
	return writeParquet(w, rows)
}

// dapoRow converts one dapo_filter record.
func dapoRow(r record, index int) (verlRow, error) {
	pv, ok := r.get("prompt")
	msgs, isList := pv.([]any)
	if !ok || !isList {
		return verlRow{}, fmt.Errorf("no prompt list (columns: %s)", strings.Join(r.keys, ", "))
	}
	if len(msgs) != 1 {
		return verlRow{}, fmt.Errorf("prompt holds %d messages; the reference's preprocessing takes exactly one", len(msgs))
	}
	msg, _ := msgs[0].(map[string]any)
	content, ok := msg["content"]
	if !ok {
		return verlRow{}, fmt.Errorf("prompt[0] has no content")
	}
	question := instructionSuffix.ReplaceAllString(pyStr(content), "")
	if strings.Contains(question, "Let's think step by step and output") {
		return verlRow{}, fmt.Errorf("the prompt still holds the instruction after its suffix is removed: %.80q", question)
	}
	rm, _ := r.vals["reward_model"].(map[string]any)
	gt, ok := rm["ground_truth"]
	if !ok {
		return verlRow{}, fmt.Errorf("no reward_model.ground_truth (columns: %s)", strings.Join(r.keys, ", "))
	}
	style := ""
	if s, ok := rm["style"]; ok && s != nil {
		style = pyStr(s)
	}
	ability, err := r.text("ability")
	if err != nil {
		return verlRow{}, err
	}
	return newVerlRow("dapo_filter", ability, "train", index, question, pyStr(gt), style), nil
}

// testSource is one evaluation set drmas_math.py concatenates.
type testSource struct {
	repo, split, dataSource string
	limit                   int // the first limit rows; 0 for all
}

var (
	math500First50 = testSource{repoMATH500, "test", "math500_first50", 50}
	math500        = testSource{repoMATH500, "test", "math500", 0}
	aime24         = testSource{repoAIME24H4, "train", "aime24", 0}
	aime25         = testSource{repoAIME25MathArena, "train", "aime25", 0}
	olympiadBench  = testSource{repoOlympiadBench, "test", "olympiadbench", 0}
	amc23          = testSource{repoAMC23, "train", "amc23", 0}
	minerva        = testSource{repoMinerva, "test", "minerva", 0}
)

func drmasTestSampled(j *job, w io.Writer) (int64, error) {
	return drmasTestSets(j, w, math500First50, aime24, aime25)
}

func drmasTest(j *job, w io.Writer) (int64, error) {
	return drmasTestSets(j, w, math500, aime24, aime25, olympiadBench, amc23, minerva)
}

func drmasTestSets(j *job, w io.Writer, sets ...testSource) (int64, error) {
	var rows []verlRow
	for _, ts := range sets {
		recs, err := j.splitRecords(ts.repo, "", ts.split)
		if err != nil {
			return 0, err
		}
		if ts.limit > 0 && len(recs) > ts.limit {
			recs = recs[:ts.limit]
		}
		for i, r := range recs {
			question, err := r.text("problem")
			if err != nil {
				return 0, fmt.Errorf("%s row %d: %w", ts.repo, i, err)
			}
			answer, err := r.text("answer")
			if err != nil {
				return 0, fmt.Errorf("%s row %d: %w", ts.repo, i, err)
			}
			rows = append(rows, newVerlRow(ts.dataSource, "math", "test", i, question, answer, "rule"))
		}
	}
	return writeParquet(w, rows)
}

// writeParquet writes rows as one Parquet file (Snappy, as pandas and
// the datasets library write).
func writeParquet[T any](w io.Writer, rows []T) (int64, error) {
	pw := parquet.NewGenericWriter[T](w, parquet.Compression(&parquet.Snappy),
		parquet.KeyValueMetadata("writer", "troupe datasets (bin/train data)"))
	if _, err := pw.Write(rows); err != nil {
		return 0, err
	}
	if err := pw.Close(); err != nil {
		return 0, err
	}
	return int64(len(rows)), nil
}
