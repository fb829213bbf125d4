package model

// llama_reference_test.go — Llama and Mistral against transformers itself,
// run at test time through the Python reference environment
// (scripts/model/llama_reference.py, run through internal/pyref: without
// the environment the tests skip with one line, or fail under
// TROUPE_PYREF_REQUIRED=1).
//
//   - TestLlamaMatchesTransformers: for each fixture model (random init,
//     real structure: GQA/MQA/MHA, tied and untied, head_dim apart from
//     hidden/heads, llama3 rope scaling with a 131072-position context,
//     biases), the rotary frequencies bit for bit, float32 logits within
//     1e-4 (right and left padded, one row of 300 tokens), bfloat16 logits
//     (within the bound bf16 rounding allows, bf16bound_test.go),
//     per-token log-probs within 1e-4, and greedy generations token for
//     token; on CUDA instead with TROUPE_CUDA=1 (the frequencies are compared
//     on the CPU, where transformers computes them).
//     Its subtest without-rope-scaling shows the comparison failing when
//     the llama3 scaling is dropped from a fixture's config.
//   - TestLlamaExportLoadsInTransformers: what Save writes for a Llama and
//     a Mistral model loads in transformers as the same architecture, with
//     no missing or unexpected weights, the same frequencies and the same
//     logits.

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"troupe/internal/cpulevel"
	"troupe/internal/pyref"
	"troupe/torch"
)

const llamaRefVariants = 4

// runLlamaRef runs scripts/model/llama_reference.py with args under the
// reference interpreter (internal/pyref: skips without one) and returns its
// standard output; what it writes to standard error (library warnings) is
// only shown on failure.
func runLlamaRef(t *testing.T, args ...string) []byte {
	t.Helper()
	py := pyref.Python(t)
	cmd := exec.Command(py, append([]string{pyref.Script(t, "scripts/model/llama_reference.py")}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("llama_reference.py %v: %v\n%s", args[0], err, stderr.String())
	}
	return out
}

// llamaFixturesEnv names a folder of fixtures llama_reference.py wrote
// earlier: TestLlamaMatchesTransformers hands its own to its runs at the
// lesser CPU levels, which then read them instead of writing their own.
const llamaFixturesEnv = "TROUPE_TEST_LLAMA_FIXTURES"

// llamaFixtures returns the folder of the fixtures and each model's folder
// in it: written now into a temp dir, or llamaFixturesEnv's.
func llamaFixtures(t *testing.T) (root string, dirs []string) {
	t.Helper()
	if root = os.Getenv(llamaFixturesEnv); root == "" {
		root = t.TempDir()
		t.Logf("%s", runLlamaRef(t, "fixtures", root))
	}
	dirs = refModelDirs(t, root)
	if len(dirs) != llamaRefVariants {
		t.Fatalf("want %d fixture models, found %v", llamaRefVariants, dirs)
	}
	return root, dirs
}

// logprobsDiff compares TokenLogProbs over the fixture's batch with the
// reference's (B, T) log-probs.
func logprobsDiff(t *testing.T, m *Model, ref *refFile, seqs [][]int) float64 {
	t.Helper()
	s := torch.NewScope()
	defer s.Close()
	in, err := Pack(seqs, PadRight, m.Device())
	if err != nil {
		t.Fatal(err)
	}
	B, T := in.Shape()
	targets := make([]int64, B*T)
	mask := make([]bool, B*T)
	for b, seq := range seqs {
		for i := 0; i+1 < len(seq); i++ {
			targets[int64(b)*T+int64(i)] = int64(seq[i+1])
			mask[int64(b)*T+int64(i)] = true
		}
	}
	dev := m.Device() // targets and mask live where the model does
	lp, _, err := m.TokenLogProbs(in, torch.FromInt64(targets, B, T).ToDevice(dev), torch.FromBool(mask, B, T).ToDevice(dev), LogProbOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, want := lp.Float32s(), ref.floats["logprobs"]
	if len(want) != len(got) {
		t.Fatalf("%s: logprobs has %d values, want (B, T) = %d", ref.path, len(want), len(got))
	}
	worst := 0.0
	for i := range got {
		worst = math.Max(worst, math.Abs(float64(got[i]-want[i])))
	}
	return worst
}

func TestLlamaMatchesTransformers(t *testing.T) {
	root, dirs := llamaFixtures(t)
	cpulevel.Each(t, llamaFixturesEnv+"="+root) // also at the lesser CPU levels, on these fixtures
	dev := refDevice(t)                         // CUDA with TROUPE_CUDA=1
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			ref := readRefFile(t, filepath.Join(dir, refFixtureFile))
			seqs := ref.seqs(t, "input_ids", "lengths")
			prompts := ref.seqs(t, "prompt_ids", "prompt_lengths")
			cpu := loadRefModel(t, dir, cpu32)
			if cpu.Config.Family != Llama && cpu.Config.Family != Mistral {
				t.Fatalf("loaded as %s", cpu.Config.Family)
			}
			var inv []float32 // transformers computes them on the CPU
			scoped(func() { inv = cpu.rope.invFreq.Float32s() })
			for i, want := range ref.floats["inv_freq"] {
				if math.Float32bits(inv[i]) != math.Float32bits(want) {
					t.Errorf("inv_freq[%d] = %.9g, transformers has %.9g (not bit-identical)", i, inv[i], want)
				}
			}
			m := cpu
			if dev != torch.CPU {
				m = loadRefModel(t, dir, Options{DType: torch.Float32, Device: dev})
			}
			V := m.Config.VocabSize
			want := ref.logits(t, "logits", seqs, V)
			for _, pad := range []Padding{PadRight, PadLeft} {
				if d := compareLogits(realTokenLogits(t, m, seqs, pad), want, seqs, V); !(d.maxAbs <= refF32Tol) {
					t.Errorf("float32 logits (padding %v): %v exceeds %g", pad, d, refF32Tol)
				} else {
					t.Logf("float32 logits (padding %v): %v", pad, d)
				}
			}
			if d := logprobsDiff(t, m, ref, seqs); !(d <= refF32Tol) {
				t.Errorf("per-token log-probs: max |Δ| %.3g exceeds %g", d, refF32Tol)
			} else {
				t.Logf("per-token log-probs: max |Δ| %.3g", d)
			}
			checkGreedy(t, m, ref, prompts, torch.Float32, refF32Tol)

			bf := loadRefModel(t, dir, Options{DType: torch.BFloat16, Device: dev})
			d := compareLogits(realTokenLogits(t, bf, seqs, PadRight), want, seqs, V)
			hf := compareLogits(ref.logits(t, "logits_bf16", seqs, V), want, seqs, V)
			tol, r := bf16LogitBound(bf.Config, d.scale) // bf16bound_test.go
			if !(d.maxAbs <= tol) {
				t.Errorf("bfloat16 logits: %v exceeds %.3g (%d roundings; transformers' own bf16 run: %v)", d, tol, r, hf)
			} else {
				t.Logf("bfloat16 logits: %v (tolerance %.3g from %d roundings; transformers' own bf16 run %v)", d, tol, r, hf)
			}
			checkGreedy(t, bf, ref, prompts, torch.BFloat16, 2*tol) // two logits off by tol may swap
		})
	}
	t.Run("without-rope-scaling", func(t *testing.T) {
		for _, d := range dirs {
			if filepath.Base(d) == "llama3-short-context" {
				refSeesRopeScaling(t, d)
				return
			}
		}
		t.Fatal("no llama3-short-context fixture")
	})
}

// refSeesRopeScaling checks that the fixture in dir fails the float32
// comparison once its config's llama3 scaling is replaced by plain RoPE
// (in a copy of dir: the fixtures may be shared).
func refSeesRopeScaling(t *testing.T, fixture string) {
	dir := t.TempDir()
	entries, err := os.ReadDir(fixture)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(fixture, e.Name()))
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, e.Name()), data, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	ref := readRefFile(t, filepath.Join(dir, refFixtureFile))
	seqs := ref.seqs(t, "input_ids", "lengths")
	raw, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	rp, _ := cfg["rope_parameters"].(map[string]any)
	if rp == nil {
		rp, _ = cfg["rope_scaling"].(map[string]any)
	}
	if rp == nil || rp["rope_type"] != "llama3" {
		t.Fatalf("%s: no llama3 rope scaling in %s", dir, raw)
	}
	for _, k := range []string{"factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"} {
		delete(rp, k)
	}
	rp["rope_type"] = "default"
	plain, _ := json.Marshal(cfg)
	if err := os.WriteFile(filepath.Join(dir, "config.json"), plain, 0o644); err != nil {
		t.Fatal(err)
	}
	m := loadRefModel(t, dir, cpu32)
	d := compareLogits(realTokenLogits(t, m, seqs, PadRight), ref.logits(t, "logits", seqs, m.Config.VocabSize), seqs, m.Config.VocabSize)
	if d.maxAbs <= refF32Tol {
		t.Fatalf("without its llama3 scaling the model still matches (%v): the fixture cannot see the scaling", d)
	}
	t.Logf("without the llama3 scaling: %v (> %g, caught)", d, refF32Tol)
}

func TestLlamaExportLoadsInTransformers(t *testing.T) {
	pyref.Python(t)
	for _, c := range []struct {
		family Family
		class  string
	}{{Llama, "LlamaForCausalLM"}, {Mistral, "MistralForCausalLM"}} {
		t.Run(string(c.family), func(t *testing.T) {
			cfg := tinyConfig(c.family)
			cfg.MaxPositions = 131072
			m, err := New(cfg, 7, cpu32)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Free()
			dir := t.TempDir()
			if err := m.Save(dir, torch.Float32, 0); err != nil {
				t.Fatal(err)
			}
			seqs := [][]int{{1, 5, 9, 2, 63, 0, 17, 33, 8, 8, 8, 41}, {60, 3}}
			idsJSON := filepath.Join(t.TempDir(), "ids.json")
			js, _ := json.Marshal(seqs)
			if err := os.WriteFile(idsJSON, js, 0o644); err != nil {
				t.Fatal(err)
			}
			var got struct {
				Class, ModelType, RopeType string
				InvFreq                    []float32 `json:"inv_freq"`
				Logits                     [][][]float32
			}
			out := runLlamaRef(t, "check-export", dir, idsJSON)
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("check-export printed %q: %v", out, err)
			}
			if got.Class != c.class {
				t.Fatalf("transformers loads the export as %s, want %s", got.Class, c.class)
			}
			var inv []float32
			scoped(func() { inv = m.rope.invFreq.Float32s() })
			if fmt.Sprint(inv) != fmt.Sprint(got.InvFreq) {
				t.Errorf("rotary frequencies (%s): transformers %v, troupe %v", got.RopeType, got.InvFreq, inv)
			}
			for i, seq := range seqs {
				want := []float32{}
				for _, row := range got.Logits[i] {
					want = append(want, row...)
				}
				one := [][]int{seq}
				if d := compareLogits(realTokenLogits(t, m, one, PadRight), want, one, cfg.VocabSize); !(d.maxAbs <= refF32Tol) {
					t.Errorf("row %d: transformers' logits of the export differ from troupe's: %v", i, d)
				} else {
					t.Logf("row %d: %v", i, d)
				}
			}
		})
	}
}
