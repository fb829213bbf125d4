package ckpt

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzManifest feeds arbitrary MANIFEST.json bytes to Open: an error or a
// checkpoint whose listed files all verified — never a panic, and never a
// file name outside the directory.
// Run longer with: go test -run '^$' -fuzz=FuzzManifest ./ckpt/
func FuzzManifest(f *testing.F) {
	f.Add([]byte(`{"format_version":1,"step":3,"created":"2026-01-01T00:00:00Z","files":[{"name":"a","size":1,"sha256":"ca978112ca1bbdcafac231b39a23dc4da786eff8146d6c7a5c8b9b3ec8d5e7ad"}]}`))
	f.Add([]byte(`{"format_version":1,"step":0,"files":[{"name":"../x","size":0,"sha256":""}]}`))
	f.Add([]byte(`{"format_version":1,"step":-1,"files":null}`))
	f.Add([]byte(`{`))
	f.Fuzz(func(t *testing.T, manifest []byte) {
		root := t.TempDir()
		dir := filepath.Join(root, DirName(3))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, "a"), []byte("a"), 0o644)
		os.WriteFile(filepath.Join(dir, ManifestName), manifest, 0o644)
		cp, err := Open(dir)
		if err != nil {
			return
		}
		for _, fe := range cp.Manifest.Files {
			if !validRelativePath(fe.Name) {
				t.Fatalf("accepted a file name outside the checkpoint: %q", fe.Name)
			}
		}
	})
}
