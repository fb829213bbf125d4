package ckpt

// The external check of Export: transformers loads what Export wrote. Runs
// with the Python reference environment (internal/pyref: scripts/pyref, or
// TROUPE_TRANSFORMERS_PYTHON naming a python3 with torch and transformers,
// or python3 when TROUPE_CUDA=1 on the GPU machines), and is skipped where
// there is none (failed under TROUPE_PYREF_REQUIRED=1, as in `make test`).
//
// For each variant the test exports a tiny random model, reloads the export
// with model.Load, and writes the reloaded model's float32 CPU logits, its
// greedy continuation of a prompt (Generate, stopping at the export's EOS
// ids), the Go tokenizer's ids of a text, of every document of
// testdata/tokenizer/corpus.json, and its chat rendering, and the expected
// generation ids into <variant>.reference.json beside the export; then
// testdata/ckpt/check_transformers.py loads every export with
// AutoModelForCausalLM, AutoTokenizer and GenerationConfig and compares
// (logits to 1e-4 absolute; generate's greedy tokens one for one, unless
// they part at a near tie; ids, rendering and eos exactly). The tokenizers:
// the pure byte-level one WriteByteLevel writes, and testdata/tokenizer/tiny
// (300 learned merges).

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"troupe/internal/pyref"
	"troupe/model"
	"troupe/tokenizer"
	"troupe/torch"
)

const transformersPythonEnv = "TROUPE_TRANSFORMERS_PYTHON"

// exportReference is <variant>.reference.json.
type exportReference struct {
	Sequences  [][]int       `json:"sequences"`
	Logits     [][][]float32 `json:"logits"` // per sequence (T, V), float32 model on the CPU
	Text       string        `json:"text"`
	TextIDs    []int         `json:"text_ids"`
	Chat       string        `json:"chat"` // the chat template rendered with a generation prompt
	EOSTokenID []int         `json:"eos_token_id"`
	DType      string        `json:"dtype"` // torch_dtype written into config.json

	GreedyPrompt []int       `json:"greedy_prompt"`
	GreedyMax    int         `json:"greedy_max_new_tokens"`
	GreedyTokens []int       `json:"greedy_tokens"` // troupe's, the stop token included
	Corpus       []corpusDoc `json:"corpus"`
}

// corpusDoc is one document of testdata/tokenizer/corpus.json and troupe's
// ids for it.
type corpusDoc struct {
	Name string `json:"name"`
	Text string `json:"text"`
	IDs  []int  `json:"ids"`
}

func transformersPython(t *testing.T) string {
	t.Helper()
	if p := os.Getenv(transformersPythonEnv); p != "" {
		return p
	}
	if os.Getenv("TROUPE_CUDA") == "1" {
		return "python3"
	}
	return pyref.Python(t)
}

// corpusDocs reads the documents of testdata/tokenizer/corpus.json.
func corpusDocs(t *testing.T) []corpusDoc {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "testdata", "tokenizer", "corpus.json"))
	if err != nil {
		t.Fatal(err)
	}
	var c struct{ Docs []corpusDoc }
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Docs) == 0 {
		t.Fatal("testdata/tokenizer/corpus.json has no docs")
	}
	return c.Docs
}

// greedy is m's greedy continuation of prompt, up to n tokens or a stop id.
func greedy(t *testing.T, m *model.Model, prompt []int, n int, stop []int) []int {
	t.Helper()
	res, err := m.Generate([]model.GenRequest{{Prompt: prompt, MaxNewTokens: n, Stop: stop, Sampling: model.Sampling{Temperature: 0}}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res[0].Tokens
}

func TestExportLoadsInTransformers(t *testing.T) {
	python := transformersPython(t)
	root := t.TempDir()
	byteDir := filepath.Join(root, "tokenizer-src")
	if err := tokenizer.WriteByteLevel(byteDir, tokenizer.ByteLevelOptions{}); err != nil {
		t.Fatal(err)
	}
	merged, err := filepath.Abs(filepath.Join("..", "testdata", "tokenizer", "tiny"))
	if err != nil {
		t.Fatal(err)
	}
	docs := corpusDocs(t)
	qwen2 := tinyConfig()
	qwen2.Family, qwen2.AttentionBias, qwen2.TieEmbeddings = model.Qwen2, true, true
	bigVocab := tinyConfig()
	bigVocab.VocabSize = 576 // tiny/: 556 byte-level tokens and merges + 5 added
	for _, v := range []struct {
		name   string
		cfg    model.Config
		opt    ExportOptions
		tokDir string
	}{
		{"qwen3-f32-sharded", tinyConfig(), ExportOptions{MaxShardBytes: 30_000, Generation: GenerationDefaults{DoSample: true, Temperature: 0.7, TopP: 0.8, TopK: 20}}, byteDir},
		{"qwen3-bf16", tinyConfig(), ExportOptions{DType: "bfloat16"}, byteDir},
		{"qwen2-tied-f32", qwen2, ExportOptions{}, byteDir},
		{"qwen3-merges-f32", bigVocab, ExportOptions{}, merged},
	} {
		tokDir := v.tokDir
		tok, err := tokenizer.Load(tokDir)
		if err != nil {
			t.Fatal(err)
		}
		m := newModel(t, v.cfg, 4, torch.Float32)
		spread(t, m)
		dst := filepath.Join(root, v.name)
		if err := Export(dst, m, tokDir, v.opt); err != nil {
			t.Fatalf("%s: %v", v.name, err)
		}
		reloaded, err := model.Load(dst, model.Options{DType: torch.Float32, Device: torch.CPU})
		if err != nil {
			t.Fatalf("%s: %v", v.name, err)
		}
		ref := exportReference{
			Sequences: [][]int{{1, 2, 3, 257, 100, 258}, {72, 105, 33}},
			Text:      "Hi there!<|im_end|>\n<think>x</think>",
			DType:     map[string]string{"": "float32", "bfloat16": "bfloat16"}[v.opt.DType],
		}
		ref.TextIDs = tok.Encode(ref.Text)
		if ref.Chat, err = tok.ApplyChatTemplate([]tokenizer.Message{{Role: "user", Content: "2+2?"}}, tokenizer.ChatOptions{AddGenerationPrompt: true}); err != nil {
			t.Fatal(err)
		}
		ref.EOSTokenID = appendUnique(nil, tok.Special().EOS, tok.Special().IMEnd)
		ref.EOSTokenID = appendUnique(ref.EOSTokenID, v.cfg.EOSTokenIDs...)
		for _, seq := range ref.Sequences {
			lg := logitsRows(t, reloaded, seq)
			ref.Logits = append(ref.Logits, lg)
		}
		ref.GreedyPrompt, ref.GreedyMax = ref.Sequences[0], 24
		ref.GreedyTokens = greedy(t, reloaded, ref.GreedyPrompt, ref.GreedyMax, ref.EOSTokenID)
		for _, d := range docs {
			ref.Corpus = append(ref.Corpus, corpusDoc{Name: d.Name, Text: d.Text, IDs: tok.Encode(d.Text)})
		}
		reloaded.Free()
		if err := SaveJSON(filepath.Join(root, v.name+".reference.json"), ref); err != nil {
			t.Fatal(err)
		}
	}
	script, err := filepath.Abs(filepath.Join("..", "testdata", "ckpt", "check_transformers.py"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(python, script, root).CombinedOutput()
	t.Logf("%s %s %s:\n%s", python, script, root, out)
	if err != nil {
		t.Fatalf("transformers check failed: %v", err)
	}
}

// spread redraws the weights so that the logits spread over a few units and
// a loader that dropped a norm gain or a bias would show: matrices
// N(0, 0.1²), norm gains 1 + 0.2·N(0, 1), biases 0.2·N(0, 1).
func spread(t *testing.T, m *model.Model) {
	t.Helper()
	var err error
	func() {
		defer torch.Recover(&err)
		g := torch.NewGenerator(torch.CPU, 77)
		defer g.Free()
		torch.NoGrad(func() {
			for _, p := range m.Params() {
				s := torch.NewScope()
				noise := torch.Randn(p.T.Shape(), torch.Float32, torch.CPU, g)
				switch {
				case p.T.Dim() == 2:
					p.T.CopyFrom(noise.MulScalar(0.1))
				case strings.HasSuffix(p.Name, ".bias"):
					p.T.CopyFrom(noise.MulScalar(0.2))
				default:
					p.T.CopyFrom(noise.MulScalar(0.2).AddScalar(1))
				}
				s.Close()
			}
		})
	}()
	if err != nil {
		t.Fatal(err)
	}
}

// logitsRows runs one unpadded sequence and returns its (T, V) logits.
func logitsRows(t *testing.T, m *model.Model, seq []int) [][]float32 {
	t.Helper()
	s := torch.NewScope()
	defer s.Close()
	in, err := model.Pack([][]int{seq}, model.PadRight, torch.CPU)
	if err != nil {
		t.Fatal(err)
	}
	lg, err := m.Logits(in)
	if err != nil {
		t.Fatal(err)
	}
	flat, V := lg.Float32s(), m.Config.VocabSize
	rows := make([][]float32, len(seq))
	for i := range rows {
		rows[i] = flat[i*V : (i+1)*V]
	}
	return rows
}
