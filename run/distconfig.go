package run

// distconfig.go — the ranks of a data-parallel run agree on the config
// before they train: each hashes its resolved config (SHA-256 of the YAML
// the run writes into its checkpoints), the hashes are all-gathered, and on
// a mismatch every rank gathers the configs and refuses, naming the first
// key (in YAML order) where a rank differs from rank 0. Ranks started by
// hand on several nodes with different --set flags or config files would
// otherwise train on different data or settings and only fail, if at all,
// at the weight check steps later.
//
// What it is not: a check of the files the config names (model weights,
// datasets); each rank reads its own, which the weight hash catches.

import (
	"bytes"
	"crypto/sha256"
	"fmt"

	"gopkg.in/yaml.v3"

	"troupe/config"
)

// checkSameConfig refuses to go on when the ranks' resolved configs differ.
// Call it on every rank before the config is placed on the rank's device.
func (d *dataParallel) checkSameConfig(cfg *config.Config) error {
	if d == nil {
		return nil
	}
	raw, err := cfg.Marshal()
	if err != nil {
		return err
	}
	sum := sha256.Sum256(raw)
	hashes, err := d.gatherBytes(sum[:])
	if err != nil {
		return fmt.Errorf("data parallel: comparing the ranks' configs: %w", err)
	}
	same := true
	for _, h := range hashes {
		same = same && bytes.Equal(h, sum[:])
	}
	if same {
		return nil
	}
	all, err := d.gatherBytes(raw) // every rank saw the mismatch: every rank gathers
	if err != nil {
		return fmt.Errorf("data parallel: the ranks' configs differ, and gathering them failed: %w", err)
	}
	for r := 1; r < len(all); r++ {
		if bytes.Equal(all[r], all[0]) {
			continue
		}
		key, v0, vr := firstDifference(all[0], all[r])
		return fmt.Errorf("data parallel: the ranks' resolved configs differ: %s is %s on rank 0 but %s on rank %d; start every rank with the same config file and --set flags", key, v0, vr, r)
	}
	return fmt.Errorf("data parallel: the ranks' config hashes differ but their configs are equal; the all-gather is broken (report this)")
}

// firstDifference is the first key path (in a's YAML order, then b's) whose
// scalar differs between two YAML documents, with both values ("(absent)"
// where one lacks it).
func firstDifference(a, b []byte) (key, va, vb string) {
	fa, oa := flatYAML(a)
	fb, ob := flatYAML(b)
	for _, k := range append(oa, ob...) {
		x, okA := fa[k]
		y, okB := fb[k]
		if okA && okB && x == y {
			continue
		}
		if !okA {
			x = "(absent)"
		}
		if !okB {
			y = "(absent)"
		}
		return k, x, y
	}
	return "(none)", "", ""
}

// flatYAML flattens a YAML document into key paths (run.seed,
// agents[1].model) → scalars, and the paths in document order.
func flatYAML(doc []byte) (map[string]string, []string) {
	var n yaml.Node
	out := map[string]string{}
	var order []string
	if err := yaml.Unmarshal(doc, &n); err != nil || len(n.Content) == 0 {
		return out, order
	}
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				p := n.Content[i].Value
				if path != "" {
					p = path + "." + p
				}
				walk(n.Content[i+1], p)
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				walk(c, fmt.Sprintf("%s[%d]", path, i))
			}
		case yaml.AliasNode:
			walk(n.Alias, path)
		default:
			out[path] = n.Value
			order = append(order, path)
		}
	}
	walk(n.Content[0], "")
	return out, order
}
