// modeldir.go: the weights of a Hugging Face model directory, one file or
// several shards, behind one name → (file, info) lookup.
//
// A directory holds either
//
//	model.safetensors
//
// or shards listed by an index,
//
//	model.safetensors.index.json   {"metadata": {"total_size": N, ...},
//	                                "weight_map": {"<tensor>": "<shard file>"}}
//	model-00001-of-00003.safetensors, ...
//
// Both at once is refused as ambiguous: a stale file from an earlier save
// could otherwise be loaded silently. (transformers prefers the single file.)
//
// Checks across shards: every name in weight_map is a tensor of the shard it
// names, and every tensor of every listed shard is mapped to that shard (so a
// name held by two shards is refused too). The index's total_size is not
// checked: writers disagree on what it counts (tied weights, padding), so it
// is kept only as information.
package safetensors

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Hugging Face's file names for a model directory's weights.
const (
	SingleFileName = "model.safetensors"
	IndexFileName  = "model.safetensors.index.json"
)

// ModelDir is an open model directory: every shard mapped, every tensor
// name resolved to its shard.
type ModelDir struct {
	dir    string
	files  []*File        // sorted by file name
	byName map[string]int // tensor name → index into files
	names  []string       // sorted
}

// shardIndex is the JSON of model.safetensors.index.json.
type shardIndex struct {
	Metadata  map[string]any    `json:"metadata"`
	WeightMap map[string]string `json:"weight_map"`
}

// OpenModelDir opens the weights of the model directory dir: the single
// model.safetensors or the shards listed in model.safetensors.index.json,
// with the checks described in the file comment. Close releases every shard.
func OpenModelDir(dir string) (*ModelDir, error) {
	single := filepath.Join(dir, SingleFileName)
	indexPath := filepath.Join(dir, IndexFileName)
	hasSingle, err := exists(single)
	if err != nil {
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	hasIndex, err := exists(indexPath)
	if err != nil {
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	switch {
	case hasSingle && hasIndex:
		return nil, fmt.Errorf("safetensors: %s holds both %s and %s; one of them is stale: remove it", dir, SingleFileName, IndexFileName)
	case hasSingle:
		f, err := Open(single)
		if err != nil {
			return nil, err
		}
		m := &ModelDir{dir: dir, files: []*File{f}, byName: map[string]int{}, names: f.Names()}
		for _, name := range m.names {
			m.byName[name] = 0
		}
		return m, nil
	case hasIndex:
		return openSharded(dir, indexPath)
	}
	return nil, fmt.Errorf("safetensors: %s has neither %s nor %s: not a Hugging Face model directory with safetensors weights", dir, SingleFileName, IndexFileName)
}

func openSharded(dir, indexPath string) (_ *ModelDir, err error) {
	raw, err := os.ReadFile(indexPath)
	if err != nil {
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	var idx shardIndex
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&idx); err != nil {
		return nil, fmt.Errorf("safetensors: %s: %v", indexPath, err)
	}
	if len(idx.WeightMap) == 0 {
		return nil, fmt.Errorf("safetensors: %s: weight_map is missing or empty", indexPath)
	}
	wantByShard := map[string][]string{}
	for name, shard := range idx.WeightMap {
		if shard == "" || shard != filepath.Base(shard) || strings.ContainsAny(shard, `/\`) || shard == "." || shard == ".." {
			return nil, fmt.Errorf("safetensors: %s: weight_map[%q] = %q: must be a file name inside the directory", indexPath, name, shard)
		}
		wantByShard[shard] = append(wantByShard[shard], name)
	}
	shards := make([]string, 0, len(wantByShard))
	for s := range wantByShard {
		shards = append(shards, s)
	}
	sort.Strings(shards)

	m := &ModelDir{dir: dir, byName: make(map[string]int, len(idx.WeightMap))}
	defer func() {
		if err != nil {
			m.Close()
		}
	}()
	for i, shard := range shards {
		f, err := Open(filepath.Join(dir, shard))
		if err != nil {
			return nil, err
		}
		m.files = append(m.files, f)
		want := wantByShard[shard]
		sort.Strings(want)
		for _, name := range want {
			if _, ok := f.Info(name); !ok {
				return nil, fmt.Errorf("safetensors: %s maps tensor %q to %s, but that shard has no such tensor", indexPath, name, shard)
			}
			m.byName[name] = i
		}
		for _, name := range f.Names() {
			if mapped, ok := idx.WeightMap[name]; !ok {
				return nil, fmt.Errorf("safetensors: shard %s holds tensor %q, which %s does not list; the index is stale", shard, name, IndexFileName)
			} else if mapped != shard {
				return nil, fmt.Errorf("safetensors: shard %s holds tensor %q, which %s maps to %s; a tensor must live in exactly one shard", shard, name, IndexFileName, mapped)
			}
		}
	}
	m.names = make([]string, 0, len(m.byName))
	for name := range m.byName {
		m.names = append(m.names, name)
	}
	sort.Strings(m.names)
	return m, nil
}

// Dir is the directory the weights were opened from.
func (m *ModelDir) Dir() string { return m.dir }

// Names returns every tensor name across shards, sorted.
func (m *ModelDir) Names() []string { return append([]string(nil), m.names...) }

// Lookup returns the shard holding name and the tensor's info.
func (m *ModelDir) Lookup(name string) (*File, TensorInfo, bool) {
	i, ok := m.byName[name]
	if !ok {
		return nil, TensorInfo{}, false
	}
	info, _ := m.files[i].Info(name)
	return m.files[i], info, true
}

// Info returns the named tensor's dtype, shape and offsets in its shard.
func (m *ModelDir) Info(name string) (TensorInfo, bool) {
	_, info, ok := m.Lookup(name)
	return info, ok
}

// Bytes returns the named tensor's data, a read-only view valid until Close.
func (m *ModelDir) Bytes(name string) ([]byte, error) {
	f, _, ok := m.Lookup(name)
	if !ok {
		return nil, fmt.Errorf("safetensors: model directory %s has no tensor %q (it has %d tensors)", m.dir, name, len(m.names))
	}
	return f.Bytes(name)
}

// Files returns the open shards, sorted by file name.
func (m *ModelDir) Files() []*File { return append([]*File(nil), m.files...) }

// Close unmaps every shard.
func (m *ModelDir) Close() error {
	var errs []error
	for _, f := range m.files {
		errs = append(errs, f.Close())
	}
	return errors.Join(errs...)
}

func exists(path string) (bool, error) {
	_, err := os.Stat(path)
	if err == nil {
		return true, nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return false, err
}
