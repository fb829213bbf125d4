package dist

// agree.go — the ranks of a group agree on what they run before they
// train. When the group forms, each rank sends the others its record
// (peers.go): the build (troupe's version, Go's, libtorch's, and
// SHA-256 of the executable and of libtshim.so), a SHA-256 of its resolved
// config (the YAML the run writes into its checkpoints) and the checkpoint
// it continues from. Every rank compares every record with rank 0's, in that
// order, and all refuse at once on the first difference, naming the rank,
// its host and what differs — for configs the first key (in YAML order),
// after gathering the configs. Nodes started with another build, other
// --set flags or config files, or a run directory the other nodes do not
// see would otherwise train on different code, data or settings and fail,
// if at all, at the weight check steps later.
//
// What it is not: a check of the files the config names (model weights,
// datasets); each rank reads its own, which the weight hash catches.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"troupe/torch"
)

// Agree exchanges the ranks' records and refuses to go on when a rank's
// build, config or checkpoint differs from rank 0's. version is the
// program's, config the resolved config (YAML), resume the checkpoint this
// rank continues from ("" for a fresh start). Every rank calls it once,
// before it trains.
func (g *Group) Agree(version string, config []byte, resume string) error {
	if g == nil {
		return nil
	}
	sum := sha256.Sum256(config)
	me := g.peers[0]
	me.Host = hostname()
	me.Build, me.Exe, me.Shim = buildID(version)
	me.Config, me.Resume = hex.EncodeToString(sum[:]), resume
	data, err := json.Marshal(me)
	if err != nil {
		return err
	}
	parts, err := g.GatherBytes(data)
	if err != nil {
		return fmt.Errorf("data parallel: %s: exchanging the ranks' builds and configs: %w", g.launch.Where(), err)
	}
	peers := make([]peer, len(parts))
	for r, p := range parts {
		if err := json.Unmarshal(p, &peers[r]); err != nil {
			return fmt.Errorf("data parallel: the record of rank %d is unreadable (%v); is it running another build of troupe?", r, err)
		}
	}
	g.peers = peers
	names := map[int]string{}
	for _, p := range peers {
		names[p.Rank] = p.where()
	}
	g.w.setNames(names)
	first := peers[0]
	for _, p := range peers[1:] {
		switch {
		case p.Build != first.Build || p.Exe != first.Exe || p.Shim != first.Shim:
			return fmt.Errorf("data parallel: %s runs another build than %s: %s; start every node with the same bin/train and libtshim.so",
				p.where(), first.where(), buildDifference(p, first))
		case p.Config != first.Config:
			return g.configDifference(config, p, first)
		case p.Resume != first.Resume:
			return fmt.Errorf("data parallel: %s continues from %s but %s from %s; every node must see the run directory (a shared file system) or hold the same checkpoint",
				p.where(), startName(p.Resume), first.where(), startName(first.Resume))
		}
	}
	return nil
}

// buildDifference names what differs between two ranks' builds, the first
// rank's value first.
func buildDifference(p, first peer) string {
	var diff []string
	for _, f := range []struct{ what, a, b string }{{"", p.Build, first.Build}, {"executable SHA-256 ", p.Exe, first.Exe}, {"libtshim.so SHA-256 ", p.Shim, first.Shim}} {
		if f.a != f.b {
			diff = append(diff, fmt.Sprintf("%s%s vs %s", f.what, f.a, f.b))
		}
	}
	if p.Build == first.Build {
		diff = append(diff, "both "+p.Build)
	}
	return strings.Join(diff, ", ")
}

// startName words a record's checkpoint.
func startName(resume string) string {
	if resume == "" {
		return "the start (no checkpoint)"
	}
	return resume
}

// configDifference gathers the configs (every rank saw the mismatch, so
// every rank gathers) and names the first key where p's differs from rank 0's.
func (g *Group) configDifference(raw []byte, p, first peer) error {
	all, err := g.GatherBytes(raw)
	if err != nil {
		return fmt.Errorf("data parallel: the ranks' configs differ, and gathering them failed: %w", err)
	}
	if bytes.Equal(all[p.Rank], all[first.Rank]) {
		return fmt.Errorf("data parallel: the ranks' config hashes differ but their configs are equal; the all-gather is broken (report this)")
	}
	key, v0, vr := firstDifference(all[first.Rank], all[p.Rank])
	return fmt.Errorf("data parallel: the ranks' resolved configs differ: %s is %s on %s but %s on %s; start every rank with the same config file and --set flags",
		key, v0, first.where(), vr, p.where())
}

var buildOnce struct {
	sync.Once
	build, exe, shim string
}

// buildID is this program's build: versions, and SHA-256 (16 hex digits) of
// the executable and of the shim it loaded ("?" when unreadable).
func buildID(version string) (build, exe, shim string) {
	buildOnce.Do(func() {
		buildOnce.build = fmt.Sprintf("troupe %s, %s, libtorch %s", version, runtime.Version(), torch.VersionString())
		buildOnce.exe = "?"
		if path, err := os.Executable(); err == nil {
			buildOnce.exe = fileSum(path)
		}
		buildOnce.shim = fileSum(torch.ShimPath())
	})
	return buildOnce.build, buildOnce.exe, buildOnce.shim
}

// fileSum is the first 16 hex digits of a file's SHA-256, "?" when unreadable.
func fileSum(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return "?"
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "?"
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
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
