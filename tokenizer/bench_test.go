// Benchmarks on the ~1 MB benchmark corpus: the committed test corpus plus
// the golang.org/x/text files listed in modcache_reference.json (French,
// Japanese, Chinese and Korean literature and Go source), whose ids the
// tests check against Hugging Face.
//
//	go test ./tokenizer -run '^$' -bench . -benchtime 5x
//
// tok/s is tokens produced per second of wall time.

package tokenizer

import (
	"testing"
)

func benchCorpus(b *testing.B) (texts []string, bytes int) {
	for _, d := range testCorpus(b) {
		texts = append(texts, d.Text)
	}
	_, contents := modcacheFiles(b)
	for _, c := range contents {
		texts = append(texts, string(c))
	}
	for _, s := range texts {
		bytes += len(s)
	}
	return texts, bytes
}

func BenchmarkEncode(b *testing.B) {
	tok := fixtureTokenizer(b, "qwen3")
	texts, size := benchCorpus(b)
	b.SetBytes(int64(size))
	b.ResetTimer()
	tokens := 0
	for i := 0; i < b.N; i++ {
		for _, s := range texts {
			tokens += len(tok.Encode(s))
		}
	}
	b.ReportMetric(float64(tokens)/b.Elapsed().Seconds(), "tok/s")
}

func BenchmarkEncodeBatch(b *testing.B) {
	tok := fixtureTokenizer(b, "qwen3")
	texts, size := benchCorpus(b)
	b.SetBytes(int64(size))
	b.ResetTimer()
	tokens := 0
	for i := 0; i < b.N; i++ {
		for _, ids := range tok.EncodeBatch(texts) {
			tokens += len(ids)
		}
	}
	b.ReportMetric(float64(tokens)/b.Elapsed().Seconds(), "tok/s")
}

func BenchmarkDecode(b *testing.B) {
	tok := fixtureTokenizer(b, "qwen3")
	texts, size := benchCorpus(b)
	encoded := tok.EncodeBatch(texts)
	b.SetBytes(int64(size))
	b.ResetTimer()
	tokens := 0
	for i := 0; i < b.N; i++ {
		for _, ids := range encoded {
			tokens += len(ids)
			_ = tok.Decode(ids)
		}
	}
	b.ReportMetric(float64(tokens)/b.Elapsed().Seconds(), "tok/s")
}

func BenchmarkLoad(b *testing.B) {
	dir := repoRoot(b) + "/.cache/tokenizer/qwen3"
	fixtureTokenizer(b, "qwen3") // fail or skip with the fixture message if missing
	for i := 0; i < b.N; i++ {
		if _, err := Load(dir); err != nil {
			b.Fatal(err)
		}
	}
}
