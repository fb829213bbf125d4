package datasets

// jsonlsets.go — the sets written as JSONL, one source record a line with
// its columns in the source's order:
//
//   - atgrpo-code: MBPP, google-research-datasets/mbpp's "full" config
//     (task_id, text, code, test_list, test_setup_code,
//     challenge_test_list), its train split (374 tasks, ids 601–974) and
//     test split (500, ids 11–510), as google-research's mbpp.jsonl splits
//     it. The config's coding reader takes text and test_list.
//   - magrpo-writing: trl-lib/tldr's train[:1100] and test[:1100], the
//     splits CoMLRL's magrpo_tldr_config.yaml names (prompt, completion);
//     the config reads prompt.
//   - magrpo-coding: openai/openai_humaneval's test split cut as CoMLRL's
//     magrpo_he_config.yaml cuts it: test[33:163] for training and
//     test[:32] for evaluation (task_id, prompt, canonical_solution, test,
//     entry_point).
//
// A slice past the end of a split stops at its end, as the datasets
// library's split slicing does.

import (
	"bufio"
	"io"
)

// The dataset repositories of the JSONL sets.
const (
	repoMBPP      = "google-research-datasets/mbpp"
	repoTLDR      = "trl-lib/tldr"
	repoHumanEval = "openai/openai_humaneval"
)

func mbppSplit(split string) func(j *job, w io.Writer) (int64, error) {
	return func(j *job, w io.Writer) (int64, error) {
		recs, err := j.splitRecords(repoMBPP, "full", split)
		if err != nil {
			return 0, err
		}
		return writeJSONL(w, recs)
	}
}

func tldrSplit(split string) func(j *job, w io.Writer) (int64, error) {
	return func(j *job, w io.Writer) (int64, error) {
		recs, err := j.splitRecords(repoTLDR, "", split)
		if err != nil {
			return 0, err
		}
		return writeJSONL(w, sliceRows(recs, 0, 1100))
	}
}

func humanevalRows(from, to int) func(j *job, w io.Writer) (int64, error) {
	return func(j *job, w io.Writer) (int64, error) {
		recs, err := j.splitRecords(repoHumanEval, "", "test")
		if err != nil {
			return 0, err
		}
		return writeJSONL(w, sliceRows(recs, from, to))
	}
}

// sliceRows is Python's recs[from:to] for from, to >= 0.
func sliceRows(recs []record, from, to int) []record {
	to = min(to, len(recs))
	from = min(from, to)
	return recs[from:to]
}

func writeJSONL(w io.Writer, recs []record) (int64, error) {
	bw := bufio.NewWriter(w)
	for _, r := range recs {
		b, err := r.MarshalJSON()
		if err != nil {
			return 0, err
		}
		bw.Write(b)
		bw.WriteByte('\n')
	}
	return int64(len(recs)), bw.Flush()
}
