// Package ckpt saves and restores training checkpoints: one directory per
// saved step under a run's checkpoints/ root,
//
//	checkpoints/
//	  step-000100/
//	    MANIFEST.json        files, sizes, sha256, step, format version
//	    <model weights, optimizer state, RNG state, train state, config>
//	  step-000200/
//	  .tmp-step-000300-…/    a save in progress (or left by a crash)
//
// The pure-Go half (this package's writer.go, manifest.go, listing.go and
// retention.go) makes directories atomic and verifiable, and knows nothing of
// what the files hold:
//   - Begin creates a temporary directory; the caller writes files into it;
//     Commit hashes them into MANIFEST.json, fsyncs everything and renames the
//     directory into place. A crash before the rename leaves only a .tmp-*
//     directory, which the next save removes; a crash after it leaves a
//     complete checkpoint.
//   - Open and Latest verify every file against the manifest, so a
//     truncated or bit-flipped checkpoint is refused, never loaded.
//   - Prune keeps the newest K checkpoints.
//
// The torch-dependent half (what goes into the files: model weights through
// safetensors, optimizer and RNG state) lives in separate files.
//
// What it deliberately is not: a storage layer for remote or object stores,
// or a format with partial reads; a checkpoint is a plain directory that
// standard tools can copy, inspect and delete.
package ckpt
