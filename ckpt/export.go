// export.go: a trained model as a Hugging Face directory that transformers,
// vLLM and model.Load open as they open a downloaded Qwen checkpoint:
//
//	config.json                    the model's config, torch_dtype = the export dtype
//	model.safetensors              or model-0000k-of-0000n.safetensors + model.safetensors.index.json
//	generation_config.json         bos/eos/pad ids, optional sampling defaults
//	tokenizer.json                 copied from the tokenizer directory, as are
//	tokenizer_config.json          chat_template.jinja, special_tokens_map.json,
//	                               vocab.json, merges.txt and added_tokens.json when present
//
// The directory is built under a temporary name next to the destination
// (.tmp-export-<name>-*), every file fsynced, and renamed into place; an
// existing destination is first renamed aside (.old-export-<name>-*) and
// removed after. A crash leaves the old export or the new one under the
// destination name, or (between the two renames) the old one under its
// .old name, which the next Export to the same destination puts back before
// it starts. One Export per destination at a time.
//
// An existing destination is replaced only when it looks like a model
// directory (it holds config.json) or is empty: a typo in the path must not
// delete someone's files.
//
// The weights and config.json are written by model.Save in the export dtype.
//
// Not here: the chat template's contents (copied verbatim, never rewritten)
// and any conversion of the tokenizer.
package ckpt

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"troupe/internal/atomicfile"
	"troupe/internal/dirlock"
	"troupe/model"
	"troupe/tokenizer"
	"troupe/torch"
)

// GenerationConfigFileName is Hugging Face's generation defaults file.
const GenerationConfigFileName = "generation_config.json"

// Tokenizer files Export copies: the required ones, then those copied when
// present.
var (
	requiredTokenizerFiles = []string{"tokenizer.json", "tokenizer_config.json"}
	optionalTokenizerFiles = []string{"chat_template.jinja", "special_tokens_map.json", "vocab.json", "merges.txt", "added_tokens.json"}
)

const (
	exportTmpPrefix = ".tmp-export-"
	exportOldPrefix = ".old-export-"
)

// ExportOptions controls Export.
type ExportOptions struct {
	// DType of the exported weights, as config files spell it ("bfloat16",
	// "bf16", "float32", ...); "" keeps the model's.
	DType string
	// MaxShardBytes splits the weights into shards of at most this many
	// bytes of tensor data; ≤ 0 means model.DefaultShardBytes (5 GB).
	MaxShardBytes int64
	// Generation holds the defaults written to generation_config.json.
	Generation GenerationDefaults
}

// GenerationDefaults are the generation_config.json defaults. Sampling
// parameters may only be set with DoSample (transformers warns about, and
// ignores, a temperature without sampling).
type GenerationDefaults struct {
	DoSample     bool
	Temperature  float64 // 0: not written
	TopP         float64 // 0: not written
	TopK         int     // 0: not written
	MaxNewTokens int     // 0: not written
	// EOSTokenIDs ends generation; nil means the tokenizer's EOS, its
	// <|im_end|> (a chat model ends each turn with it) and the config's
	// eos_token_id, in that order, without repeats.
	EOSTokenIDs []int
}

// generationConfig is generation_config.json's layout.
type generationConfig struct {
	BOSTokenID   *int     `json:"bos_token_id,omitempty"`
	EOSTokenID   any      `json:"eos_token_id,omitempty"` // an int, or a list of several
	PadTokenID   *int     `json:"pad_token_id,omitempty"`
	DoSample     bool     `json:"do_sample"`
	Temperature  *float64 `json:"temperature,omitempty"`
	TopP         *float64 `json:"top_p,omitempty"`
	TopK         *int     `json:"top_k,omitempty"`
	MaxNewTokens *int     `json:"max_new_tokens,omitempty"`
}

// Validate checks the option values.
func (o ExportOptions) Validate() error {
	if _, err := o.dtype(torch.Float32); err != nil {
		return err
	}
	g := o.Generation
	switch {
	case g.Temperature < 0:
		return fmt.Errorf("ckpt: export: generation.temperature must be >= 0, got %g", g.Temperature)
	case g.TopP < 0 || g.TopP > 1:
		return fmt.Errorf("ckpt: export: generation.top_p must be in (0, 1], got %g", g.TopP)
	case g.TopK < 0:
		return fmt.Errorf("ckpt: export: generation.top_k must be >= 0, got %d", g.TopK)
	case g.MaxNewTokens < 0:
		return fmt.Errorf("ckpt: export: generation.max_new_tokens must be >= 0, got %d", g.MaxNewTokens)
	case !g.DoSample && (g.Temperature != 0 || g.TopP != 0 || g.TopK != 0):
		return fmt.Errorf("ckpt: export: generation sets temperature %g, top_p %g, top_k %d but do_sample is false; set do_sample or leave them 0", g.Temperature, g.TopP, g.TopK)
	}
	return nil
}

// dtype resolves o.DType, "" giving the model's.
func (o ExportOptions) dtype(modelDType torch.DType) (torch.DType, error) {
	if o.DType == "" {
		return modelDType, nil
	}
	d, err := torch.ParseDType(o.DType)
	if err == nil {
		_, err = model.ConfigDTypeName(d)
	}
	if err != nil {
		return 0, fmt.Errorf("ckpt: export: dtype %q: must be float32, bfloat16 or float16", o.DType)
	}
	return d, nil
}

// Export writes m as a complete Hugging Face directory at dst, with the
// tokenizer files of tokenizerDir (a directory holding tokenizer.json, or
// the tokenizer.json file itself). See the file comment for the layout and
// how dst is replaced.
func Export(dst string, m *model.Model, tokenizerDir string, opt ExportOptions) (err error) {
	if err := opt.Validate(); err != nil {
		return err
	}
	dtype, err := opt.dtype(m.DType())
	if err != nil {
		return err
	}
	if dtype == torch.Float16 && m.DType() != torch.Float16 {
		if err := checkFloat16Range(m); err != nil {
			return err
		}
	}
	if tokenizerDir == "" {
		return errors.New("ckpt: export: no tokenizer directory given: an export needs the tokenizer the model was trained with (the base model's directory)")
	}
	if st, err := os.Stat(tokenizerDir); err == nil && !st.IsDir() {
		tokenizerDir = filepath.Dir(tokenizerDir)
	}
	tok, err := tokenizer.Load(tokenizerDir)
	if err != nil {
		return fmt.Errorf("ckpt: export: %w", err)
	}
	if err := tok.CheckModel(m.Config.VocabSize, m.Config.EOSTokenIDs, m.Config.BOSTokenID, "it is not this model's tokenizer"); err != nil {
		return fmt.Errorf("ckpt: export: the tokenizer in %s: %w", tokenizerDir, err)
	}
	genJSON, err := generationJSON(m.Config, tok, opt.Generation)
	if err != nil {
		return err
	}
	maxShard := opt.MaxShardBytes
	if maxShard <= 0 {
		maxShard = model.DefaultShardBytes
	}

	dst = filepath.Clean(dst)
	parent, base := filepath.Dir(dst), filepath.Base(dst)
	if err := readyToReplace(dst); err != nil {
		return err
	}
	hold, err := dirlock.MakeTemp(parent, exportTmpPrefix+base+"-") // named by this writer, held while written
	if err != nil {
		return fmt.Errorf("ckpt: export: %w", err)
	}
	tmp := hold.Path
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
		hold.Release()
	}()
	if err := m.Save(tmp, dtype, maxShard); err != nil {
		return fmt.Errorf("ckpt: export: %w", err)
	}
	if err := WriteFile(filepath.Join(tmp, GenerationConfigFileName), genJSON); err != nil {
		return err
	}
	if err := CopyTokenizerFiles(tokenizerDir, tmp); err != nil {
		return err
	}
	if err := atomicfile.SyncDir(tmp); err != nil {
		return fmt.Errorf("ckpt: export: %w", err)
	}
	return swapDir(parent, tmp, dst, exportOldPrefix+base+"-")
}

// Install moves an export already written elsewhere on the same file
// system (staged: a directory Export wrote) to dst, replacing dst as Export
// does: only a model or adapter directory, moved aside and removed after
// the rename. A command that exports several models stages them all first
// and installs them only once every one is written.
func Install(staged, dst string) error {
	dst = filepath.Clean(dst)
	if err := readyToReplace(dst); err != nil {
		return err
	}
	return swapDir(filepath.Dir(dst), staged, dst, exportOldPrefix+filepath.Base(dst)+"-")
}

// readyToReplace makes dst's parent, finishes or undoes an export into dst
// that a crash interrupted, and refuses a dst that is not an export.
func readyToReplace(dst string) error {
	parent, base := filepath.Dir(dst), filepath.Base(dst)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("ckpt: export: %w", err)
	}
	if err := recoverExport(parent, base); err != nil {
		return err
	}
	return checkReplaceable(dst)
}

// generationJSON renders generation_config.json.
func generationJSON(cfg model.Config, tok *tokenizer.Tokenizer, g GenerationDefaults) ([]byte, error) {
	out := generationConfig{BOSTokenID: cfg.BOSTokenID, DoSample: g.DoSample}
	eos := g.EOSTokenIDs
	if eos == nil {
		sp := tok.Special()
		eos = appendUnique(nil, sp.EOS, sp.IMEnd)
		eos = appendUnique(eos, cfg.EOSTokenIDs...)
	}
	if len(eos) == 0 {
		return nil, errors.New("ckpt: export: no EOS token: the tokenizer names none and the config has no eos_token_id; set the generation EOS ids")
	}
	for _, id := range eos {
		if id < 0 || id >= cfg.VocabSize {
			return nil, fmt.Errorf("ckpt: export: eos token id %d is outside the vocabulary [0, %d)", id, cfg.VocabSize)
		}
	}
	if len(eos) == 1 {
		out.EOSTokenID = eos[0]
	} else {
		out.EOSTokenID = eos
	}
	if pad := tok.Special().Pad; pad >= 0 {
		out.PadTokenID = &pad
	}
	if g.Temperature != 0 {
		out.Temperature = &g.Temperature
	}
	if g.TopP != 0 {
		out.TopP = &g.TopP
	}
	if g.TopK != 0 {
		out.TopK = &g.TopK
	}
	if g.MaxNewTokens != 0 {
		out.MaxNewTokens = &g.MaxNewTokens
	}
	raw, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("ckpt: export: %w", err)
	}
	return append(raw, '\n'), nil
}

// appendUnique appends the non-negative ids not already in list.
func appendUnique(list []int, ids ...int) []int {
next:
	for _, id := range ids {
		if id < 0 {
			continue
		}
		for _, have := range list {
			if have == id {
				continue next
			}
		}
		list = append(list, id)
	}
	return list
}

// CopyTokenizerFiles copies the tokenizer files of the directory src into
// dst: tokenizer.json and tokenizer_config.json (both required), and
// chat_template.jinja and the other files tokenizers write when present.
func CopyTokenizerFiles(src, dst string) error {
	for _, name := range append(append([]string(nil), requiredTokenizerFiles...), optionalTokenizerFiles...) {
		data, err := os.ReadFile(filepath.Join(src, name))
		if errors.Is(err, fs.ErrNotExist) && !contains(requiredTokenizerFiles, name) {
			continue
		}
		if err != nil {
			return fmt.Errorf("ckpt: export: the tokenizer files: %w", err)
		}
		if err := WriteFile(filepath.Join(dst, name), data); err != nil {
			return err
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// checkReplaceable refuses an existing dst that is not a directory, or not
// an empty, model or adapter directory.
func checkReplaceable(dst string) error {
	st, err := os.Lstat(dst)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("ckpt: export: %w", err)
	}
	if !st.IsDir() {
		return fmt.Errorf("ckpt: export: %s exists and is not a directory; choose another destination", dst)
	}
	entries, err := os.ReadDir(dst)
	if err != nil {
		return fmt.Errorf("ckpt: export: %w", err)
	}
	if len(entries) == 0 {
		return nil
	}
	for _, marker := range []string{ConfigFileName, model.AdapterConfigFile} {
		if _, err := os.Stat(filepath.Join(dst, marker)); err == nil {
			return nil
		}
	}
	return fmt.Errorf("ckpt: %s exists and holds neither %s nor %s, so it is not a model or adapter directory that may be replaced; choose another destination or remove it", dst, ConfigFileName, model.AdapterConfigFile)
}

// recoverExport cleans up after an interrupted export to parent/base: it
// removes temporary directories and puts a moved-aside previous export back
// when the destination is missing (removing it otherwise).
func recoverExport(parent, base string) error {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return fmt.Errorf("ckpt: export: %w", err)
	}
	dst := filepath.Join(parent, base)
	for _, e := range entries {
		name := e.Name()
		p := filepath.Join(parent, name)
		switch {
		case isExportLeftover(name, exportTmpPrefix, base):
			if _, err := dirlock.RemoveIfFree(p); err != nil { // a live export's is left alone
				return fmt.Errorf("ckpt: export: removing the stale %s: %w", p, err)
			}
		case isExportLeftover(name, exportOldPrefix, base):
			if _, err := os.Lstat(dst); errors.Is(err, fs.ErrNotExist) {
				if err := os.Rename(p, dst); err != nil {
					return fmt.Errorf("ckpt: export: restoring %s from %s: %w", dst, p, err)
				}
				continue
			}
			if err := os.RemoveAll(p); err != nil {
				return fmt.Errorf("ckpt: export: removing the stale %s: %w", p, err)
			}
		}
	}
	return nil
}

// isExportLeftover reports whether name is prefix+base+"-"+suffix with a
// suffix of the characters MakeTemp (pid "." random) and unusedName use.
func isExportLeftover(name, prefix, base string) bool {
	rest, ok := strings.CutPrefix(name, prefix+base+"-")
	return ok && rest != "" && !strings.Contains(rest, "-")
}
