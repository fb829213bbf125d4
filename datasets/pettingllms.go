package datasets

// pettingllms.go — atgrpo-math: PettingLLMs' math data as its
// scripts/dataprocess/load_math.py writes it, two string columns per row:
// question (the first present, non-null column of the question keys, str()
// and stripped) and solution (extract_solution of the first present
// answer column). The config's math reader takes question and solution by
// default.
//
//   - polaris.parquet: POLARIS-Project/Polaris-Dataset-53K, its first
//     split of train, test, validation, dev; question keys problem,
//     question, prompt, Problem; answer keys answer, final_answer,
//     solution, Solution, Answer.
//   - AIME24.parquet: Maxwell-Jia/AIME_2024, its first split of test,
//     validation, dev, train; answer keys Answer, answer, final_answer,
//     solution, Solution.
//
// extract_solution, in order: the text after "####" (commas removed); the
// first \boxed{…} without nested braces; the text after "final answer:" or
// "answer:" (any case); a last line of at most 20 characters of
// [A-Za-z0-9-+*/.^,_] (commas removed); else the whole text, stripped.
//
// Departure: at 244467e (the commit the config follows) AIME 2024's answer
// keys put Solution before Answer, so its ground truths were extracted from
// the worked solutions' text; the script's current version (a054fb1) takes
// the Answer column first, as here.

import (
	"fmt"
	"io"
	"regexp"
	"strings"
)

// The dataset repositories load_math.py loads for the config's two files.
const (
	repoPolaris       = "POLARIS-Project/Polaris-Dataset-53K"
	repoAIME24Maxwell = "Maxwell-Jia/AIME_2024"
)

// pettingRow is one row of load_math.py's output.
type pettingRow struct {
	Question string `parquet:"question"`
	Solution string `parquet:"solution"`
}

var (
	pettingQuestionKeys = []string{"problem", "question", "prompt", "Problem"}
	polarisAnswerKeys   = []string{"answer", "final_answer", "solution", "Solution", "Answer"}
	aimeAnswerKeys      = []string{"Answer", "answer", "final_answer", "solution", "Solution"}
)

func pettingPolaris(j *job, w io.Writer) (int64, error) {
	return pettingStandardize(j, w, repoPolaris, []string{"train", "test", "validation", "dev"}, polarisAnswerKeys)
}

func pettingAIME24(j *job, w io.Writer) (int64, error) {
	return pettingStandardize(j, w, repoAIME24Maxwell, []string{"test", "validation", "dev", "train"}, aimeAnswerKeys)
}

// pettingStandardize is load_math.py's standardize_hf_dataset over the
// first split of prefer the repository has.
func pettingStandardize(j *job, w io.Writer, repo string, prefer, answerKeys []string) (int64, error) {
	s, err := j.snapshot(repo)
	if err != nil {
		return 0, err
	}
	split := ""
	for _, sp := range prefer {
		if _, err := splitFiles(s, "", sp); err == nil {
			split = sp
			break
		}
	}
	if split == "" {
		_, err := splitFiles(s, "", prefer[0])
		return 0, err
	}
	recs, err := j.splitRecords(repo, "", split)
	if err != nil {
		return 0, err
	}
	rows := make([]pettingRow, len(recs))
	for i, r := range recs {
		q, a := firstKey(r, pettingQuestionKeys), firstKey(r, answerKeys)
		if q == nil || a == nil {
			return 0, fmt.Errorf("%s row %d: no question column among %s or no answer column among %s (columns: %s)",
				repo, i, strings.Join(pettingQuestionKeys, ", "), strings.Join(answerKeys, ", "), strings.Join(r.keys, ", "))
		}
		rows[i] = pettingRow{Question: pyStrip(pyStr(q)), Solution: extractSolution(a)}
	}
	return writeParquet(w, rows)
}

// firstKey is load_math.py's get_first_key: the first column present and
// not null, else "" where a column of the keys is present (all null), and
// nil where none is (the script would write "": refused here, since the
// config's reader refuses an empty question).
func firstKey(r record, keys []string) any {
	present := false
	for _, k := range keys {
		v, ok := r.get(k)
		if ok && v != nil {
			return v
		}
		present = present || ok
	}
	if present {
		return ""
	}
	return nil
}

var (
	hashAnswer  = regexp.MustCompile(`####[\s\v]*([^\n\r]+)`)
	boxedAnswer = regexp.MustCompile(`\\boxed\{([^{}]+)\}`)
	labelAnswer = regexp.MustCompile(`(?i)(?:final answer|answer)[\s\v]*:[\s\v]*([^\n\r]+)`)
	shortTail   = regexp.MustCompile(`^[A-Za-z0-9\-+*/.^,_]+$`)
)

// extractSolution is load_math.py's extract_solution.
func extractSolution(v any) string {
	s := pyStrip(pyStr(v))
	if m := hashAnswer.FindStringSubmatch(s); m != nil {
		return strings.ReplaceAll(pyStrip(m[1]), ",", "")
	}
	if m := boxedAnswer.FindStringSubmatch(s); m != nil {
		return pyStrip(m[1])
	}
	if m := labelAnswer.FindStringSubmatch(s); m != nil {
		return pyStrip(m[1])
	}
	var lines []string
	for _, l := range pySplitLines(s) {
		if l = pyStrip(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > 0 {
		tail := lines[len(lines)-1]
		if shortTail.MatchString(tail) && len(tail) <= 20 {
			return strings.ReplaceAll(tail, ",", "")
		}
	}
	return s
}
