package config

// recipe.go — `recipe:`, a preset per paper: the values its reference code
// ran with, filled into every key the file and --set leave unset. The
// precedence is defaults < recipe < file < --set: a recipe never replaces a
// value a config writes, and `train check` prints the resolved config with
// a line naming the recipe, the keys it set and those the config kept.
//
// Which values apply depends on the workflow and environment the config
// names (Dr. MAS's math and search scripts differ; AT-GRPO's games, math
// and code configs differ; MAGRPO's writing and coding configs differ).
// docs/departures.md cites the reference's files and commits, and
// config/recipe_test.go compares each preset with the reference's values.
//
// What it is not: roles. A recipe sets no agent's role or model; the
// per-agent keys it fills (format penalty, thinking) apply to every agent
// the config lists, and a role's own setting (AT-GRPO's plan reward_scale
// 2) stays in the config.

import (
	"fmt"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Recipes, the values of the recipe key.
const (
	RecipeDrMAS  = "drmas"              // langfengQ/DrMAS
	RecipeATGRPO = "atgrpo-pettingllms" // pettingllms-ai/PettingLLMs at 244467e
	RecipeMAGRPO = "magrpo-comlrl"      // OpenMLRL/CoMLRL and its task repositories
)

// recipeEntry is one key a recipe sets: a config path (agents.*.key for
// every agent) and its value as YAML.
type recipeEntry struct{ path, value string }

// recipeRecord is what a recipe did to a config (for train check).
type recipeRecord struct {
	source    string   // the reference files the values come from
	set, kept []string // keys it filled in; keys the config set itself
}

// RecipeReport returns the recipe's reference files, the keys it filled in
// and the keys the config set itself; all empty without a recipe.
func (c *Config) RecipeReport() (source string, set, kept []string) {
	return c.recipe.source, c.recipe.set, c.recipe.kept
}

// recipeFor returns a recipe's entries for a workflow and environment, and
// the reference files they come from.
func recipeFor(name, workflow, env string) ([]recipeEntry, string, error) {
	var common, own []recipeEntry
	var source string
	switch name {
	case RecipeDrMAS:
		common = drmasCommon
		switch workflow {
		case "math-refine":
			own, source = drmasMath, "langfengQ/DrMAS examples/drmas_trainer/run_math.sh"
		case "search":
			own, source = drmasSearch, "langfengQ/DrMAS examples/drmas_trainer/run_search.sh"
		}
	case RecipeATGRPO:
		common = atgrpoCommon
		switch workflow {
		case "tree":
			own, source = atgrpoGames, "PettingLLMs 244467e config/stateful/stateful_L1_prompt.yaml, config/ppo_trainer/eval.yaml, scripts/train/game/game_L1_prompt.sh"
			own = append(own, atgrpoGameSizes[env]...)
		case "math-tool":
			own, source = atgrpoMath, "PettingLLMs 244467e config/math/math_L1_prompt.yaml, config/ppo_trainer/eval.yaml, scripts/train/math/math_L1_prompt.sh"
		case "code-test":
			own, source = atgrpoCode, "PettingLLMs 244467e config/code/code_L1_prompt.yaml, config/ppo_trainer/eval.yaml, trainer/async_generate.py"
		}
	case RecipeMAGRPO:
		common = magrpoCommon
		if workflow == "joint" {
			switch env {
			case "writing":
				own, source = magrpoWriting, "OpenMLRL/LLM_Collab_Writing configs/magrpo_tldr_config.yaml, CoMLRL comlrl/trainers/reinforce/magrpo.py"
			case "coding":
				own, source = magrpoCoding, "OpenMLRL/LLM_Collab_Code_Generation configs/magrpo_he_config.yaml, CoMLRL comlrl/trainers/reinforce/magrpo.py"
			}
		}
	default:
		return nil, "", fmt.Errorf("recipe: must be %s, %s or %s (or left out), got %q", RecipeDrMAS, RecipeATGRPO, RecipeMAGRPO, name)
	}
	if own == nil {
		return nil, "", fmt.Errorf("recipe: %s has no values for workflow %q with environment %q; it covers %s", name, workflow, env, recipeCovers[name])
	}
	return append(append([]recipeEntry(nil), common...), own...), source, nil
}

var recipeCovers = map[string]string{
	RecipeDrMAS:  "math-refine and search",
	RecipeATGRPO: "tree (plan-path, sokoban, sudoku), math-tool and code-test",
	RecipeMAGRPO: "joint with writing or coding",
}

// applyRecipe fills the recipe's values into every key root leaves unset
// (after --set), and records what it did.
func applyRecipe(root *yaml.Node) (recipeRecord, error) {
	name := scalarAt(root, "recipe")
	if name == "" {
		return recipeRecord{}, nil
	}
	workflow, env := scalarAt(root, "workflow", "name"), scalarAt(root, "env", "name")
	if workflow == "" {
		workflow = flows.first
	}
	if env == "" {
		env = envs.first
	}
	entries, source, err := recipeFor(name, workflow, env)
	if err != nil {
		return recipeRecord{}, err
	}
	rec := recipeRecord{source: source}
	agents := 0
	if n := nodeAt(root, "agents"); n != nil && n.Kind == yaml.SequenceNode {
		agents = len(n.Content)
	}
	for _, e := range entries {
		paths := []string{e.path}
		if rest, ok := strings.CutPrefix(e.path, "agents.*."); ok {
			paths = nil
			for i := 0; i < agents; i++ {
				paths = append(paths, fmt.Sprintf("agents.%d.%s", i, rest))
			}
		}
		if other, ok := runLengthKeys[e.path]; ok && nodeAt(root, splitPath(other)...) != nil {
			rec.kept = append(rec.kept, other) // the config's own run length
			continue
		}
		for _, p := range paths {
			if nodeAt(root, splitPath(p)...) != nil {
				rec.kept = append(rec.kept, p)
				continue
			}
			if err := applySet(root, p+"="+e.value); err != nil {
				return recipeRecord{}, fmt.Errorf("recipe %s: %w", name, err)
			}
			rec.set = append(rec.set, p)
		}
	}
	sort.Strings(rec.kept)
	return rec, nil
}

// nodeAt is the node at a key path of mappings and list indices, or nil.
func nodeAt(root *yaml.Node, path ...string) *yaml.Node {
	n := root
	for _, k := range path {
		switch {
		case n == nil:
			return nil
		case n.Kind == yaml.SequenceNode:
			i := -1
			fmt.Sscan(k, &i)
			if i < 0 || i >= len(n.Content) {
				return nil
			}
			n = n.Content[i]
		case n.Kind == yaml.MappingNode:
			var next *yaml.Node
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == k {
					next = n.Content[i+1]
				}
			}
			n = next
		default:
			return nil
		}
	}
	return n
}

// scalarAt is the scalar at a key path, or "".
func scalarAt(root *yaml.Node, path ...string) string {
	if n := nodeAt(root, path...); n != nil && n.Kind == yaml.ScalarNode {
		return n.Value
	}
	return ""
}
