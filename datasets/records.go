package datasets

// records.go — the rows of a source file as generic records: Parquet
// (groups → map[string]any, lists → []any, as troupe's own dataset readers
// see them), JSONL and JSON arrays (numbers kept as written). A record
// keeps its columns in the file's order, so a JSONL output writes them as
// the source had them.
//
// What it is not: streaming. The sources converted this way are small
// (MATH-500, AIME, MBPP, HumanEval, TLDR, Polaris-53K, dapo_filter); the
// large ones (Search-R1's, the corpus) are copied without decoding.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/parquet-go/parquet-go"
)

// record is one row: its columns in the source's order.
type record struct {
	keys []string
	vals map[string]any
}

func (r record) get(key string) (any, bool) {
	v, ok := r.vals[key]
	return v, ok
}

// MarshalJSON writes the columns in order, with no HTML escaping.
func (r record) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range r.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, err := marshalJSON(k)
		if err != nil {
			return nil, err
		}
		vb, err := marshalJSON(r.vals[k])
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", k, err)
		}
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// marshalJSON is json.Marshal without HTML escaping and without the
// trailing newline of an Encoder.
func marshalJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// readRecords reads every row of a Parquet, JSONL or JSON file; name is
// what errors call it (the repository and path).
func readRecords(path, name string) ([]record, error) {
	switch formatOf(path) {
	case ".parquet":
		return readParquet(path, name)
	case ".jsonl":
		return readJSONL(path, name)
	case ".json":
		return readJSONArray(path, name)
	}
	return nil, fmt.Errorf("%s: not a Parquet, JSONL or JSON file", name)
}

func readParquet(path, name string) (recs []record, err error) {
	// the reader panics on some malformed files: an error naming the file
	defer func() {
		if r := recover(); r != nil {
			recs, err = nil, fmt.Errorf("%s: not a readable Parquet file (%v)", name, r)
		}
	}()
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("%s: not a readable Parquet file (%v)", name, err)
	}
	var keys []string
	for _, field := range pf.Schema().Fields() {
		keys = append(keys, field.Name())
	}
	r := parquet.NewGenericReader[any](f)
	defer r.Close()
	rows := make([]any, 256)
	for {
		n, err := r.Read(rows)
		for _, row := range rows[:n] {
			m, ok := row.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%s: row %d is %T, not a record", name, len(recs), row)
			}
			recs = append(recs, record{keys: keys, vals: m})
		}
		if errors.Is(err, io.EOF) {
			return recs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: row %d: %v", name, len(recs), err)
		}
	}
}

func readJSONL(path, name string) ([]record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var recs []record
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<28)
	for line := 1; sc.Scan(); line++ {
		b := bytes.TrimSpace(sc.Bytes())
		if line == 1 {
			b = bytes.TrimPrefix(b, []byte("\ufeff"))
		}
		if len(b) == 0 {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		rec, err := decodeObject(dec)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, line, err)
		}
		if dec.More() {
			return nil, fmt.Errorf("%s:%d: more than one JSON value on the line", name, line)
		}
		recs = append(recs, rec)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	return recs, nil
}

func readJSONArray(path, name string) ([]record, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(bytes.TrimPrefix(data, []byte("\ufeff"))))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		return nil, fmt.Errorf("%s: not a JSON array of records", name)
	}
	var recs []record
	for dec.More() {
		rec, err := decodeObject(dec)
		if err != nil {
			return nil, fmt.Errorf("%s: record %d: %v", name, len(recs), err)
		}
		recs = append(recs, rec)
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	return recs, nil
}

// decodeObject reads one JSON object, keeping its keys' order.
func decodeObject(dec *json.Decoder) (record, error) {
	t, err := dec.Token()
	if err != nil {
		return record{}, err
	}
	if t != json.Delim('{') {
		return record{}, fmt.Errorf("a record must be a JSON object, got %v", t)
	}
	rec := record{vals: map[string]any{}}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return record{}, err
		}
		k := kt.(string)
		var v any
		if err := dec.Decode(&v); err != nil {
			return record{}, fmt.Errorf("%s: %v", k, err)
		}
		if _, dup := rec.vals[k]; !dup {
			rec.keys = append(rec.keys, k)
		}
		rec.vals[k] = v
	}
	if _, err := dec.Token(); err != nil { // '}'
		return record{}, err
	}
	return rec, nil
}

// text is a record's column as text (Python's str() of it), or an error
// naming the column and the columns there are.
func (r record) text(col string) (string, error) {
	v, ok := r.get(col)
	if !ok {
		return "", fmt.Errorf("no column %q (columns: %s)", col, strings.Join(r.keys, ", "))
	}
	return pyStr(v), nil
}
