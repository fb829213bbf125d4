// Package doccheck holds a test that keeps every package's doc.go true: a
// package whose doc.go has a file index (lines naming "name.go" followed by
// its description) must list exactly its non-test Go files, doc.go itself
// optional.
//
// The files:
//
//	doc.go            this overview
//
// The check itself is doccheck_test.go (TestDocFileIndexes).
package doccheck
