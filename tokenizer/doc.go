// Package tokenizer is troupe's own byte-level BPE tokenizer for the Qwen
// and Llama 3 families: read from a Hugging Face tokenizer.json, producing
// exactly the ids Hugging Face's tokenizers library produces, plus the
// Qwen2.5, Qwen3, Llama 3.0 and Llama 3.1+ chat templates and a writer of
// small byte-level tokenizers (Qwen or Llama 3 layout) for tiny test models.
//
// Why not a library: github.com/sugarme/tokenizer panics on the lookahead in
// Qwen's split pattern (Go's regexp has none), drops added tokens and is
// slow. This package needs only golang.org/x/text for NFC.
//
// Files, in pipeline order:
//
//	load.go, tokenizer_config.go  reading tokenizer.json / tokenizer_config.json; refusals
//	tokenizer.go                  Tokenizer: Encode, Decode, lookups, special ids
//	addedtokens.go                cutting added tokens out of the text
//	splitpattern.go               the Qwen and Llama 3 pre-tokenizers as a hand-written scanner
//	bpe.go                        rank-based merges of one piece
//	bytelevel.go                  GPT-2's byte alphabet, lossy UTF-8 for Decode
//	batch.go                      EncodeBatch on all CPUs
//	chat.go                       ApplyChatTemplate (Qwen2.5, Qwen3), family detection
//	chat_llama.go                 the Llama 3.0 and 3.1+ header-token templates
//	writer.go, trainmerges.go     WriteByteLevel and TrainMerges for tiny models
//	describe.go                   Describe / WriteTokenTable for `train tokenize`
//	fit.go                        CheckModel, CheckTemplate: a tokenizer of another family refused
//
// Where it departs from Hugging Face, knowingly:
//
//  1. Encode never adds special tokens (Qwen's post-processor adds none;
//     Llama 3.1's would add the BOS, which the chat templates write as text)
//     and computes no offsets.
//  2. Only the Qwen2/Qwen3 and Llama 3 configurations are read: other models
//     (SentencePiece-style BPE with byte fallback among them), normalisers,
//     pre-tokenizers and the lstrip/rstrip/single_word added-token options
//     are refused at Load with an error that names them.
//  3. Chat templates are rendered by Go code for the four families, not by a
//     Jinja engine: tools, tool_calls and a separate reasoning_content are not
//     rendered, and an unknown role is an error.
//
// The reference is the Rust library (npm "tokenizers" 0.23.2; for Llama 3
// its Python bindings 0.22.2), not
// transformers.js, where the two disagree: U+0085 (NEL) is whitespace and
// U+FEFF (BOM) is not, as in Oniguruma's \s, and "'ſ" is a contraction.
// testdata/tokenizer/README.md lists the evidence.
package tokenizer
