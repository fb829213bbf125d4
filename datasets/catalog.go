package datasets

// catalog.go — the names `train data` knows: one per shipped real-size
// config family, each with the files it writes (paths as the configs name
// them, relative to --out), what each holds and the dataset repositories it
// is made from; and CommandFor, the command that writes a given path (for
// the config's "file not found").

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
)

// Set is one name's data.
type Set struct {
	Name    string
	Configs []string // the shipped configs that read it
	Summary string
	Outputs []Output
	Note    string // why there is nothing to download, when there is not
}

// Output is one file a set writes.
type Output struct {
	Path     string   // slash-separated, relative to --out: the config's path
	What     string   // what it holds, its source and size
	Sources  []string // the dataset repositories it is made from
	Optional bool     // written only with --corpus
	make     func(j *job, w io.Writer) (rows int64, err error)
}

// Sets are every name, in the order `train data list` prints them.
var Sets = []*Set{
	{
		Name:    "drmas-math",
		Configs: []string{"configs/drmas-math-qwen3-4b.yaml"},
		Summary: "Dr. MAS's math data as its examples/data_preprocess/drmas_math.py writes it (verl's Parquet layout)",
		Outputs: []Output{
			{Path: "data/drmas_math/train.parquet", What: "the training set: every row of aaabiao/dapo_filter (Dr. MAS's DAPO-Math-17k filter), its prompts' instruction suffix removed",
				Sources: []string{repoDAPOFilter}, make: drmasTrain},
			{Path: "data/drmas_math/test_sampled.parquet", What: "validation, 110 rows: MATH-500's first 50, AIME 2024's 30, AIME 2025's 30",
				Sources: []string{repoMATH500, repoAIME24H4, repoAIME25MathArena}, make: drmasTestSampled},
			{Path: "data/drmas_math/test.parquet", What: "the final evaluation: MATH-500 (500), AIME 2024 (30), AIME 2025 (30), OlympiadBench, AMC 2023 (40), Minerva (272)",
				Sources: []string{repoMATH500, repoAIME24H4, repoAIME25MathArena, repoOlympiadBench, repoAMC23, repoMinerva}, make: drmasTest},
		},
	},
	{
		Name:    "atgrpo-math",
		Configs: []string{"configs/atgrpo-math-qwen3-1.7b.yaml"},
		Summary: "PettingLLMs' math data as its scripts/dataprocess/load_math.py writes it (question, solution)",
		Outputs: []Output{
			{Path: "data/pettingllms/polaris.parquet", What: "the training set: POLARIS-Project/Polaris-Dataset-53K (about 53K rows)",
				Sources: []string{repoPolaris}, make: pettingPolaris},
			{Path: "data/pettingllms/AIME24.parquet", What: "the test set: Maxwell-Jia/AIME_2024 (30 rows)",
				Sources: []string{repoAIME24Maxwell}, make: pettingAIME24},
		},
	},
	{
		Name:    "atgrpo-code",
		Configs: []string{"configs/atgrpo-code-qwen3-1.7b.yaml"},
		Summary: "MBPP (text, code, test_list) as JSONL, one record a line",
		Outputs: []Output{
			{Path: "data/mbpp-train.jsonl", What: "google-research-datasets/mbpp, full, train split (374 rows)",
				Sources: []string{repoMBPP}, make: mbppSplit("train")},
			{Path: "data/mbpp-test.jsonl", What: "google-research-datasets/mbpp, full, test split (500 rows)",
				Sources: []string{repoMBPP}, make: mbppSplit("test")},
		},
	},
	{
		Name:    "drmas-search",
		Configs: []string{"configs/drmas-search-qwen2.5-3b.yaml", "configs/drmas-search-mixed-llama3.2-qwen2.5.yaml"},
		Summary: "Search-R1's NQ + HotpotQA files as its preprocessing wrote them, and Dr. MAS's validation sample of them",
		Outputs: []Output{
			{Path: "data/search-r1/nq_hotpotqa_train.parquet", What: "PeterJinGo/nq_hotpotqa_train's train.parquet as published: NQ + HotpotQA train (about 170K rows)",
				Sources: []string{repoNQHotpot}, make: searchCopy("train.parquet")},
			{Path: "data/search-r1/nq_hotpotqa_test.parquet", What: "its test.parquet as published: the test sets of NQ, TriviaQA, PopQA, HotpotQA, 2Wiki, MuSiQue and Bamboogle (about 52K rows)",
				Sources: []string{repoNQHotpot}, make: searchCopy("test.parquet")},
			{Path: "data/search-r1/nq_hotpotqa_test_sampled.parquet", What: "validation: the first 30 rows of each data source of test.parquet (210 rows), as Dr. MAS's drmas_search.py samples them",
				Sources: []string{repoNQHotpot}, make: searchSampled},
			{Path: "data/search-r1/wiki-18.jsonl", What: "with --corpus: Search-R1's 2018 Wikipedia corpus for `train serve --corpus` (PeterJinGo/wiki-18-corpus, 21M passages, over 10 GB)",
				Sources: []string{repoWiki18}, Optional: true, make: searchCorpus},
		},
	},
	{
		Name:    "magrpo-writing",
		Configs: []string{"configs/magrpo-writing-qwen3-1.7b.yaml"},
		Summary: "CoMLRL's TLDR splits (LLM_Collab_Writing magrpo_tldr_config.yaml) as JSONL with the prompt field",
		Outputs: []Output{
			{Path: "data/tldr-train.jsonl", What: "trl-lib/tldr train[:1100]", Sources: []string{repoTLDR}, make: tldrSplit("train")},
			{Path: "data/tldr-test.jsonl", What: "trl-lib/tldr test[:1100]", Sources: []string{repoTLDR}, make: tldrSplit("test")},
		},
	},
	{
		Name:    "magrpo-coding",
		Configs: []string{"configs/magrpo-coding-qwen2.5-coder.yaml"},
		Summary: "CoMLRL's HumanEval splits (LLM_Collab_Code_Generation magrpo_he_config.yaml) as JSONL, one HumanEval record a line",
		Outputs: []Output{
			{Path: "data/humaneval-train.jsonl", What: "openai/openai_humaneval test[33:163] (130 rows)", Sources: []string{repoHumanEval}, make: humanevalRows(33, 163)},
			{Path: "data/humaneval-test.jsonl", What: "openai/openai_humaneval test[:32] (32 rows)", Sources: []string{repoHumanEval}, make: humanevalRows(0, 32)},
		},
	},
	{
		Name:    "planpath",
		Configs: []string{"configs/atgrpo-planpath-qwen3-1.7b.yaml", "configs/atgrpo-planpath-pettingllms.yaml"},
		Summary: "nothing to download",
		Note:    "the Plan-Path grids are generated when the run starts, from env.plan_path (seed, rows, cols, wall_prob, train_size, test_size), as PettingLLMs' code generates them",
	},
}

// Lookup returns the set with the name.
func Lookup(name string) (*Set, error) {
	var names []string
	for _, s := range Sets {
		if s.Name == name {
			return s, nil
		}
		names = append(names, s.Name)
	}
	return nil, fmt.Errorf("data: no dataset %q; the names are %s (bin/train data list says what each writes)", name, strings.Join(names, ", "))
}

// List writes what `train data list` prints: each name, the configs that
// read it, and each file with what it holds.
func List(w io.Writer) {
	for i, s := range Sets {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s: %s\n  for %s\n", s.Name, s.Summary, strings.Join(s.Configs, ", "))
		if len(s.Outputs) == 0 {
			fmt.Fprintf(w, "  %s\n", s.Note)
		}
		for _, o := range s.Outputs {
			fmt.Fprintf(w, "  %s\n      %s\n", o.Path, o.What)
		}
	}
}

// CommandFor returns the command that writes the file a config names at
// path (as written in the config, relative to the working directory or
// absolute), with the --out directory it needs: for
// "data/drmas_math/train.parquet", "bin/train data drmas-math --out .".
func CommandFor(path string) (string, bool) {
	p := filepath.ToSlash(filepath.Clean(path))
	for _, s := range Sets {
		for _, o := range s.Outputs {
			dir := ""
			switch {
			case p == o.Path:
				dir = "."
			case strings.HasSuffix(p, "/"+o.Path):
				if dir = strings.TrimSuffix(p, "/"+o.Path); dir == "" {
					dir = "/"
				}
			default:
				continue
			}
			cmd := "bin/train data " + s.Name + " --out " + shellQuote(filepath.FromSlash(dir))
			if o.Optional {
				cmd += " --corpus"
			}
			return cmd, true
		}
	}
	return "", false
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+=:,@", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
