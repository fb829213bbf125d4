package config

// load.go — reading a config: YAML file, then --set overrides, checked key
// by key against the schema before decoding over Default().
//
// Values are taken strictly: a file holds one YAML document (a second,
// after ---, is refused rather than dropped); a key left empty (null) is
// as if absent, so it takes the recipe's value under a recipe and the
// default otherwise; an integer key refuses a fraction rather than
// truncate it; a key with control characters is quoted where a message
// names it.

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	stdmath "math"
	"os"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"troupe/advantage"
	suggestpkg "troupe/internal/suggest"
)

// Load reads the YAML file at path ("" for none), applies the --set
// overrides ("a.b.c=value", list items as agents.0.name or agents[0].name),
// decodes the result over Default() and validates it.
func Load(path string, sets []string) (*Config, error) { return load(path, sets, allFiles) }

// LoadSaved is Load for the config saved in a training checkpoint, whose
// trained weights and tokenizer files are in the checkpoint: the models'
// paths are not required to exist (only a KL reference still reads them).
func LoadSaved(path string, sets []string) (*Config, error) { return load(path, sets, noModels) }

// LoadForPlan is Load for `train plan`, which reads each model's
// config.json and nothing else: tokenizers and datasets need not exist, so
// a run can be planned with only the models' config.json files at hand.
func LoadForPlan(path string, sets []string) (*Config, error) { return load(path, sets, modelsOnly) }

func load(path string, sets []string, files fileChecks) (*Config, error) {
	var data []byte
	if path != "" {
		var err error
		if data, err = os.ReadFile(path); err != nil {
			return nil, fmt.Errorf("config: %w", err)
		}
	}
	c, err := parse(data, sets, files)
	if err != nil {
		if set := setOf(err, sets); set != "" {
			return nil, fmt.Errorf("--set %s: %w", set, err) // the flag, not the file, gave the value
		}
		if path != "" && !strings.HasPrefix(err.Error(), "config: --set ") {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return nil, err
	}
	return c, nil
}

// setOf is the last --set whose key is the key an error names ("config:
// KEY: …"), or a section holding it, or a key inside it; "" when the
// error is not about a key a --set gave.
func setOf(err error, sets []string) string {
	msg := strings.TrimPrefix(err.Error(), "config: ")
	if strings.HasPrefix(msg, "--set ") {
		return "" // a malformed --set names itself
	}
	key, _, ok := strings.Cut(msg, ":")
	if !ok || strings.ContainsAny(key, " \t") {
		return ""
	}
	norm := func(k string) string { return strings.Join(splitPath(strings.TrimSpace(k)), ".") }
	key = norm(key)
	for i := len(sets) - 1; i >= 0; i-- {
		k, _, _ := strings.Cut(sets[i], "=")
		k = norm(k)
		if k == key || strings.HasPrefix(key, k+".") || strings.HasPrefix(k, key+".") {
			return sets[i]
		}
	}
	return ""
}

// Parse is Load for YAML already in memory.
func Parse(data []byte, sets []string) (*Config, error) { return parse(data, sets, allFiles) }

func parse(data []byte, sets []string, files fileChecks) (*Config, error) {
	root, err := parseDocument(data)
	if err != nil {
		return nil, err
	}
	for _, s := range sets {
		if err := applySet(root, s); err != nil {
			return nil, err
		}
	}
	if err := checkRunLength(root); err != nil {
		return nil, err
	}
	dropNulls(root) // an empty key is unset: the recipe's value or the default
	rec, err := applyRecipe(root)
	if err != nil {
		return nil, err
	}
	if err := checkNode(root, reflect.TypeOf(Config{}), ""); err != nil {
		return nil, err
	}
	merged, err := yaml.Marshal(root)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	c := Default()
	dec := yaml.NewDecoder(bytes.NewReader(merged))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	c.files, c.recipe = files, rec
	if !hasKey(root, "advantage", "magrpo", "joint") {
		c.followJointMode()
	}
	if a := &c.Advantage.ATGRPO; a.Key == advantage.KeyMerged && a.TasksPerGroup == 0 {
		a.TasksPerGroup = c.Batch.N // the reference divides the task index by its sample count
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

// Marshal renders the resolved config as YAML (what a run prints at start
// and saves with every checkpoint).
func (c *Config) Marshal() ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(c); err != nil {
		return nil, err
	}
	return b.Bytes(), enc.Close()
}

func parseDocument(data []byte) (*yaml.Node, error) {
	var doc yaml.Node
	if len(bytes.TrimSpace(data)) > 0 {
		dec := yaml.NewDecoder(bytes.NewReader(data))
		if err := dec.Decode(&doc); err != nil && err != io.EOF {
			return nil, fmt.Errorf("config: %w", err)
		}
		var next yaml.Node
		switch err := dec.Decode(&next); {
		case err == io.EOF:
		case err != nil:
			return nil, fmt.Errorf("config: %w", err)
		default:
			return nil, fmt.Errorf("config: the file holds more than one YAML document (another starts at line %d, after ---); troupe reads one config per file: merge them, or remove the ---", next.Line)
		}
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}, nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("config: the top level must be a mapping of keys (run:, models:, agents:, …)")
	}
	return root, nil
}

// splitPath turns "agents[1].optim.lr" or "agents.1.optim.lr" into segments.
func splitPath(p string) []string {
	p = strings.ReplaceAll(p, "[", ".")
	p = strings.ReplaceAll(p, "]", "")
	return strings.Split(p, ".")
}

func applySet(root *yaml.Node, set string) error {
	key, raw, ok := strings.Cut(set, "=")
	key = strings.TrimSpace(key)
	if !ok || key == "" {
		return fmt.Errorf("config: --set %q: want key.path=value, e.g. --set run.steps=20", set)
	}
	if strings.TrimSpace(raw) == "" {
		// YAML reads an empty value as null, which would silently reset the
		// key to its default.
		return fmt.Errorf("config: --set %s=: the value is empty; give a value (quote it for an empty string: --set '%s=\"\"'), or leave the key out for its default", key, key)
	}
	var val yaml.Node
	if err := yaml.Unmarshal([]byte(raw), &val); err != nil {
		return fmt.Errorf("config: --set %s: value %q is not valid YAML: %v", key, raw, err)
	}
	var value *yaml.Node
	if len(val.Content) > 0 {
		value = val.Content[0]
	} else {
		value = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: ""}
	}
	node := root
	segs := splitPath(key)
	for i, seg := range segs {
		last := i == len(segs)-1
		switch node.Kind {
		case yaml.MappingNode:
			var child *yaml.Node
			for j := 0; j+1 < len(node.Content); j += 2 {
				if node.Content[j].Value == seg {
					child = node.Content[j+1]
					if last {
						node.Content[j+1] = value
					}
					break
				}
			}
			if child == nil {
				child = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
				if last {
					child = value
				}
				node.Content = append(node.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: seg}, child)
			}
			node = child
		case yaml.SequenceNode:
			idx, err := strconv.Atoi(seg)
			if err != nil || idx < 0 || idx >= len(node.Content) {
				return fmt.Errorf("config: --set %s: %q is not an index of a list of %d items", key, seg, len(node.Content))
			}
			if last {
				node.Content[idx] = value
			}
			node = node.Content[idx]
		default:
			return fmt.Errorf("config: --set %s: %s is a single value, not a section", key, strings.Join(segs[:i], "."))
		}
	}
	return nil
}

// dropNulls removes every mapping entry whose value is null (key: with
// nothing after it, or ~), in every section and list item, so that the
// key counts as unset.
func dropNulls(n *yaml.Node) {
	switch n.Kind {
	case yaml.MappingNode:
		kept := n.Content[:0]
		for i := 0; i+1 < len(n.Content); i += 2 {
			v := n.Content[i+1]
			if v.Kind == yaml.ScalarNode && v.ShortTag() == "!!null" {
				continue
			}
			dropNulls(v)
			kept = append(kept, n.Content[i], v)
		}
		n.Content = kept
	case yaml.SequenceNode:
		for _, item := range n.Content {
			dropNulls(item)
		}
	}
}

// fields maps YAML keys to struct fields, following inline embeddings.
func fields(t reflect.Type) map[string]reflect.StructField {
	out := map[string]reflect.StructField{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		if strings.Contains(opts, "inline") {
			for k, v := range fields(f.Type) {
				out[k] = v
			}
			continue
		}
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		out[name] = f
	}
	return out
}

// join appends a key to a path, quoting a key that holds control
// characters or invalid UTF-8 (a message names it as typed, never
// echoes it raw to the terminal).
func join(path, key string) string {
	if q := strconv.Quote(key); q[1:len(q)-1] != key {
		key = q
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

// retired are keys that troupe no longer reads: where their meaning went,
// and the value that meant nothing (their old default). A config that sets
// one to that value — every resolved config.yaml written before the key
// went has it — loads as if it were absent; any other value is refused
// with the line, rather than a bare "unknown key".
var retired = map[string]struct{ neutral, why string }{
	"workflow.tree.alpha":                        {"1", alphaMoved},
	"workflow.math_tool.alpha":                   {"1", alphaMoved},
	"workflow.code_test.alpha":                   {"1", alphaMoved},
	"advantage.atgrpo.drop_lowest_mean_fraction": {"0", "the group filter applies after any estimator: set advantage.filter.lowest_mean_fraction instead"},
	"advantage.atgrpo.drop_zero_variance":        {"false", "the group filter applies after any estimator: set advantage.filter.zero_variance instead"},
}

const alphaMoved = "AT-GRPO's α on the team reward is advantage.team_weight (with advantage.mix_rewards: true), so that the team reward is weighted in one place; remove the key"

// dropRetired removes from the mapping n (at path) the retired keys set to
// their neutral value, and refuses the others.
func dropRetired(n *yaml.Node, path string) error {
	kept := n.Content[:0:0]
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := join(path, n.Content[i].Value), n.Content[i+1]
		if r, gone := retired[key]; gone {
			if val.Kind == yaml.ScalarNode && sameScalar(val.Value, r.neutral) {
				continue
			}
			return fmt.Errorf("config: %s: no longer a key: %s", key, r.why)
		}
		kept = append(kept, n.Content[i], val)
	}
	n.Content = kept
	return nil
}

// sameScalar: a and b are the same YAML number or boolean, or the same text.
func sameScalar(a, b string) bool {
	if a == b {
		return true
	}
	if x, err := strconv.ParseFloat(a, 64); err == nil {
		y, err := strconv.ParseFloat(b, 64)
		return err == nil && x == y
	}
	x, errA := strconv.ParseBool(a)
	y, errB := strconv.ParseBool(b)
	return errA == nil && errB == nil && x == y
}

// checkNode walks the YAML tree against the Go type: unknown keys and values
// of the wrong type are reported with their full path.
func checkNode(n *yaml.Node, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Tag == "!!null" {
		return nil
	}
	switch t {
	case reflect.TypeOf(Env{}):
		return envs.check(n, path)
	case reflect.TypeOf(Workflow{}):
		return flows.check(n, path)
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return fmt.Errorf("config: %s: must be a section of keys, got %q", orTop(path), n.Value)
		}
		if err := dropRetired(n, path); err != nil {
			return err
		}
		known := fields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			key := n.Content[i].Value
			f, ok := known[key]
			if !ok {
				return fmt.Errorf("config: %s: unknown key%s", join(path, key), suggest(key, known))
			}
			if err := checkNode(n.Content[i+1], f.Type, join(path, key)); err != nil {
				return err
			}
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return fmt.Errorf("config: %s: must be a mapping of names to sections", orTop(path))
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if err := checkNode(n.Content[i+1], t.Elem(), join(path, n.Content[i].Value)); err != nil {
				return err
			}
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return fmt.Errorf("config: %s: must be a list", orTop(path))
		}
		for i, item := range n.Content {
			if err := checkNode(item, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	default:
		if n.Kind != yaml.ScalarNode {
			return fmt.Errorf("config: %s: must be a single %s value", path, kindName(t))
		}
		if err := n.Decode(reflect.New(t).Interface()); err != nil {
			return fmt.Errorf("config: %s: %q is not a valid %s", path, n.Value, kindName(t))
		}
		if isInteger(t) && n.ShortTag() == "!!float" { // YAML would truncate 2.5 to 2
			if f, err := strconv.ParseFloat(n.Value, 64); err != nil || f != stdmath.Trunc(f) {
				return fmt.Errorf("config: %s: %s is not a whole number; the key takes an %s", path, n.Value, kindName(t))
			}
		}
	}
	return nil
}

func isInteger(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
}

func orTop(path string) string {
	if path == "" {
		return "(top level)"
	}
	return path
}

func kindName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Bool:
		return "boolean (true or false)"
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "integer"
	case reflect.Uint64, reflect.Uint, reflect.Uint32:
		return "non-negative integer"
	case reflect.Float64, reflect.Float32:
		return "number"
	case reflect.String:
		return "string"
	}
	return t.String()
}

// keyAliases are other trainers' names of keys, by troupe's name; an
// unknown key close to one is answered with troupe's.
var keyAliases = map[string]string{
	"learning_rate": "lr", "max_tokens": "max_new_tokens", "max_length": "max_new_tokens",
	"max_response_length": "max_new_tokens", "num_generations": "n", "group_size": "n",
	"batch_size": "prompts_per_step", "train_batch_size": "prompts_per_step", "max_grad_norm": "grad_clip",
	"total_training_steps": "steps", "num_steps": "steps", "warmup": "warmup_steps", "kl_coeff": "kl_coef",
	"entropy_coeff": "entropy_coef", "adam_beta1": "beta1", "adam_beta2": "beta2", "adam_epsilon": "eps",
}

// suggest names the closest known key: a likely typo as "did you mean"
// (internal/suggest), else the nearest by edit distance — one name, not
// the section's whole list, which docs/configs.md gives.
func suggest(key string, known map[string]reflect.StructField) string {
	var names []string
	for k := range known {
		names = append(names, k)
	}
	sort.Strings(names)
	if hint := suggestpkg.DidYouMean(key, names); hint != "" {
		return hint
	}
	for _, alias := range slices.Sorted(maps.Keys(keyAliases)) { // another trainer's name for a key here (or a typo of it)
		k := keyAliases[alias]
		if _, ok := known[k]; ok && suggestpkg.Distance(strings.ToLower(key), alias) <= 2 {
			return fmt.Sprintf(" (did you mean %s? %s is troupe's name for %s)", k, k, alias)
		}
	}
	nearest, best := "", -1
	for _, k := range names {
		if d := suggestpkg.Distance(strings.ToLower(key), k); best < 0 || d < best {
			nearest, best = k, d
		}
	}
	if nearest == "" {
		return ""
	}
	return fmt.Sprintf("; the nearest key here is %s (docs/configs.md lists the %d keys of this section)", nearest, len(names))
}
