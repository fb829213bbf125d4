package config

// resume.go — what may change when a run is resumed. The checkpoint's
// resolved config (saved with it) is compared with the resumed run's, key
// by key. A key that changes what is trained — the estimator, the workflow
// and its roles, the environment, the agents and the models they train,
// the assignment, the model paths and dtypes, the optimizer, loss and
// sampling settings — is refused by name unless the caller allows it (a
// trained model's adapter shape is refused even then: the checkpoint's
// adapter cannot take another); keys that only change how long, how often or where the
// run logs, evaluates, checkpoints, exports or generates may change freely.
//
// The rule is a whitelist: a key not listed as harmless below is treated as
// one that changes training, so a new config key is safe by default.
//
// What it is not: the check that the checkpoint's files fit the model (ckpt
// compares tensor names, shapes and dtypes) or that the data position fits
// the dataset (rollout's iterator does).

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"troupe/rollout"
)

// ConfigChange is one key whose value differs between a checkpoint's config
// and the resumed run's.
type ConfigChange struct {
	Key      string // flattened path: advantage.estimator, agents[1].model
	Was, Now string // YAML scalars; "(absent)" where the key does not exist
	Trains   bool   // the change alters what is trained
}

func (c ConfigChange) String() string { return fmt.Sprintf("%s: %s → %s", c.Key, c.Was, c.Now) }

// harmlessKeys may change on resume: how long the run goes, where and how
// much it logs, its evaluation, checkpoint and export cadence, the
// generation engine (how rows are sampled, not what from), the devices,
// whether models on different devices update at once (the same results),
// the sharding of the training state over the ranks (checkpoints hold it
// whole), and the batch (the run notes that rollout seeds change from there).
var harmlessKeys = regexp.MustCompile(`^(run\.(name|steps|epochs|output_dir|log_samples|tensorboard|device|concurrent_updates)|` +
	`models\.[^.]+\.(device|reference_device|shard|shard_bucket_mib)|engine\..*|eval\..*|checkpoint\..*|export\..*|batch\..*)$`)

// ResumeChanges compares the checkpoint's config (saved) with the resumed
// run's (now). Options of environments and workflows the runs do not use
// are left out.
func ResumeChanges(saved, now *Config) ([]ConfigChange, error) {
	a, err := flatConfig(saved)
	if err != nil {
		return nil, fmt.Errorf("the checkpoint's config: %w", err)
	}
	b, err := flatConfig(now)
	if err != nil {
		return nil, err
	}
	var keys []string
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	unused := inactiveSections(saved, now)
	var out []ConfigChange
	gone := map[string]bool{} // list elements reported whole
	for _, k := range keys {
		was, okA := a[k]
		is, okB := b[k]
		if okA && okB && was == is || unused(k) || loraKey.MatchString(k) {
			continue
		}
		if !okA || !okB {
			// a list element only one side has (an agent added or removed) is one change
			side, other := a, b
			if !okA {
				side, other = b, a
			}
			if el := absentElement(k, other); el != "" {
				if !gone[el] {
					gone[el] = true
					desc := "{…}"
					if name, ok := side[el+".name"]; ok {
						desc = "{name: " + name + ", …}"
					}
					c := ConfigChange{Key: el, Was: desc, Now: "(absent)", Trains: !harmlessKeys.MatchString(k)}
					if !okA {
						c.Was, c.Now = "(absent)", desc
					}
					out = append(out, c)
				}
				continue
			}
		}
		if !okA {
			was = "(absent)"
		}
		if !okB {
			is = "(absent)"
		}
		out = append(out, ConfigChange{Key: k, Was: was, Now: is, Trains: !harmlessKeys.MatchString(k)})
	}
	// the broadest changes first (agents[1], workflow.name before workflow.x.y)
	slices.SortStableFunc(out, func(x, y ConfigChange) int { return strings.Count(x.Key, ".") - strings.Count(y.Key, ".") })
	return out, nil
}

// Differences is every way two configs differ in what they run: the keys
// of ResumeChanges, plus each trained model's adapter where it differs
// (key "trained model <name>: adapter"). `train compare` groups runs as
// seeds of one experiment only when this holds nothing but the seed and
// keys that do not change what is trained or measured.
func Differences(a, b *Config) ([]ConfigChange, error) {
	out, err := ResumeChanges(a, b)
	if err != nil {
		return nil, err
	}
	was := map[string]*LoRA{}
	for _, tr := range a.Trained() {
		was[tr.Name] = tr.LoRA
	}
	for _, tr := range b.Trained() {
		if old, ok := was[tr.Name]; ok && describeAdapter(old) != describeAdapter(tr.LoRA) {
			out = append(out, ConfigChange{Key: "trained model " + tr.Name + ": adapter", Was: describeAdapter(old), Now: describeAdapter(tr.LoRA), Trains: true})
		}
	}
	return out, nil
}

// absentElement is the shortest list-element prefix of key ("agents[1]")
// of which flat holds no key at all, or "".
func absentElement(key string, flat map[string]string) string {
	for i := 0; i < len(key); i++ {
		if key[i] != ']' {
			continue
		}
		prefix := key[:i+1]
		found := false
		for k := range flat {
			if k == prefix || strings.HasPrefix(k, prefix+".") || strings.HasPrefix(k, prefix+"[") {
				found = true
				break
			}
		}
		if !found {
			return prefix
		}
	}
	return ""
}

// CheckResume loads the config saved in a checkpoint (savedPath) and
// compares it with now. With changes to what is trained and allow false,
// the error names every such key and the flag; otherwise it returns all
// changes, for the caller to show and log (LogResumeChanges).
func CheckResume(savedPath string, now *Config, allow bool, flag string) ([]ConfigChange, error) {
	saved, err := LoadSaved(savedPath, nil)
	if err != nil {
		return nil, err
	}
	if err := sameAdapters(saved, now); err != nil {
		return nil, err
	}
	changes, err := ResumeChanges(saved, now)
	if err != nil {
		return nil, err
	}
	var trains []string
	for _, c := range changes {
		if c.Trains {
			trains = append(trains, c.String())
		}
	}
	if len(trains) > 0 && !allow {
		more := ""
		if len(trains) > 8 {
			more = fmt.Sprintf(" (and %d more)", len(trains)-8)
			trains = trains[:8]
		}
		return nil, fmt.Errorf("the config changes what is trained since the checkpoint: %s%s; resuming would continue another run under this one's name. Undo the change (resume with the checkpoint's own config: --resume=DIR without --config), start a new run, or pass %s to resume anyway (the change is logged in the run directory)",
			strings.Join(trains, "; "), more, flag)
	}
	return changes, nil
}

// ResumeLogName is the file in the run directory that records the config
// changes of each resume.
const ResumeLogName = "config-changes.log"

// LogResumeChanges appends the changes of a resume from checkpoint (at
// step) to runDir/config-changes.log, one line each, with the time.
// Nothing is written without changes.
func LogResumeChanges(runDir, checkpoint string, step int, changes []ConfigChange) error {
	if len(changes) == 0 {
		return nil
	}
	f, err := os.OpenFile(filepath.Join(runDir, ResumeLogName), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("config: logging the resume's config changes: %w", err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# %s: resumed from %s (step %d) with %d config changes\n", time.Now().UTC().Format(time.RFC3339), checkpoint, step, len(changes))
	for _, c := range changes {
		what := "harmless"
		if c.Trains {
			what = "changes training"
		}
		fmt.Fprintf(&b, "%s\t(%s)\n", c, what)
	}
	if _, err := f.WriteString(b.String()); err != nil {
		f.Close()
		return fmt.Errorf("config: logging the resume's config changes: %w", err)
	}
	return f.Close()
}

// loraKey matches the keys of adapter shapes. They are not compared key by
// key: what a resume must keep is each trained model's effective adapter
// (sameAdapters), and a key that changes none (lora.rank in a run without
// adapters, a run-wide value every agent overrides) changes nothing.
var loraKey = regexp.MustCompile(`^(lora|agents\[[0-9]+\]\.lora)(\.|$)`)

// sameAdapters refuses a resume that changes a trained model's adapter
// (its rank, alpha, targets, rsLoRA, or adapter versus full weights): the
// checkpoint's adapter keeps the shape it was trained with, so the change
// could be neither applied nor honestly logged, whatever
// --allow-config-change says.
func sameAdapters(saved, now *Config) error {
	was := map[string]*LoRA{}
	for _, tr := range saved.Trained() {
		was[tr.Name] = tr.LoRA
	}
	for _, tr := range now.Trained() {
		old, ok := was[tr.Name]
		if !ok {
			continue // a model the checkpoint lacks: the resume refuses it by name
		}
		if describeAdapter(old) != describeAdapter(tr.LoRA) {
			return fmt.Errorf("trained model %q: its adapter is %s in the checkpoint and %s in the config; a checkpoint's adapter keeps the shape it was trained with, so this cannot change on resume (not even with --allow-config-change): undo the change (resume with the checkpoint's own config: --resume=DIR without --config), or start a new run",
				tr.Name, describeAdapter(old), describeAdapter(tr.LoRA))
		}
	}
	return nil
}

func describeAdapter(l *LoRA) string {
	if l == nil {
		return "none (full weights)"
	}
	return fmt.Sprintf("rank %d, alpha %g, targets [%s], rslora %v", l.Rank, l.Alpha, strings.Join(l.Targets, ","), l.RSLoRA)
}

// inactiveSections reports keys under env.<key> and workflow.<key> whose
// plug-in neither run uses.
func inactiveSections(a, b *Config) func(string) bool {
	used := map[string]bool{}
	for _, c := range []*Config{a, b} {
		if s, err := rollout.EnvironmentOf(c.Env.Name); err == nil {
			used["env."+s.Key] = true
		}
		if s, err := rollout.WorkflowOf(c.Workflow.Name); err == nil {
			used["workflow."+s.Key] = true
		}
	}
	return func(key string) bool {
		parts := strings.SplitN(key, ".", 3)
		if len(parts) < 3 || parts[0] != "env" && parts[0] != "workflow" {
			return false
		}
		return !used[parts[0]+"."+parts[1]]
	}
}

// flatConfig renders c as flattened key paths → YAML scalars.
func flatConfig(c *Config) (map[string]string, error) {
	raw, err := c.Marshal()
	if err != nil {
		return nil, err
	}
	var n yaml.Node
	if err := yaml.Unmarshal(raw, &n); err != nil {
		return nil, err
	}
	out := map[string]string{}
	if len(n.Content) > 0 {
		flatten(n.Content[0], "", out)
	}
	return out, nil
}

func flatten(n *yaml.Node, path string, out map[string]string) {
	switch n.Kind {
	case yaml.MappingNode:
		if len(n.Content) == 0 {
			out[path] = "{}"
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			flatten(n.Content[i+1], join(path, n.Content[i].Value), out)
		}
	case yaml.SequenceNode:
		if len(n.Content) == 0 {
			out[path] = "[]"
		}
		for i, c := range n.Content {
			flatten(c, fmt.Sprintf("%s[%d]", path, i), out)
		}
	case yaml.AliasNode:
		flatten(n.Alias, path, out)
	default:
		v := n.Value
		if n.Tag == "!!null" {
			v = "null"
		}
		if v == "" || strings.ContainsAny(v, " :#") {
			v = fmt.Sprintf("%q", v)
		}
		out[path] = v
	}
}
