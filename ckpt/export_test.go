package ckpt

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"troupe/model"
	"troupe/safetensors"
	"troupe/tokenizer"
	"troupe/torch"
)

// chatTemplateJinja is a stand-in chat template file; Export must copy it
// verbatim.
const chatTemplateJinja = "{%- for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{%- endfor %}"

// writeTokenizer writes a byte-level tokenizer (256 bytes + the Qwen added
// tokens, EOS <|im_end|> = 258, pad <|endoftext|> = 256) and a
// chat_template.jinja into a temporary directory.
func writeTokenizer(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tokenizer")
	if err := tokenizer.WriteByteLevel(dir, tokenizer.ByteLevelOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "chat_template.jinja"), []byte(chatTemplateJinja), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func logitsOf(t *testing.T, m *model.Model) []float32 {
	t.Helper()
	s := torch.NewScope()
	defer s.Close()
	in, err := model.Pack([][]int{{1, 2, 3, 257, 100, 258}, {5, 6, 7}}, model.PadRight, torch.CPU)
	if err != nil {
		t.Fatal(err)
	}
	lg, err := m.Logits(in)
	if err != nil {
		t.Fatal(err)
	}
	return lg.Float32s()
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

// An export reloads with model.Load to identical logits, single-file and
// sharded, and carries a loadable tokenizer and a generation config.
func TestExportReloads(t *testing.T) {
	cfg := tinyConfig()
	m := newModel(t, cfg, 5, torch.Float32)
	want := logitsOf(t, m)
	tok := writeTokenizer(t)

	for _, tc := range []struct {
		name     string
		maxShard int64
		files    []string
	}{
		{"single", 0, []string{"chat_template.jinja", "config.json", "generation_config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"}},
		// 30 kB: the 34.8 kB embedding gets a shard of its own, the layers share others
		{"sharded", 30_000, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "export", "policy")
			if err := Export(dst, m, tok, ExportOptions{MaxShardBytes: tc.maxShard}); err != nil {
				t.Fatal(err)
			}
			names := dirNames(t, dst)
			if tc.files != nil && !reflect.DeepEqual(names, tc.files) {
				t.Errorf("export holds %v, want %v", names, tc.files)
			}
			if tc.files == nil {
				joined := strings.Join(names, " ")
				if !strings.Contains(joined, safetensors.IndexFileName) || strings.Contains(joined, " model.safetensors ") || !strings.Contains(joined, "-of-0000") {
					t.Errorf("a 30 kB shard limit should give shards and an index, got %v", names)
				}
			}
			if got := dirNames(t, filepath.Dir(dst)); !reflect.DeepEqual(got, []string{"policy"}) {
				t.Errorf("export parent holds %v, want only policy (no temporary directories)", got)
			}
			loaded, err := model.Load(dst, model.Options{DType: torch.Float32, Device: torch.CPU})
			if err != nil {
				t.Fatal(err)
			}
			defer loaded.Free()
			if got := logitsOf(t, loaded); !reflect.DeepEqual(got, want) {
				t.Error("logits of the reloaded export differ from the model's")
			}
			tk, err := tokenizer.Load(dst)
			if err != nil {
				t.Fatal(err)
			}
			if tk.Special().EOS != 258 || !reflect.DeepEqual(tk.Encode("hi<|im_end|>"), []int{'h', 'i', 258}) {
				t.Errorf("exported tokenizer: EOS %d, ids %v", tk.Special().EOS, tk.Encode("hi<|im_end|>"))
			}
			jinja, _ := os.ReadFile(filepath.Join(dst, "chat_template.jinja"))
			if string(jinja) != chatTemplateJinja {
				t.Errorf("chat_template.jinja not copied verbatim: %q", jinja)
			}
		})
	}
}

// The exported dtype is applied by rounding, exactly as the safetensors
// package's independent float32 → bf16 conversion rounds, and config.json
// names it.
func TestExportConvertsDType(t *testing.T) {
	m := newModel(t, tinyConfig(), 5, torch.Float32)
	dst := filepath.Join(t.TempDir(), "bf16")
	if err := Export(dst, m, writeTokenizer(t), ExportOptions{DType: "bf16"}); err != nil {
		t.Fatal(err)
	}
	f, err := safetensors.Open(filepath.Join(dst, safetensors.SingleFileName))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range m.Params() {
		info, _ := f.Info(p.Name)
		if info.DType != safetensors.BF16 {
			t.Fatalf("%s exported as %v, want BF16", p.Name, info.DType)
		}
		got, _ := f.Bytes(p.Name)
		want := make([]byte, 0, len(got))
		for _, v := range p.T.Float32s() {
			b := safetensors.Float32ToBF16(v)
			want = append(want, byte(b), byte(b>>8))
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: exported bf16 bytes differ from round-to-nearest-even of the f32 weights", p.Name)
		}
	}
	cfg, err := model.LoadConfig(dst)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.DType != "bfloat16" {
		t.Errorf("config.json torch_dtype %q, want bfloat16", cfg.DType)
	}
	if _, err := model.Load(dst, model.Options{DType: torch.BFloat16, Device: torch.CPU}); err != nil {
		t.Errorf("model.Load of the bf16 export: %v", err)
	}
}

func TestExportGenerationConfig(t *testing.T) {
	cfg := tinyConfig()
	bos := 256
	cfg.BOSTokenID = &bos
	cfg.EOSTokenIDs = []int{256}
	m := newModel(t, cfg, 5, torch.Float32)
	tok := writeTokenizer(t)

	read := func(dst string) map[string]any {
		t.Helper()
		raw, err := os.ReadFile(filepath.Join(dst, GenerationConfigFileName))
		if err != nil {
			t.Fatal(err)
		}
		var out map[string]any
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatal(err)
		}
		return out
	}

	dst := filepath.Join(t.TempDir(), "greedy")
	if err := Export(dst, m, tok, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	// tokenizer EOS <|im_end|> 258, then the config's 256 (<|im_start|> 257 is not an end)
	want := map[string]any{"bos_token_id": 256.0, "eos_token_id": []any{258.0, 256.0}, "pad_token_id": 256.0, "do_sample": false}
	if got := read(dst); !reflect.DeepEqual(got, want) {
		t.Errorf("generation_config.json = %v, want %v", got, want)
	}

	sampled := ExportOptions{Generation: GenerationDefaults{DoSample: true, Temperature: 0.7, TopP: 0.9, TopK: 20, EOSTokenIDs: []int{258}}}
	if err := Export(dst, m, tok, sampled); err != nil {
		t.Fatal(err)
	}
	want = map[string]any{"bos_token_id": 256.0, "eos_token_id": 258.0, "pad_token_id": 256.0, "do_sample": true, "temperature": 0.7, "top_p": 0.9, "top_k": 20.0}
	if got := read(dst); !reflect.DeepEqual(got, want) {
		t.Errorf("generation_config.json = %v, want %v", got, want)
	}
}

func TestExportRefusals(t *testing.T) {
	m := newModel(t, tinyConfig(), 5, torch.Float32)
	tok := writeTokenizer(t)
	root := t.TempDir()

	notModel := filepath.Join(root, "notes")
	if err := os.MkdirAll(notModel, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(notModel, "todo.txt"), []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}

	small := tinyConfig()
	small.VocabSize = 200
	smallModel := newModel(t, small, 5, torch.Float32)

	for _, tc := range []struct {
		name string
		dst  string
		m    *model.Model
		tok  string
		opt  ExportOptions
		want string
	}{
		{"not a model dir", notModel, m, tok, ExportOptions{}, "holds neither config.json nor adapter_config.json"},
		{"bad dtype", filepath.Join(root, "a"), m, tok, ExportOptions{DType: "int8"}, `dtype "int8": must be float32, bfloat16 or float16`},
		{"temperature without sampling", filepath.Join(root, "b"), m, tok, ExportOptions{Generation: GenerationDefaults{Temperature: 0.7}}, "do_sample is false"},
		{"top_p", filepath.Join(root, "c"), m, tok, ExportOptions{Generation: GenerationDefaults{DoSample: true, TopP: 1.5}}, "top_p must be in (0, 1], got 1.5"},
		{"eos outside vocab", filepath.Join(root, "d"), m, tok, ExportOptions{Generation: GenerationDefaults{EOSTokenIDs: []int{999}}}, "eos token id 999 is outside the vocabulary [0, 272)"},
		{"no tokenizer", filepath.Join(root, "e"), m, filepath.Join(root, "missing"), ExportOptions{}, "missing"},
		{"no tokenizer dir", filepath.Join(root, "e"), m, "", ExportOptions{}, "no tokenizer directory given"},
		{"tokenizer of another model", filepath.Join(root, "f"), smallModel, tok, ExportOptions{}, "the tokenizer has 261 tokens but the model's vocabulary is 200; it is not this model's tokenizer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Export(tc.dst, tc.m, tc.tok, tc.opt)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Export: %v, want an error containing %q", err, tc.want)
			}
		})
	}
	if data, err := os.ReadFile(filepath.Join(notModel, "todo.txt")); err != nil || string(data) != "keep me" {
		t.Errorf("a refused export touched %s: %q, %v", notModel, data, err)
	}
	if got := dirNames(t, root); !reflect.DeepEqual(got, []string{"notes"}) {
		t.Errorf("refused exports left %v behind", got)
	}
}

// Re-exporting replaces the old directory whole: a sharded export followed
// by a single-file one leaves no shards or index behind.
func TestExportReplacesWhole(t *testing.T) {
	m := newModel(t, tinyConfig(), 5, torch.Float32)
	tok := writeTokenizer(t)
	dst := filepath.Join(t.TempDir(), "policy")
	if err := Export(dst, m, tok, ExportOptions{MaxShardBytes: 30_000}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dst, "stale.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Export(dst, m, tok, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	want := []string{"chat_template.jinja", "config.json", "generation_config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"}
	if got := dirNames(t, dst); !reflect.DeepEqual(got, want) {
		t.Errorf("after re-export: %v, want %v", got, want)
	}
	if got := dirNames(t, filepath.Dir(dst)); !reflect.DeepEqual(got, []string{"policy"}) {
		t.Errorf("parent holds %v", got)
	}
}

// A crash between moving the old export aside and renaming the new one in
// leaves only .old-export-<name>-*; the next export puts it back first, and
// stale temporary directories are removed.
func TestExportRecoversInterruptedReplace(t *testing.T) {
	parent := t.TempDir()
	old := filepath.Join(parent, ".old-export-policy-0a1b2c")
	if err := os.MkdirAll(old, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(old, "config.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{".tmp-export-policy-123", ".tmp-export-policy-2-456", "policy-2"} {
		if err := os.MkdirAll(filepath.Join(parent, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := recoverExport(parent, "policy"); err != nil {
		t.Fatal(err)
	}
	want := []string{".tmp-export-policy-2-456", "policy", "policy-2"} // another destination's leftovers stay
	if got := dirNames(t, parent); !reflect.DeepEqual(got, want) {
		t.Errorf("after recovery: %v, want %v", got, want)
	}
	if _, err := os.Stat(filepath.Join(parent, "policy", "config.json")); err != nil {
		t.Errorf("the previous export was not put back: %v", err)
	}
}
