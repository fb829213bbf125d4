package safetensors

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// layerTensors is a toy model: n layers of a 4×4 F32 weight (64 bytes) and
// a 4-element BF16 norm (8 bytes), in module order, with distinct bytes.
func layerTensors(n int) ([]Tensor, map[string][]byte) {
	var tensors []Tensor
	data := map[string][]byte{}
	for i := 0; i < n; i++ {
		for _, spec := range []struct {
			suffix string
			dtype  DType
			shape  []int64
		}{{".weight", F32, []int64{4, 4}}, {".norm", BF16, []int64{4}}} {
			name := "model.layers." + string(rune('a'+i)) + spec.suffix
			size, _ := ByteSize(spec.dtype, spec.shape)
			b := make([]byte, size)
			for j := range b {
				b[j] = byte(i*31 + j)
			}
			tensors = append(tensors, TensorFromBytes(name, spec.dtype, spec.shape, b))
			data[name] = b
		}
	}
	return tensors, data
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

func TestWriteModelDirThreeShards(t *testing.T) {
	dir := t.TempDir()
	tensors, data := layerTensors(3) // 3 × (64 + 8) = 216 bytes
	written, err := WriteModelDir(dir, tensors, map[string]string{"format": "pt"}, 72+8)
	if err != nil {
		t.Fatal(err)
	}
	wantFiles := []string{
		"model-00001-of-00003.safetensors",
		"model-00002-of-00003.safetensors",
		"model-00003-of-00003.safetensors",
		IndexFileName,
	}
	if !reflect.DeepEqual(written, wantFiles) {
		t.Fatalf("wrote %v, want %v", written, wantFiles)
	}
	if got := dirNames(t, dir); !reflect.DeepEqual(got, wantFiles) {
		t.Fatalf("directory holds %v, want %v", got, wantFiles)
	}

	// The index, read as plain JSON.
	raw, err := os.ReadFile(filepath.Join(dir, IndexFileName))
	if err != nil {
		t.Fatal(err)
	}
	var idx struct {
		Metadata  map[string]int64  `json:"metadata"`
		WeightMap map[string]string `json:"weight_map"`
	}
	if err := json.Unmarshal(raw, &idx); err != nil {
		t.Fatal(err)
	}
	if idx.Metadata["total_size"] != 216 {
		t.Errorf("total_size = %d, want 216", idx.Metadata["total_size"])
	}
	wantMap := map[string]string{
		"model.layers.a.weight": wantFiles[0], "model.layers.a.norm": wantFiles[0],
		"model.layers.b.weight": wantFiles[1], "model.layers.b.norm": wantFiles[1],
		"model.layers.c.weight": wantFiles[2], "model.layers.c.norm": wantFiles[2],
	}
	if !reflect.DeepEqual(idx.WeightMap, wantMap) {
		t.Errorf("weight_map = %v, want %v", idx.WeightMap, wantMap)
	}

	// Reopen through the index.
	m, err := OpenModelDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if len(m.Files()) != 3 || len(m.Names()) != 6 {
		t.Fatalf("%d files, %d names; want 3, 6", len(m.Files()), len(m.Names()))
	}
	for name, want := range data {
		got, err := m.Bytes(name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: bytes differ after the sharded round trip", name)
		}
		f, info, ok := m.Lookup(name)
		if !ok || filepath.Base(f.Path()) != wantMap[name] || info.ByteSize() != int64(len(want)) {
			t.Errorf("Lookup(%s) = %v, %+v, %v", name, f.Path(), info, ok)
		}
		if f.Metadata()["format"] != "pt" {
			t.Errorf("shard %s metadata %v, want format=pt", f.Path(), f.Metadata())
		}
	}
	if _, err := m.Bytes("lm_head.weight"); err == nil || !strings.Contains(err.Error(), "lm_head.weight") {
		t.Errorf("Bytes(missing) error = %v", err)
	}
}

func TestWriteModelDirSplitting(t *testing.T) {
	size := func(n int64) Tensor { return TensorFromBytes("t"+string(rune('a'+n%26)), U8, []int64{n}, nil) }
	cases := []struct {
		sizes []int64
		limit int64
		want  [][]int64
	}{
		{[]int64{5, 5, 5}, 10, [][]int64{{5, 5}, {5}}},
		{[]int64{5, 20, 5}, 10, [][]int64{{5}, {20}, {5}}}, // oversized stands alone
		{[]int64{20, 1}, 10, [][]int64{{20}, {1}}},
		{[]int64{3, 3, 3}, 0, [][]int64{{3, 3, 3}}}, // no limit
		{[]int64{10, 10}, 10, [][]int64{{10}, {10}}},
	}
	for _, c := range cases {
		var tensors []Tensor
		for _, s := range c.sizes {
			tensors = append(tensors, size(s))
		}
		shards, sizes := splitShards(tensors, c.limit)
		var got [][]int64
		for i, shard := range shards {
			var row []int64
			var sum int64
			for _, t := range shard {
				row = append(row, t.Shape[0])
				sum += t.Shape[0]
			}
			if sum != sizes[i] {
				t.Errorf("shard %d size %d, reported %d", i, sum, sizes[i])
			}
			got = append(got, row)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("split %v at %d = %v, want %v", c.sizes, c.limit, got, c.want)
		}
	}
}

// Everything fits: one model.safetensors, no index; a later sharded save
// into the same directory removes it, and a single save removes the shards.
func TestWriteModelDirSingleAndStaleFiles(t *testing.T) {
	dir := t.TempDir()
	tensors, data := layerTensors(2)
	if _, err := WriteModelDir(dir, tensors, nil, 1<<20); err != nil {
		t.Fatal(err)
	}
	if got := dirNames(t, dir); !reflect.DeepEqual(got, []string{SingleFileName}) {
		t.Fatalf("directory holds %v, want only %s", got, SingleFileName)
	}
	m, err := OpenModelDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range data {
		if got, _ := m.Bytes(name); !bytes.Equal(got, want) {
			t.Errorf("%s differs", name)
		}
	}
	m.Close()

	if _, err := WriteModelDir(dir, tensors, nil, 72); err != nil {
		t.Fatal(err)
	}
	want := []string{"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors", IndexFileName}
	if got := dirNames(t, dir); !reflect.DeepEqual(got, want) {
		t.Fatalf("after a sharded save the directory holds %v, want %v", got, want)
	}
	if _, err := WriteModelDir(dir, tensors, nil, 0); err != nil {
		t.Fatal(err)
	}
	if got := dirNames(t, dir); !reflect.DeepEqual(got, []string{SingleFileName}) {
		t.Fatalf("after a single save the directory holds %v, want only %s", got, SingleFileName)
	}
}

func TestOpenModelDirRejectsInconsistentIndex(t *testing.T) {
	tensors, _ := layerTensors(2)
	setup := func(t *testing.T) string {
		dir := t.TempDir()
		if _, err := WriteModelDir(dir, tensors, nil, 72); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	rewriteIndex := func(t *testing.T, dir string, edit func(map[string]string)) {
		raw, _ := os.ReadFile(filepath.Join(dir, IndexFileName))
		var idx shardIndex
		if err := json.Unmarshal(raw, &idx); err != nil {
			t.Fatal(err)
		}
		edit(idx.WeightMap)
		raw, _ = json.Marshal(idx)
		if err := os.WriteFile(filepath.Join(dir, IndexFileName), raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	shard1, shard2 := "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"
	cases := []struct {
		name string
		edit func(t *testing.T, dir string)
		want []string
	}{
		{"mapped name missing from its shard", func(t *testing.T, dir string) {
			rewriteIndex(t, dir, func(m map[string]string) { m["lm_head.weight"] = shard1 })
		}, []string{"lm_head.weight", shard1, "no such tensor"}},
		{"shard tensor not in the map", func(t *testing.T, dir string) {
			rewriteIndex(t, dir, func(m map[string]string) { delete(m, "model.layers.b.norm") })
		}, []string{shard2, "model.layers.b.norm", "does not list"}},
		{"tensor mapped to the wrong shard", func(t *testing.T, dir string) {
			rewriteIndex(t, dir, func(m map[string]string) { m["model.layers.b.norm"] = shard1 })
		}, []string{"model.layers.b.norm", shard1}},
		{"missing shard file", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, shard2))
		}, []string{shard2}},
		{"path escaping the directory", func(t *testing.T, dir string) {
			rewriteIndex(t, dir, func(m map[string]string) { m["x"] = "../model.safetensors" })
		}, []string{"../model.safetensors", "inside the directory"}},
		{"both single file and index", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, SingleFileName), rawFile("{}      ", 0), 0o644)
		}, []string{SingleFileName, IndexFileName, "stale"}},
		{"empty weight map", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, IndexFileName), []byte(`{"metadata":{"total_size":0},"weight_map":{}}`), 0o644)
		}, []string{"weight_map"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := setup(t)
			c.edit(t, dir)
			m, err := OpenModelDir(dir)
			if err == nil {
				m.Close()
				t.Fatalf("OpenModelDir succeeded, want an error containing %q", c.want)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
	if _, err := OpenModelDir(t.TempDir()); err == nil || !strings.Contains(err.Error(), "neither") {
		t.Errorf("empty directory: error = %v", err)
	}
}
