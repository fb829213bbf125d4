// tensorboard.go: TensorBoard event files beside metrics.jsonl, so a run can
// be watched and compared in the tool other RL trainers write for.
//
// The file is <dir>/events.out.tfevents.troupe, one per run directory
// (TensorBoard reads every file whose name contains "tfevents"). It is a
// TFRecord stream: per record a little-endian uint64 length, the masked
// CRC32C of those 8 bytes, the data, and the masked CRC32C of the data, where
// mask(c) = ((c >> 15) | (c << 17)) + 0xa282ead8. Each record is an Event
// message of TensorFlow's event.proto, written field by field:
//
//	Event    { double wall_time = 1; int64 step = 2; string file_version = 3; Summary summary = 5; }
//	Summary  { repeated Value value = 1; }
//	Value    { string tag = 1; float simple_value = 2; TensorProto tensor = 8; SummaryMetadata metadata = 9; }
//
// The first event carries file_version "brain.Event:2". Scalars are
// simple_value summaries tagged with the metrics key itself
// ("policy/solver/grad_norm"), one Event per step holding all of them. Text
// (sampled episodes) uses TensorBoard's text plugin: a scalar DT_STRING
// tensor whose metadata names the plugin "text"; the text is Markdown.
//
// Resuming: OpenEvents(dir, nextStep) keeps the events whose step is below
// nextStep and drops the rest, like OpenJSONL, so TensorBoard never shows a
// step twice; a torn last record (a crash mid-write) is dropped too, and a
// record with a bad checksum anywhere else is an error. Dropping rewrites the
// file atomically. Durability is that of metrics.jsonl: one write(2) per
// record, fsync at Close.
//
// What it deliberately is not: a general TensorBoard library (no
// histograms, images or graphs) or a reader of other programs' event files.
package metrics

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
)

// EventsFile is the name of a run's TensorBoard event file.
const EventsFile = "events.out.tfevents.troupe"

// Events appends TensorBoard events to a run's event file. Not safe for
// concurrent use.
type Events struct {
	path     string
	f        *os.File
	lastStep int
}

// OpenEvents opens dir's event file for a run whose next logged step is
// nextStep, creating it (and dir) when absent; see the file comment for
// what happens to existing events.
func OpenEvents(dir string, nextStep int) (*Events, ResumeReport, error) {
	var report ResumeReport
	path := filepath.Join(dir, EventsFile)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, report, fmt.Errorf("metrics: %w", err)
	}
	raw, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, report, fmt.Errorf("metrics: %w", err)
	}
	fresh := errors.Is(err, fs.ErrNotExist) || len(raw) == 0
	if !fresh {
		records, torn, err := splitRecords(raw)
		if err != nil {
			return nil, report, fmt.Errorf("metrics: %s: %w; move the file away to start a new one", path, err)
		}
		report.TornLine = torn
		var keep []byte
		for i, rec := range records {
			step, err := eventStep(rec)
			if err != nil {
				return nil, report, fmt.Errorf("metrics: %s: record %d: %w", path, i, err)
			}
			if i > 0 && step >= int64(nextStep) { // record 0 is the file_version event
				report.Dropped++
				continue
			}
			if i > 0 {
				report.Kept++
			}
			keep = append(keep, frameRecord(rec)...)
		}
		if report.Dropped > 0 || report.TornLine {
			if err := replaceFile(path, keep); err != nil {
				return nil, report, fmt.Errorf("metrics: rewriting %s: %w", path, err)
			}
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, report, fmt.Errorf("metrics: %w", err)
	}
	e := &Events{path: path, f: f, lastStep: nextStep}
	if fresh {
		version := protowire.AppendTag(nil, 3, protowire.BytesType)
		version = protowire.AppendString(version, "brain.Event:2")
		if err := e.append(event(time.Now(), 0, version)); err != nil {
			f.Close()
			return nil, report, err
		}
	}
	return e, report, nil
}

// Path is the event file being written.
func (e *Events) Path() string { return e.path }

// Scalars writes one event holding every value of a step, tagged by key.
func (e *Events) Scalars(step int, t time.Time, values map[string]float64) error {
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var summary []byte
	for _, k := range keys {
		var v []byte
		v = protowire.AppendTag(v, 1, protowire.BytesType)
		v = protowire.AppendString(v, k)
		v = protowire.AppendTag(v, 2, protowire.Fixed32Type)
		v = protowire.AppendFixed32(v, math.Float32bits(float32(values[k])))
		summary = appendMessage(summary, 1, v)
	}
	return e.write(step, t, summary)
}

// Text writes a Markdown text summary under tag at step.
func (e *Events) Text(step int, t time.Time, tag, text string) error {
	plugin := protowire.AppendTag(nil, 1, protowire.BytesType)
	plugin = protowire.AppendString(plugin, "text")
	metadata := appendMessage(nil, 1, plugin) // SummaryMetadata.plugin_data
	var tensor []byte
	tensor = protowire.AppendTag(tensor, 1, protowire.VarintType) // dtype
	tensor = protowire.AppendVarint(tensor, 7)                    // DT_STRING
	tensor = appendMessage(tensor, 2, nil)                        // tensor_shape: a scalar
	tensor = protowire.AppendTag(tensor, 8, protowire.BytesType)  // string_val
	tensor = protowire.AppendString(tensor, text)
	var v []byte
	v = protowire.AppendTag(v, 1, protowire.BytesType)
	v = protowire.AppendString(v, tag)
	v = appendMessage(v, 8, tensor)
	v = appendMessage(v, 9, metadata)
	return e.write(step, t, appendMessage(nil, 1, v))
}

// write appends an Event with the given Summary at step.
func (e *Events) write(step int, t time.Time, summary []byte) error {
	if step < e.lastStep {
		return fmt.Errorf("metrics: %s: step %d logged after step %d (or below the resume step); steps must not decrease", e.path, step, e.lastStep)
	}
	if err := e.append(event(t, int64(step), appendMessage(nil, 5, summary))); err != nil {
		return err
	}
	e.lastStep = step
	return nil
}

func (e *Events) append(data []byte) error {
	if _, err := e.f.Write(frameRecord(data)); err != nil {
		return fmt.Errorf("metrics: %s: %w", e.path, err)
	}
	return nil
}

// Close fsyncs and closes the file.
func (e *Events) Close() error {
	if e == nil || e.f == nil {
		return nil
	}
	err := errors.Join(e.f.Sync(), e.f.Close())
	e.f = nil
	if err != nil {
		return fmt.Errorf("metrics: closing %s: %w", e.path, err)
	}
	return nil
}

// event encodes an Event: wall time, step, then the given oneof field.
func event(t time.Time, step int64, what []byte) []byte {
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.Fixed64Type)
	b = protowire.AppendFixed64(b, math.Float64bits(float64(t.UnixNano())/1e9))
	b = protowire.AppendTag(b, 2, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(step))
	return append(b, what...)
}

func appendMessage(b []byte, field protowire.Number, msg []byte) []byte {
	b = protowire.AppendTag(b, field, protowire.BytesType)
	return protowire.AppendBytes(b, msg)
}

// eventStep reads the step field of an encoded Event (0 when absent).
func eventStep(data []byte) (int64, error) {
	for len(data) > 0 {
		num, typ, n := protowire.ConsumeTag(data)
		if n < 0 {
			return 0, fmt.Errorf("not an event: %w", protowire.ParseError(n))
		}
		data = data[n:]
		if num == 2 && typ == protowire.VarintType {
			v, m := protowire.ConsumeVarint(data)
			if m < 0 {
				return 0, fmt.Errorf("not an event: %w", protowire.ParseError(m))
			}
			return int64(v), nil
		}
		m := protowire.ConsumeFieldValue(num, typ, data)
		if m < 0 {
			return 0, fmt.Errorf("not an event: %w", protowire.ParseError(m))
		}
		data = data[m:]
	}
	return 0, nil
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// maskedCRC is TFRecord's masked CRC32C.
func maskedCRC(b []byte) uint32 {
	c := crc32.Checksum(b, castagnoli)
	return ((c >> 15) | (c << 17)) + 0xa282ead8
}

// frameRecord wraps data in TFRecord framing.
func frameRecord(data []byte) []byte {
	out := make([]byte, 12, 16+len(data))
	binary.LittleEndian.PutUint64(out, uint64(len(data)))
	binary.LittleEndian.PutUint32(out[8:], maskedCRC(out[:8]))
	out = append(out, data...)
	return binary.LittleEndian.AppendUint32(out, maskedCRC(data))
}

// splitRecords unframes a TFRecord stream. Records are appended with one
// write each, so a crash leaves at most a prefix of the last one: fewer
// bytes than its length says is a torn record (dropped); a bad checksum is
// corruption (an error).
func splitRecords(raw []byte) (records [][]byte, torn bool, err error) {
	for len(raw) > 0 {
		if len(raw) < 12 {
			return records, true, nil
		}
		if binary.LittleEndian.Uint32(raw[8:]) != maskedCRC(raw[:8]) {
			return nil, false, fmt.Errorf("record %d has a bad length checksum", len(records))
		}
		n := binary.LittleEndian.Uint64(raw)
		if n > uint64(len(raw)) || uint64(len(raw))-n < 16 {
			return records, true, nil
		}
		data := raw[12 : 12+n]
		if binary.LittleEndian.Uint32(raw[12+n:]) != maskedCRC(data) {
			return nil, false, fmt.Errorf("record %d has a bad data checksum", len(records))
		}
		records = append(records, data)
		raw = raw[16+n:]
	}
	return records, false, nil
}

// EventSteps returns the step of every event in an event file, in file
// order (the file_version event first, at step 0).
func EventSteps(path string) ([]int, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	records, _, err := splitRecords(raw)
	if err != nil {
		return nil, fmt.Errorf("metrics: %s: %w", path, err)
	}
	steps := make([]int, len(records))
	for i, rec := range records {
		s, err := eventStep(rec)
		if err != nil {
			return nil, fmt.Errorf("metrics: %s: record %d: %w", path, i, err)
		}
		steps[i] = int(s)
	}
	return steps, nil
}
