package metrics

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 2, 15, 4, 5, 123_000_000, time.UTC)

func rec(step int, reward float64) Record {
	return Record{Step: step, Time: t0.Add(time.Duration(step) * time.Second), Values: map[string]float64{"reward/mean": reward}}
}

func TestMarshalLine(t *testing.T) {
	r := Record{
		Step:   3,
		Time:   t0,
		Values: map[string]float64{"reward/mean": 0.375, "grad_norm/solver": 0.81, "loss": math.NaN(), "gnorm/big": math.Inf(1), "tiny": 1e-6},
		Labels: map[string]string{"run": `demo "1"`},
	}
	line, err := r.MarshalLine()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"step":3,"time":"2026-01-02T15:04:05.123Z","gnorm/big":"Inf","grad_norm/solver":0.81,"loss":"NaN","reward/mean":0.375,"run":"demo \"1\"","tiny":1e-06}`
	if string(line) != want {
		t.Errorf("line\n got %s\nwant %s", line, want)
	}
	back, err := ParseLine(line)
	if err != nil {
		t.Fatal(err)
	}
	if back.Step != 3 || !back.Time.Equal(t0) || back.Labels["run"] != `demo "1"` ||
		back.Values["reward/mean"] != 0.375 || !math.IsNaN(back.Values["loss"]) || !math.IsInf(back.Values["gnorm/big"], 1) ||
		back.Values["tiny"] != 1e-6 {
		t.Errorf("parsed back %+v", back)
	}
	for _, bad := range []Record{
		{Step: 1, Values: map[string]float64{"step": 2}},
		{Step: 1, Labels: map[string]string{"time": "x"}},
		{Step: 1, Values: map[string]float64{"k": 1}, Labels: map[string]string{"k": "v"}},
	} {
		if _, err := bad.MarshalLine(); err == nil {
			t.Errorf("MarshalLine(%+v) succeeded, want a reserved/duplicate key error", bad)
		}
	}
}

func TestParseLineRejects(t *testing.T) {
	for _, line := range []string{`{"time":"2026-01-02T15:04:05Z"}`, `{"step":1.5}`, `{"step":1,"x":true}`, `{"step":1,"x":{"y":1}}`, `[1]`, `{"step":1}{"step":2}`} {
		if _, err := ParseLine([]byte(line)); err == nil {
			t.Errorf("ParseLine(%s) succeeded", line)
		}
	}
}

func TestJSONLAppendAndResume(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run", "metrics.jsonl")
	w, report, err := OpenJSONL(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	if report != (ResumeReport{}) {
		t.Errorf("fresh file report %+v", report)
	}
	for step := 1; step <= 5; step++ {
		if err := w.Write(rec(step, float64(step)/10)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Write(rec(4, 0)); err == nil || !strings.Contains(err.Error(), "step 4 logged after step 5") {
		t.Errorf("decreasing step: %v", err)
	}
	// The crash: step 6 is half written.
	w.f.Write([]byte(`{"step":6,"time":"2026-01-0`))
	w.Close()

	all, err := ReadJSONL(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 5 || all[4].Values["reward/mean"] != 0.5 {
		t.Fatalf("read %d records (%+v), want steps 1..5 without the torn line", len(all), all)
	}

	// Resume from a checkpoint after step 3: the next step logged is 4.
	w, report, err = OpenJSONL(path, 4)
	if err != nil {
		t.Fatal(err)
	}
	if want := (ResumeReport{Kept: 3, Dropped: 2, TornLine: true}); report != want {
		t.Errorf("resume report %+v, want %+v", report, want)
	}
	if err := w.Write(rec(3, 0)); err == nil {
		t.Error("writing step 3 after resuming at 4 succeeded")
	}
	for step := 4; step <= 6; step++ {
		if err := w.Write(rec(step, float64(step))); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	all, err = ReadJSONL(path)
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, r := range all {
		got = append(got, r.Step)
	}
	if !reflect.DeepEqual(got, []int{1, 2, 3, 4, 5, 6}) {
		t.Errorf("steps %v, want each of 1..6 once", got)
	}
	if all[3].Values["reward/mean"] != 4 {
		t.Errorf("step 4 holds %v, want the resumed run's value 4", all[3].Values)
	}
	raw, _ := os.ReadFile(path)
	if n := strings.Count(string(raw), "\n"); n != 6 || !strings.HasSuffix(string(raw), "}\n") {
		t.Errorf("file has %d lines / bad ending:\n%s", n, raw)
	}
}

func TestJSONLFreshRunReplacesOldLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.jsonl")
	os.WriteFile(path, []byte(`{"step":1,"time":"2026-01-02T15:04:05Z","a":1}`+"\n"), 0o644)
	w, report, err := OpenJSONL(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	if report.Dropped != 1 {
		t.Errorf("report %+v, want 1 dropped", report)
	}
	if raw, _ := os.ReadFile(path); len(raw) != 0 {
		t.Errorf("file still holds %q", raw)
	}
}

func TestJSONLCorruptMiddleLineIsAnError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.jsonl")
	os.WriteFile(path, []byte(`{"step":1,"a":1}`+"\n"+`garbage`+"\n"+`{"step":2,"a":2}`+"\n"), 0o644)
	_, _, err := OpenJSONL(path, 2)
	if err == nil || !strings.Contains(err.Error(), path+":2") {
		t.Errorf("error = %v, want one naming %s:2", err, path)
	}
	before, _ := os.ReadFile(path)
	if !strings.Contains(string(before), "garbage") {
		t.Error("a refused file was rewritten")
	}
}
