package config

// modelhint.go — what to do about a model directory that is missing: a
// shipped tiny config names the make target that builds its model (and the
// `train init` + `train sft` commands it runs); a real model's path names
// the Hugging Face download, never `train init`, which makes a tiny random
// model.

import (
	"fmt"
	"path/filepath"
	"strings"

	"troupe/internal/cmdline"
	suggestpkg "troupe/internal/suggest"
)

// demoTargets maps the run directory of a tiny config's model
// (runs/<dir>/sft/<model>) to the make target that builds it; a test keeps
// it true to the Makefile.
var demoTargets = map[string]string{
	"magrpo-demo": "magrpo-demo", "lora-demo": "lora-demo", "math-demo": "math-demo", "search-demo": "search-demo",
	"planpath-demo": "planpath-demo", "sokoban-demo": "sokoban-demo", "coding-demo": "coding-demo",
	"stability": "stability",
}

// hfOrgs are the Hugging Face organisations of model names by prefix.
var hfOrgs = []struct{ prefix, org string }{
	{"Qwen", "Qwen"}, {"QwQ", "Qwen"}, {"Llama", "meta-llama"}, {"Meta-Llama", "meta-llama"},
	{"Mistral", "mistralai"}, {"gemma", "google"}, {"SmolLM", "HuggingFaceTB"},
}

// modelHint says what a models.<name>.path that holds no model was
// probably meant to be (a model directory beside or inside it,
// internal/suggest), or else how to get the model.
func modelHint(key, path string) string {
	if hint := suggestpkg.ModelDir(path); hint != "" {
		return hint
	}
	return missingModelHint(key, path)
}

// missingModelHint says how to get the model a models.<name> entry points
// at, from what its path looks like.
func missingModelHint(key, path string) string {
	clean := filepath.ToSlash(filepath.Clean(path))
	if clean == "demo/warmup" { // make demo's model, shipped in the repository
		return "it is shipped with the repository: run from the repository root, or restore it with `git checkout -- demo/warmup`; `make demo-warmup` makes it again from nothing (into runs/demo-warmup/sft/tiny)"
	}
	parts := strings.Split(clean, "/")
	// runs/<dir>/sft/<model>: the warm-up output of a tiny demo
	if len(parts) == 4 && parts[0] == "runs" && parts[2] == "sft" {
		base := "runs/" + parts[1] + "/base"
		by := fmt.Sprintf("`%s` (a tiny random model), then `%s` (its warm-up)", cmdline.Train("init", base),
			cmdline.Train("sft", "-c", "CONFIG", "--set", key+".path="+base, "--out", "runs/"+parts[1]+"/sft"))
		if target, ok := demoTargets[parts[1]]; ok {
			return fmt.Sprintf("it is built by `make %s` (from the repository root), or by hand: %s", target, by)
		}
		return "build it by hand: " + by
	}
	name := parts[len(parts)-1]
	for _, o := range hfOrgs {
		if strings.HasPrefix(name, o.prefix) {
			return fmt.Sprintf("download the model there, e.g. `hf download %s/%s --local-dir %s` (Hugging Face), or point %s.path at your copy", o.org, name, path, key)
		}
	}
	if strings.Contains(strings.ToLower(clean), "tiny") {
		return fmt.Sprintf("create a tiny random model there with `%s`, or point %s.path at a Hugging Face model directory", cmdline.Train("init", path), key)
	}
	return fmt.Sprintf("point %s.path at a Hugging Face model directory (config.json, model.safetensors, tokenizer.json), e.g. one downloaded with `hf download ORG/NAME --local-dir %s`; for a tiny random model to try troupe on a CPU, `%s`", key, path, cmdline.Train("init", path))
}
