package run

// comparegroups.go — which runs of a comparison are seeds of one
// experiment. A group's charts and table average its runs, so runs join one
// only when the config.yaml each wrote agrees with the group's in all but
// the seed and keys that change neither what is trained nor what is
// measured (where the run writes and logs, its devices, its generation
// engine, its checkpoints and export). Names do not group runs: two runs
// called team-s1 and team-s2 with different learning rates are two groups,
// and the report says why. A run without a readable config.yaml, and a
// run that repeats another's config and seed (a copy), stand alone.
//
// What it is not: a check that the runs' data files or models are the same
// files (a config names them by path).

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"troupe/config"
)

// seedFree are the keys seeds of one experiment may differ in.
var seedFree = regexp.MustCompile(`^(run\.(seed|name|output_dir|log_samples|tensorboard|device)|models\.[^.]+\.(device|reference_device)|checkpoint\..*|export\..*|engine\..*)$`)

var seedSuffix = regexp.MustCompile(`-s\d+$`)

// compareRun is a run directory of a comparison, with its config.
type compareRun struct {
	dir    string
	cfg    *config.Config // nil: no readable config.yaml (cfgErr says why)
	cfgErr error
}

// distinctRuns refuses a run directory given twice, under any name (a
// symbolic link, a path with . or ..).
func distinctRuns(dirs []string) error {
	var seen []os.FileInfo
	for _, d := range dirs {
		st, err := os.Stat(d)
		if err != nil {
			return fmt.Errorf("compare: %w", err)
		}
		for j, s := range seen {
			if os.SameFile(st, s) {
				return fmt.Errorf("compare: run %s is given twice (also as %s); name each run once", d, dirs[j])
			}
		}
		seen = append(seen, st)
	}
	return nil
}

// runLabels names each run by its directory's base name, or by its path
// where two runs share a base name.
func runLabels(dirs []string) []string {
	count := map[string]int{}
	for _, d := range dirs {
		count[filepath.Base(filepath.Clean(d))]++
	}
	out := make([]string, len(dirs))
	for i, d := range dirs {
		out[i] = filepath.Base(filepath.Clean(d))
		if count[out[i]] > 1 {
			out[i] = filepath.Clean(d)
		}
	}
	return out
}

// loadCompareRun reads a run's config.yaml, keeping the error.
func loadCompareRun(dir string) compareRun {
	cfg, err := config.LoadSaved(filepath.Join(dir, RunConfigFile), nil)
	return compareRun{dir: dir, cfg: cfg, cfgErr: err}
}

// groupSeeds sets runs[i].group (see the file comment) and returns one note
// per group of several runs and per run left out of the group its name
// suggests.
func groupSeeds(runs []runSeries, info []compareRun) []string {
	type group struct {
		name    string
		members []int
	}
	var groups []*group
	var notes []string
	names := map[string]bool{}
	newGroup := func(i int) {
		name := stem(runs[i].label)
		for k := 2; names[name]; k++ {
			name = fmt.Sprintf("%s #%d", stem(runs[i].label), k)
		}
		names[name] = true
		groups = append(groups, &group{name: name, members: []int{i}})
	}
	for i := range runs {
		if info[i].cfg == nil {
			notes = append(notes, fmt.Sprintf("%s stands alone: its config.yaml cannot be read (%v), so it is not known to be a seed of another run", runs[i].label, info[i].cfgErr))
			newGroup(i)
			continue
		}
		joined, told := false, false
		for _, g := range groups {
			rep := g.members[0]
			if info[rep].cfg == nil {
				continue
			}
			diff, err := seedDifferences(info[rep].cfg, info[i].cfg)
			switch {
			case err != nil:
				diff = []string{err.Error()}
			case len(diff) == 0 && info[rep].cfg.Run.Seed == info[i].cfg.Run.Seed:
				diff = []string{fmt.Sprintf("it repeats the config and run.seed %d (a copy?), so it is not another seed", info[i].cfg.Run.Seed)}
			}
			if len(diff) == 0 {
				g.members = append(g.members, i)
				joined = true
				break
			}
			if !told && stem(runs[i].label) == stem(runs[rep].label) {
				notes = append(notes, fmt.Sprintf("%s is not grouped with %s: %s", runs[i].label, runs[rep].label, strings.Join(diff, "; ")))
				told = true // the first run its name suggests is reason enough
			}
		}
		if !joined {
			newGroup(i)
		}
	}
	for _, g := range groups {
		var labels []string
		for _, i := range g.members {
			runs[i].group = g.name
			labels = append(labels, runs[i].label)
		}
		if len(g.members) > 1 {
			notes = append(notes, fmt.Sprintf("group %s: %s (configs that agree but for run.seed)", g.name, strings.Join(labels, ", ")))
		}
	}
	return notes
}

// stem is a run label's base name without its -sN seed suffix.
func stem(label string) string { return seedSuffix.ReplaceAllString(filepath.Base(label), "") }

// seedDifferences lists what differs between two configs beyond what seeds
// of one experiment may differ in.
func seedDifferences(a, b *config.Config) ([]string, error) {
	changes, err := config.Differences(a, b)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, c := range changes {
		if !seedFree.MatchString(c.Key) {
			out = append(out, fmt.Sprintf("its config differs in %s", c))
		}
	}
	if len(out) > 3 {
		out = append(out[:3], fmt.Sprintf("and %d more", len(out)-3))
	}
	return out, nil
}
