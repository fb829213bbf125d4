// files.go: small files of a checkpoint written atomically — any bytes
// (WriteFile: the resolved YAML config the caller renders) and JSON values
// (SaveJSON/LoadJSON: the train state — step, data position, counters, Go-side
// seeds and cursors).
//
// WriteFile writes a temporary file in the destination directory, fsyncs it,
// renames it over the final name and fsyncs the directory: a crash leaves the
// old file or the new one, never a torn one (a ".<name>.tmp-*" file may be
// left behind). Inside a Writer's directory Commit fsyncs again and hashes
// everything; WriteFile is atomic on its own so that it also serves outside a
// checkpoint (export, metrics side files).
//
// LoadJSON is strict, like the config loader: an unknown field is an error,
// not a silently dropped value, because a train state written by a newer
// build and read by an older one would otherwise resume with fields lost.
//
// Not here: tensors (weights.go, optimizer.go, rng.go).
package ckpt

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"troupe/internal/atomicfile"
)

// WriteFile writes data to path atomically (temporary file, fsync, rename,
// fsync of the directory). The directory must exist.
func WriteFile(path string, data []byte) error {
	if err := atomicfile.WriteBytes(path, data); err != nil {
		return fmt.Errorf("ckpt: writing %s: %w", path, err)
	}
	return nil
}

// SaveJSON writes v as indented JSON (with a final newline) to path
// atomically.
func SaveJSON(path string, v any) error {
	raw, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("ckpt: encoding %s: %w", path, err)
	}
	return WriteFile(path, append(raw, '\n'))
}

// LoadJSON reads path into v strictly: unknown fields and anything after
// the one JSON value are errors naming the file.
func LoadJSON(path string, v any) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("ckpt: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("ckpt: %s: %v (was it written by a newer troupe, or edited by hand?)", path, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("ckpt: %s: unexpected data after the JSON value", path)
	}
	return nil
}
