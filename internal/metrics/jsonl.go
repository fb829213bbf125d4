// jsonl.go: the metrics file of a run, one JSON line per step.
//
// Durability: each record is written with a single write(2) of the whole
// line, newline included, and nothing is buffered in the process, so a crash
// of the process loses at most the line being written. (The file is fsynced
// only at Close: a power loss can lose more, which the checkpoint, not the
// metrics file, has to survive.)
//
// Resuming: OpenJSONL(path, nextStep) keeps the lines whose step is below
// nextStep and drops the rest, so a run resumed from a checkpoint logs each
// step once even though the crashed run had logged steps past that
// checkpoint. A torn last line (a crash mid-write) is dropped too. Dropping
// rewrites the file atomically (temporary file, fsync, rename). A fresh run
// passes nextStep 0 and starts from an empty file.
package metrics

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"troupe/internal/atomicfile"
)

// JSONL appends records to a metrics file. Not safe for concurrent use.
type JSONL struct {
	path     string
	f        *os.File
	lastStep int // the highest step in the file; steps written must not be lower
	discard  bool
}

// ResumeReport says what OpenJSONL did to an existing file.
type ResumeReport struct {
	Kept     int  // lines with step < nextStep
	Dropped  int  // lines with step ≥ nextStep
	TornLine bool // an unterminated or unparsable last line was dropped
}

// OpenJSONL opens the metrics file at path for a run whose next logged step
// is nextStep, creating it (and its directory) if needed; see the file
// comment for what happens to existing lines.
func OpenJSONL(path string, nextStep int) (*JSONL, ResumeReport, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, ResumeReport{}, fmt.Errorf("metrics: %w", err)
	}
	report, err := truncateSteps(path, nextStep, recordStep)
	if err != nil {
		return nil, report, err
	}
	w := &JSONL{path: path, lastStep: nextStep}
	w.f, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, report, fmt.Errorf("metrics: %w", err)
	}
	return w, report, nil
}

// Discard is a JSONL that writes nothing (a data-parallel rank other than
// rank 0).
func Discard() *JSONL { return &JSONL{path: os.DevNull, discard: true} }

// Path is the file being written.
func (w *JSONL) Path() string { return w.path }

// Write appends r as one line. Steps must not decrease, and must not be
// below the nextStep the file was opened with.
func (w *JSONL) Write(r Record) error {
	if w.discard {
		return nil
	}
	if r.Step < w.lastStep {
		return fmt.Errorf("metrics: %s: step %d logged after step %d (or below the resume step); steps must not decrease",
			w.path, r.Step, w.lastStep)
	}
	line, err := r.MarshalLine()
	if err != nil {
		return err
	}
	if _, err := w.f.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("metrics: %s: %w", w.path, err)
	}
	w.lastStep = r.Step
	return nil
}

// Close fsyncs and closes the file.
func (w *JSONL) Close() error {
	if w.f == nil {
		return nil
	}
	err := errors.Join(w.f.Sync(), w.f.Close())
	w.f = nil
	if err != nil {
		return fmt.Errorf("metrics: closing %s: %w", w.path, err)
	}
	return nil
}

// ReadJSONL reads every record of a metrics file, ignoring a torn last line.
func ReadJSONL(path string) ([]Record, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	lines, _, err := splitLines(path, raw, recordStep)
	if err != nil {
		return nil, err
	}
	out := make([]Record, len(lines))
	for i, l := range lines {
		out[i], _ = ParseLine(l.text) // parsed once already
	}
	return out, nil
}

type parsedLine struct {
	text []byte
	step int
}

// splitLines parses every non-empty line with parse, which returns the
// line's step. The last non-empty line is torn if it has no newline or does
// not parse; any other bad line is an error.
func splitLines(path string, raw []byte, parse func([]byte) (int, error)) ([]parsedLine, bool, error) {
	lines := bytes.Split(raw, []byte{'\n'})
	lastNonEmpty := -1
	for i, l := range lines {
		if len(bytes.TrimSpace(l)) > 0 {
			lastNonEmpty = i
		}
	}
	var out []parsedLine
	for i, text := range lines {
		if len(bytes.TrimSpace(text)) == 0 {
			continue
		}
		unterminated := i == len(lines)-1 // the text after the last newline
		step, err := parse(text)
		if i == lastNonEmpty && (unterminated || err != nil) {
			return out, true, nil
		}
		if err != nil {
			return nil, false, fmt.Errorf("metrics: %s:%d: %v; fix or remove that line", path, i+1, err)
		}
		out = append(out, parsedLine{text: text, step: step})
	}
	return out, false, nil
}

func recordStep(text []byte) (int, error) {
	rec, err := ParseLine(text)
	return rec.Step, err
}

// anyStep reads the "step" of a JSON object line with any other fields.
func anyStep(text []byte) (int, error) {
	var v struct {
		Step *int `json:"step"`
	}
	if err := json.Unmarshal(text, &v); err != nil {
		return 0, err
	}
	if v.Step == nil {
		return 0, fmt.Errorf(`no "step"`)
	}
	return *v.Step, nil
}

// TruncateSteps drops the lines of a JSONL file (JSON objects with an
// integer "step") whose step is ≥ nextStep, and a torn last line, rewriting
// the file atomically when anything was dropped; a missing file is fine. A
// resumed run calls it on its per-step logs so that no step appears twice.
func TruncateSteps(path string, nextStep int) (ResumeReport, error) {
	return truncateSteps(path, nextStep, anyStep)
}

// truncateSteps drops the lines whose step (read by parse) is ≥ nextStep,
// and a torn last line, rewriting the file atomically when it changed.
func truncateSteps(path string, nextStep int, parse func([]byte) (int, error)) (ResumeReport, error) {
	var report ResumeReport
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return report, nil
	}
	if err != nil {
		return report, fmt.Errorf("metrics: %w", err)
	}
	lines, torn, err := splitLines(path, raw, parse)
	if err != nil {
		return report, err
	}
	report.TornLine = torn
	var keep bytes.Buffer
	for _, l := range lines {
		if l.step >= nextStep {
			report.Dropped++
			continue
		}
		report.Kept++
		keep.Write(l.text)
		keep.WriteByte('\n')
	}
	if report.Dropped > 0 || report.TornLine {
		if err := replaceFile(path, keep.Bytes()); err != nil {
			return report, fmt.Errorf("metrics: rewriting %s: %w", path, err)
		}
	}
	return report, nil
}

// replaceFile writes data to path atomically.
func replaceFile(path string, data []byte) error {
	return atomicfile.Write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}
