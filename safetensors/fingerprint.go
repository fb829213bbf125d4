// fingerprint.go: a short identity of a model directory's weights, cheap
// enough to take at every resume and export of a LoRA run whose frozen base
// lives outside the checkpoint.
//
// The fingerprint is SHA-256 over the weights' manifest — every tensor's
// name, dtype and shape, in name order — and over each tensor's data: all
// of it up to 64 KiB, else 16 windows of 4 KiB spread evenly from its
// first byte to its last. A different architecture changes the manifest;
// a fine-tune (or another checkpoint of the same model) changes every
// tensor, so every window. It reads ~64 KiB per tensor (18 MiB for
// Qwen2.5-0.5B's 290) rather than the whole model.
//
// What it is not: a hash of every byte. Two directories that differ only
// between the windows (an edit of a few values of one large tensor) get
// the same fingerprint; the file names, shard layout and metadata do not
// enter it (a resharded copy of a model is the same model).
package safetensors

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"io"
)

const (
	fingerprintWhole   = 64 << 10 // tensors up to this size are hashed whole
	fingerprintWindows = 16
	fingerprintWindow  = 4 << 10
)

// Fingerprint returns the hex SHA-256 fingerprint of the directory's
// weights (see the file comment).
func (m *ModelDir) Fingerprint() (string, error) {
	h := sha256.New()
	for _, name := range m.names {
		f, info, _ := m.Lookup(name)
		data, err := f.Bytes(name)
		if err != nil {
			return "", err
		}
		writeString(h, name)
		writeString(h, info.DType.String())
		binary.Write(h, binary.LittleEndian, int64(len(info.Shape)))
		binary.Write(h, binary.LittleEndian, info.Shape)
		n := int64(len(data))
		if n <= fingerprintWhole {
			h.Write(data)
			continue
		}
		for i := range int64(fingerprintWindows) {
			at := i * (n - fingerprintWindow) / (fingerprintWindows - 1)
			h.Write(data[at : at+fingerprintWindow])
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func writeString(w io.Writer, s string) {
	binary.Write(w, binary.LittleEndian, int64(len(s)))
	io.WriteString(w, s)
}
