// shardwrite.go: writing a model directory's weights, split into shards by a
// byte limit the way Hugging Face's save_pretrained does.
//
// Splitting walks the tensors in the caller's order (normally module order,
// so that a layer's tensors share a shard) and starts a new shard when the
// next tensor would push the current one past maxShardBytes; a tensor larger
// than the limit gets a shard of its own. Sizes count tensor data only, not
// headers, as in huggingface_hub. Shards are named
// model-00001-of-00003.safetensors; when everything fits in one shard the
// result is a single model.safetensors and no index.
//
// Each file is written atomically (write.go), the index last, and then
// weight files of an earlier save that the new set does not include are
// removed, so the directory never ends up with both a model.safetensors and
// an index (OpenModelDir refuses that). The directory as a whole is not
// replaced atomically: for that, write into a ckpt temporary directory.
package safetensors

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"troupe/internal/atomicfile"
)

// shardFilePattern matches the shard names save_pretrained and this package
// write.
var shardFilePattern = regexp.MustCompile(`^model-[0-9]{5,}-of-[0-9]{5,}\.safetensors$`)

// WriteModelDir writes tensors into dir (created if missing) as a single
// model.safetensors, or as shards of at most maxShardBytes of tensor data
// each plus model.safetensors.index.json. maxShardBytes ≤ 0 means no limit.
// metadata (may be nil) goes into every file's header. It returns the names
// of the files written, the index last.
func WriteModelDir(dir string, tensors []Tensor, metadata map[string]string, maxShardBytes int64) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	// Validate everything before writing anything.
	if _, _, err := layout(tensors, metadata); err != nil {
		return nil, fmt.Errorf("safetensors: writing %s: %w", dir, err)
	}
	shards, sizes := splitShards(tensors, maxShardBytes)

	var written []string
	if len(shards) <= 1 {
		if err := Write(filepath.Join(dir, SingleFileName), tensors, metadata); err != nil {
			return nil, err
		}
		written = []string{SingleFileName}
	} else {
		idx := shardIndex{Metadata: map[string]any{}, WeightMap: map[string]string{}}
		var total int64
		for i, shard := range shards {
			name := fmt.Sprintf("model-%05d-of-%05d.safetensors", i+1, len(shards))
			if err := Write(filepath.Join(dir, name), shard, metadata); err != nil {
				return nil, err
			}
			for _, t := range shard {
				idx.WeightMap[t.Name] = name
			}
			total += sizes[i]
			written = append(written, name)
		}
		idx.Metadata["total_size"] = total
		raw, err := json.MarshalIndent(idx, "", "  ")
		if err != nil {
			return nil, fmt.Errorf("safetensors: encoding %s: %w", IndexFileName, err)
		}
		raw = append(raw, '\n')
		indexPath := filepath.Join(dir, IndexFileName)
		if err := atomicfile.WriteBytes(indexPath, raw); err != nil {
			return nil, fmt.Errorf("safetensors: writing %s: %w", indexPath, err)
		}
		written = append(written, IndexFileName)
	}
	if err := removeStaleWeights(dir, written); err != nil {
		return written, err
	}
	return written, nil
}

// splitShards groups tensors into shards of at most maxBytes of data each,
// in order; it returns the shards and their data sizes.
func splitShards(tensors []Tensor, maxBytes int64) ([][]Tensor, []int64) {
	var shards [][]Tensor
	var sizes []int64
	var current []Tensor
	var currentSize int64
	flush := func() {
		if len(current) > 0 {
			shards = append(shards, current)
			sizes = append(sizes, currentSize)
		}
		current, currentSize = nil, 0
	}
	for _, t := range tensors {
		size, _ := ByteSize(t.DType, t.Shape) // validated by layout
		if maxBytes > 0 && currentSize+size > maxBytes && len(current) > 0 {
			flush()
		}
		current = append(current, t)
		currentSize += size
		if maxBytes > 0 && size > maxBytes {
			flush() // an oversized tensor stands alone
		}
	}
	flush()
	return shards, sizes
}

// removeStaleWeights deletes weight files in dir left by an earlier save
// that are not among keep.
func removeStaleWeights(dir string, keep []string) error {
	kept := map[string]bool{}
	for _, k := range keep {
		kept[k] = true
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("safetensors: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		stale := name == SingleFileName || name == IndexFileName || shardFilePattern.MatchString(name)
		if stale && !kept[name] && e.Type().IsRegular() {
			if err := os.Remove(filepath.Join(dir, name)); err != nil {
				return fmt.Errorf("safetensors: removing stale weight file: %w", err)
			}
		}
	}
	return atomicfile.SyncDir(dir)
}
