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
//   - writer.go: Begin creates a temporary directory; the caller writes files into it;
//     Commit hashes them into MANIFEST.json, fsyncs everything and renames the
//     directory into place. A crash before the rename leaves only a .tmp-*
//     directory, which the next save removes; a crash after it leaves a
//     complete checkpoint.
//   - manifest.go: MANIFEST.json, the files with their sizes and hashes.
//   - listing.go: Open and Latest verify every file against the manifest, so a
//     truncated or bit-flipped checkpoint is refused, never loaded, and so
//     is one holding a file the manifest does not list.
//   - retention.go: Prune keeps the newest K checkpoints, Abandon drops
//     those after a step (a run resumed from an older one), and both clean
//     up after interrupted saves.
//   - integrity.go: a refused checkpoint's error names the checkpoint to
//     use instead; CheckStep cross-checks the step a checkpoint's train
//     state records against its manifest and directory name.
//
// The torch-dependent half fills a checkpoint and exports models:
//   - weights.go: SaveWeights/LoadWeights, a model's weights in its own dtype,
//     loaded back in place (the optimizer's references stay valid), strictly;
//     a weight that is not finite is refused before any is copied.
//   - optimizer.go: SaveOptimizer/LoadOptimizer, AdamW moments, master copies
//     and step counts keyed by parameter name; a non-finite state is refused.
//   - modelstate.go: SaveModelState/LoadModelState, both of the above in
//     models/<name>/, checked together before either is changed.
//   - rng.go: SaveGenerators/LoadGenerators, torch generator states.
//   - files.go: WriteFile, SaveJSON/LoadJSON for the train state and the
//     resolved config.
//   - export.go: Export, a Hugging Face directory per trained model.
//   - exportcheck.go: NarrowingNote, what an export's dtype loses; a float16
//     export of weights beyond its range is refused.
//
// A checkpoint as the training loop writes it:
//
//	step-000100/
//	  MANIFEST.json
//	  config.yaml                       the resolved run config (WriteFile)
//	  train_state.json                  step, data position, counters (SaveJSON)
//	  rng.safetensors                   generator states (SaveGenerators)
//	  models/<name>/config.json         per trained model (SaveModelState)
//	  models/<name>/model.safetensors
//	  models/<name>/optimizer.safetensors
//
// Exact resume needs more than the files: every torch op of the run on one
// goroutine locked to its OS thread (libtorch orders the backward pass by
// per-thread counters, see resume_test.go), and every random draw from a
// generator that is saved.
//
// What it deliberately is not: a storage layer for remote or object stores,
// or a format with partial reads; a checkpoint is a plain directory that
// standard tools can copy, inspect and delete.
package ckpt
