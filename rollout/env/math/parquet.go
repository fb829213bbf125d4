// parquet.go — reading math datasets stored as Parquet (the format of the
// DAPO, MATH-500 and Search-R1 files on the Hugging Face hub), through
// github.com/parquet-go/parquet-go, a pure-Go reader.
//
// Each row is reconstructed as a generic value (groups → map[string]any,
// LIST columns → []any) and handed to the same path logic as JSON
// (dataset.go), so field paths read the same in both formats.
package math

import (
	"encoding/binary"
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
	if err := checkParquetFrame(file); err != nil {
		return nil, fmt.Errorf("math: dataset %s: not a readable Parquet file (%v)", path, err)
	}
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

// checkParquetFrame checks the file's outer frame before the reader sees
// it: "PAR1" at both ends and a footer length that fits in the file. The
// reader allocates the footer length it is given, so a corrupt length
// would otherwise ask for gigabytes.
func checkParquetFrame(f *os.File) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	size := st.Size()
	if size < 12 {
		return fmt.Errorf("%d bytes, too short", size)
	}
	var head [4]byte
	var tail [8]byte
	if _, err := f.ReadAt(head[:], 0); err != nil {
		return err
	}
	if _, err := f.ReadAt(tail[:], size-8); err != nil {
		return err
	}
	if string(head[:]) != "PAR1" || string(tail[4:]) != "PAR1" {
		return fmt.Errorf("no PAR1 magic at both ends")
	}
	footer := int64(binary.LittleEndian.Uint32(tail[:4]))
	if footer == 0 || footer > size-12 {
		return fmt.Errorf("footer length %d does not fit in a %d-byte file", footer, size)
	}
	return nil
}
