// parquet.go — reading math datasets stored as Parquet (the format of the
// DAPO, MATH-500 and Search-R1 files on the Hugging Face hub), through
// github.com/parquet-go/parquet-go, a pure-Go reader.
//
// Each row is reconstructed as a generic value (groups → map[string]any,
// LIST columns → []any) and handed to the same path logic as JSON
// (dataset.go), so field paths read the same in both formats.
package math

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/parquet-go/parquet-go"

	"troupe/rollout"
)

func loadParquet(path string, f Fields) (tasks rollout.SliceSource, err error) {
	// the Parquet reader panics on some malformed files; a bad file is an
	// error naming it, never a crash
	defer func() {
		if r := recover(); r != nil {
			tasks, err = nil, fmt.Errorf("math: dataset %s: not a readable Parquet file (%v)", path, r)
		}
	}()
	file, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("math: dataset: %w", err)
	}
	defer file.Close()
	r := parquet.NewGenericReader[any](file)
	defer r.Close()
	rows := make([]any, 256)
	n := 0
	for {
		k, err := r.Read(rows)
		for _, rec := range rows[:k] {
			t, terr := taskOf(rec, f, fmt.Sprintf("%s:%d", filepath.Base(path), n))
			if terr != nil {
				return nil, fmt.Errorf("math: dataset %s: row %d: %w", path, n, terr)
			}
			tasks = append(tasks, t)
			n++
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("math: dataset %s: row %d: %w", path, n, err)
		}
	}
	return nonEmpty(path, tasks)
}
