package metrics

import (
	"encoding/binary"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
)

// eventSchema is the part of TensorFlow's event.proto / summary.proto /
// tensor.proto that troupe writes, as a descriptor: the reader below decodes
// with the protobuf library against it, independently of the writer's
// hand-rolled encoding (field numbers and wire types must both agree).
func eventSchema(t *testing.T) protoreflect.FileDescriptor {
	t.Helper()
	field := func(name string, num int32, typ descriptorpb.FieldDescriptorProto_Type, msg string, repeated bool) *descriptorpb.FieldDescriptorProto {
		label := descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL
		if repeated {
			label = descriptorpb.FieldDescriptorProto_LABEL_REPEATED
		}
		f := &descriptorpb.FieldDescriptorProto{Name: proto.String(name), Number: proto.Int32(num), Type: typ.Enum(), Label: label.Enum()}
		if msg != "" {
			f.TypeName = proto.String(".tb." + msg)
		}
		return f
	}
	const (
		tDouble = descriptorpb.FieldDescriptorProto_TYPE_DOUBLE
		tFloat  = descriptorpb.FieldDescriptorProto_TYPE_FLOAT
		tInt64  = descriptorpb.FieldDescriptorProto_TYPE_INT64
		tInt32  = descriptorpb.FieldDescriptorProto_TYPE_INT32
		tString = descriptorpb.FieldDescriptorProto_TYPE_STRING
		tBytes  = descriptorpb.FieldDescriptorProto_TYPE_BYTES
		tMsg    = descriptorpb.FieldDescriptorProto_TYPE_MESSAGE
	)
	msg := func(name string, fields ...*descriptorpb.FieldDescriptorProto) *descriptorpb.DescriptorProto {
		return &descriptorpb.DescriptorProto{Name: proto.String(name), Field: fields}
	}
	fd := &descriptorpb.FileDescriptorProto{
		Name: proto.String("tb_event.proto"), Package: proto.String("tb"), Syntax: proto.String("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{
			msg("Event", field("wall_time", 1, tDouble, "", false), field("step", 2, tInt64, "", false),
				field("file_version", 3, tString, "", false), field("summary", 5, tMsg, "Summary", false)),
			msg("Summary", field("value", 1, tMsg, "Value", true)),
			msg("Value", field("tag", 1, tString, "", false), field("simple_value", 2, tFloat, "", false),
				field("tensor", 8, tMsg, "TensorProto", false), field("metadata", 9, tMsg, "SummaryMetadata", false)),
			msg("SummaryMetadata", field("plugin_data", 1, tMsg, "PluginData", false)),
			msg("PluginData", field("plugin_name", 1, tString, "", false), field("content", 2, tBytes, "", false)),
			msg("TensorProto", field("dtype", 1, tInt32, "", false), field("tensor_shape", 2, tMsg, "TensorShapeProto", false),
				field("string_val", 8, tBytes, "", true)),
			msg("TensorShapeProto", field("dim", 2, tMsg, "Dim", true)),
			msg("Dim", field("size", 1, tInt64, "", false)),
		},
	}
	file, err := protodesc.NewFile(fd, nil)
	if err != nil {
		t.Fatal(err)
	}
	return file
}

// decoded is what a reader sees in one event.
type decoded struct {
	step    int64
	wall    float64
	version string
	scalars map[string]float32
	texts   map[string]string // tag → text, for text-plugin values
}

// readEvents unframes the file with its own CRC code and decodes every
// record with the protobuf library.
func readEvents(t *testing.T, path string) []decoded {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	table := crc32.MakeTable(crc32.Castagnoli)
	mask := func(b []byte) uint32 { c := crc32.Checksum(b, table); return (c>>15 | c<<17) + 0xa282ead8 }
	desc := eventSchema(t).Messages().ByName("Event")
	var out []decoded
	for off := 0; off < len(raw); {
		n := int(binary.LittleEndian.Uint64(raw[off:]))
		if binary.LittleEndian.Uint32(raw[off+8:]) != mask(raw[off:off+8]) {
			t.Fatalf("record at %d: length checksum mismatch", off)
		}
		data := raw[off+12 : off+12+n]
		if binary.LittleEndian.Uint32(raw[off+12+n:]) != mask(data) {
			t.Fatalf("record at %d: data checksum mismatch", off)
		}
		off += 16 + n
		m := dynamicpb.NewMessage(desc)
		if err := (proto.UnmarshalOptions{DiscardUnknown: false}).Unmarshal(data, m); err != nil {
			t.Fatalf("record %d does not decode as an Event: %v", len(out), err)
		}
		if len(m.GetUnknown()) > 0 {
			t.Fatalf("record %d has fields outside event.proto's schema (wrong number or wire type)", len(out))
		}
		f := desc.Fields()
		d := decoded{step: m.Get(f.ByName("step")).Int(), wall: m.Get(f.ByName("wall_time")).Float(),
			version: m.Get(f.ByName("file_version")).String(), scalars: map[string]float32{}, texts: map[string]string{}}
		if m.Has(f.ByName("summary")) {
			sum := m.Get(f.ByName("summary")).Message()
			values := sum.Get(sum.Descriptor().Fields().ByName("value")).List()
			for i := 0; i < values.Len(); i++ {
				v := values.Get(i).Message()
				vf := v.Descriptor().Fields()
				tag := v.Get(vf.ByName("tag")).String()
				if v.Has(vf.ByName("tensor")) {
					meta := v.Get(vf.ByName("metadata")).Message()
					plugin := meta.Get(meta.Descriptor().Fields().ByName("plugin_data")).Message()
					if name := plugin.Get(plugin.Descriptor().Fields().ByName("plugin_name")).String(); name != "text" {
						t.Fatalf("tensor value %q has plugin %q, want text", tag, name)
					}
					tensor := v.Get(vf.ByName("tensor")).Message()
					tf := tensor.Descriptor().Fields()
					if dt := tensor.Get(tf.ByName("dtype")).Int(); dt != 7 {
						t.Fatalf("text tensor dtype %d, want DT_STRING (7)", dt)
					}
					if !tensor.Has(tf.ByName("tensor_shape")) {
						t.Fatalf("text tensor %q has no shape", tag)
					}
					sv := tensor.Get(tf.ByName("string_val")).List()
					if sv.Len() != 1 {
						t.Fatalf("text tensor %q has %d strings, want 1", tag, sv.Len())
					}
					d.texts[tag] = string(sv.Get(0).Bytes())
					continue
				}
				d.scalars[tag] = float32(v.Get(vf.ByName("simple_value")).Float())
			}
		}
		out = append(out, d)
	}
	return out
}

func TestMaskedCRCKnownAnswer(t *testing.T) {
	// CRC-32C of "123456789" is 0xE3069283 (the standard check value).
	c := uint32(0xE3069283)
	if got, want := maskedCRC([]byte("123456789")), ((c>>15)|(c<<17))+0xa282ead8; got != want {
		t.Fatalf("masked crc %#x, want %#x", got, want)
	}
}

func TestEventsDecodeWithTheProtobufLibrary(t *testing.T) {
	dir := t.TempDir()
	e, _, err := OpenEvents(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	t1 := time.Date(2026, 1, 2, 3, 4, 5, 500_000_000, time.UTC)
	steps := []map[string]float64{
		{"reward/mean": 0.25, "policy/solver/grad_norm": 1.5, "eval/accuracy": 0.125},
		{"reward/mean": 0.5, "policy/solver/grad_norm": math.Inf(1), "loss/solver": math.NaN()},
	}
	for i, v := range steps {
		if err := e.Scalars(i+1, t1, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Text(2, t1, "samples", "**solver**: `\\boxed{4}`"); err != nil {
		t.Fatal(err)
	}
	if err := e.Scalars(1, t1, steps[0]); err == nil {
		t.Fatal("a step below the last one was accepted")
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	got := readEvents(t, filepath.Join(dir, EventsFile))
	if len(got) != 4 {
		t.Fatalf("%d events, want file_version + 2 steps + 1 text", len(got))
	}
	if got[0].version != "brain.Event:2" {
		t.Fatalf("first event file_version %q", got[0].version)
	}
	for i, v := range steps {
		ev := got[i+1]
		if ev.step != int64(i+1) || ev.wall != 1767323045.5 {
			t.Fatalf("event %d: step %d wall %v", i+1, ev.step, ev.wall)
		}
		if len(ev.scalars) != len(v) {
			t.Fatalf("event %d: tags %v, want %v", i+1, ev.scalars, v)
		}
		for k, want := range v {
			g := ev.scalars[k]
			if !(float64(g) == want || (math.IsNaN(want) && math.IsNaN(float64(g)))) {
				t.Fatalf("step %d tag %s = %v, want %v", i+1, k, g, want)
			}
		}
	}
	if txt := got[3].texts["samples"]; got[3].step != 2 || txt != "**solver**: `\\boxed{4}`" {
		t.Fatalf("text event: step %d text %q", got[3].step, txt)
	}
}

// Resuming keeps the events below the resume step and drops the rest (and a
// torn last record), so no step shows twice; a corrupt record is refused.
func TestEventsResumeTruncates(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, EventsFile)
	e, _, err := OpenEvents(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	for s := 0; s <= 5; s++ {
		e.Scalars(s, time.Now(), map[string]float64{"x": float64(s)})
	}
	e.Close()
	// a crash mid-write leaves a prefix of a record
	torn := frameRecord([]byte("partial"))
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.Write(torn[:len(torn)-3])
	f.Close()

	e, report, err := OpenEvents(dir, 4) // resumed from the checkpoint after step 3
	if err != nil {
		t.Fatal(err)
	}
	if report.Kept != 4 || report.Dropped != 2 || !report.TornLine {
		t.Fatalf("report %+v, want 4 kept, 2 dropped, a torn record", report)
	}
	for s := 4; s <= 6; s++ {
		if err := e.Scalars(s, time.Now(), map[string]float64{"x": 10 * float64(s)}); err != nil {
			t.Fatal(err)
		}
	}
	e.Close()
	var steps []int64
	var xs []float32
	for _, ev := range readEvents(t, path)[1:] {
		steps = append(steps, ev.step)
		xs = append(xs, ev.scalars["x"])
	}
	if !reflect.DeepEqual(steps, []int64{0, 1, 2, 3, 4, 5, 6}) || !reflect.DeepEqual(xs, []float32{0, 1, 2, 3, 40, 50, 60}) {
		t.Fatalf("after resume: steps %v values %v", steps, xs)
	}

	raw, _ := os.ReadFile(path)
	raw[len(raw)/2] ^= 0xff
	os.WriteFile(path, raw, 0o644)
	if _, _, err := OpenEvents(dir, 7); err == nil || !strings.Contains(err.Error(), "checksum") {
		t.Fatalf("a corrupt event file was accepted: %v", err)
	}
}
