// Package metrics records a training run for people: a JSONL file with one
// object per step (jsonl.go), TensorBoard event files with the same scalars
// and sampled episodes as text (tensorboard.go), a one-line console summary
// per step (progress.go), and PNG line charts drawn from the JSONL file
// (plot.go).
//
// What it deliberately is not: a metrics server or an aggregation library. Values arrive already reduced (means, norms) from
// the training loop; this package only writes, prints and draws them.
//
// record.go: one step's record and its JSON line.
//
// A line is a flat JSON object:
//
//	{"step":3,"time":"2026-01-02T15:04:05.123Z","grad_norm/solver":0.81,"reward/mean":0.375,"run":"demo"}
//
// "step" and "time" first, then every metric and label sorted by key.
// Metrics are numbers; labels are strings. JSON has no NaN or infinities,
// and a NaN loss or an infinite gradient norm is exactly what a person must
// see, so those are written as the strings "NaN", "Inf" and "-Inf" and read
// back as numbers (a label with one of those values would be read as a
// metric).
package metrics

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"time"
)

// Record is one training step's metrics.
type Record struct {
	Step   int
	Time   time.Time
	Values map[string]float64 // "reward/mean", "grad_norm/solver", "gpu/0/util", ...
	Labels map[string]string  // optional string fields
}

// reserved keys of a line.
const (
	stepKey = "step"
	timeKey = "time"
)

// MarshalLine encodes r as one JSON line, without the trailing newline.
func (r Record) MarshalLine() ([]byte, error) {
	keys := make([]string, 0, len(r.Values)+len(r.Labels))
	for k := range r.Values {
		keys = append(keys, k)
	}
	for k := range r.Labels {
		if _, dup := r.Values[k]; dup {
			return nil, fmt.Errorf("metrics: step %d: key %q is both a value and a label", r.Step, k)
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b := []byte(`{"step":`)
	b = strconv.AppendInt(b, int64(r.Step), 10)
	b = append(b, `,"time":`...)
	b = strconv.AppendQuote(b, r.Time.UTC().Format(time.RFC3339Nano))
	for _, k := range keys {
		if k == stepKey || k == timeKey {
			return nil, fmt.Errorf("metrics: step %d: key %q is reserved for the record itself", r.Step, k)
		}
		b = append(b, ',')
		kb, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		b = append(b, kb...)
		b = append(b, ':')
		if v, ok := r.Values[k]; ok {
			b = appendNumber(b, v)
		} else {
			lb, err := json.Marshal(r.Labels[k])
			if err != nil {
				return nil, err
			}
			b = append(b, lb...)
		}
	}
	return append(b, '}'), nil
}

func appendNumber(b []byte, v float64) []byte {
	switch {
	case math.IsNaN(v):
		return append(b, `"NaN"`...)
	case math.IsInf(v, 1):
		return append(b, `"Inf"`...)
	case math.IsInf(v, -1):
		return append(b, `"-Inf"`...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

// ParseLine decodes one JSON line written by MarshalLine (or by hand, with
// the same shape).
func ParseLine(line []byte) (Record, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var raw map[string]any
	if err := dec.Decode(&raw); err != nil {
		return Record{}, fmt.Errorf("not a JSON object: %v", err)
	}
	if dec.More() {
		return Record{}, fmt.Errorf("more than one JSON value on the line")
	}
	r := Record{Values: map[string]float64{}, Labels: map[string]string{}}
	stepNum, ok := raw[stepKey].(json.Number)
	if !ok {
		return Record{}, fmt.Errorf(`"step" is missing or not a number`)
	}
	step, err := strconv.Atoi(string(stepNum))
	if err != nil {
		return Record{}, fmt.Errorf(`"step" must be an integer, got %s`, stepNum)
	}
	r.Step = step
	if s, ok := raw[timeKey].(string); ok {
		if r.Time, err = time.Parse(time.RFC3339Nano, s); err != nil {
			return Record{}, fmt.Errorf(`"time": %v`, err)
		}
	} else if raw[timeKey] != nil {
		return Record{}, fmt.Errorf(`"time" must be an RFC 3339 string`)
	}
	for k, v := range raw {
		if k == stepKey || k == timeKey {
			continue
		}
		switch v := v.(type) {
		case json.Number:
			f, err := strconv.ParseFloat(string(v), 64)
			if err != nil {
				return Record{}, fmt.Errorf("%q: %v", k, err)
			}
			r.Values[k] = f
		case string:
			switch v {
			case "NaN":
				r.Values[k] = math.NaN()
			case "Inf", "+Inf":
				r.Values[k] = math.Inf(1)
			case "-Inf":
				r.Values[k] = math.Inf(-1)
			default:
				r.Labels[k] = v
			}
		default:
			return Record{}, fmt.Errorf("%q: want a number or a string, got %T", k, v)
		}
	}
	return r, nil
}
