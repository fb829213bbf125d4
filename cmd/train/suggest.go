package main

// suggest.go — what the CLI says about a name it does not know: a mistyped
// subcommand (`train evaluate`) or flag (`train eval --check`) is answered
// with the closest real one, and a flag that is a config key (`train
// --steps 3`) with the --set that sets it. The names come from the command
// tree and the config schema; the matching is internal/suggest's, the one
// place troupe suggests names. A config file given where a command goes
// (`train run.yaml`) is answered with the command line that runs it (-c).

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"troupe/config"
	"troupe/internal/cmdline"
	"troupe/internal/suggest"
)

// installSuggestions makes root (and every subcommand, which inherit it)
// answer unknown commands and flags with a suggestion.
func installSuggestions(root *cobra.Command) {
	root.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return unknownCommand(cmd, args[0])
		}
		return nil
	}
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		// `train evaluate --checkpoint X`: cobra parses the root's flags
		// before it looks at the stray word; the word is the mistake
		if cmd == root {
			if word := firstWord(commandArgs); word != "" {
				return unknownCommand(root, word)
			}
		}
		var nx *pflag.NotExistError
		if !errors.As(err, &nx) {
			return fmt.Errorf("%s%w", where(cmd), err)
		}
		return unknownFlag(cmd, err, nx.GetSpecifiedName(), nx.GetSpecifiedShortnames())
	})
}

// firstWord is the first argument that is neither a flag nor a flag's
// value, when it names no subcommand.
func firstWord(args []string) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return ""
		case strings.HasPrefix(a, "-"):
			known, value := rootFlag(a)
			if !known {
				return "" // the unknown flag comes first: it is the mistake
			}
			if value && !strings.Contains(a, "=") {
				i++ // its value
			}
		default:
			if slices.Contains(commandNames(newRoot()), a) {
				return ""
			}
			return a
		}
	}
	return ""
}

// rootFlag: a (as written, with dashes, perhaps =value) is a flag of the
// root command, and one that takes a value.
func rootFlag(a string) (known, value bool) {
	f := newRoot().Flags()
	name, _, _ := strings.Cut(a, "=")
	var fl *pflag.Flag
	if strings.HasPrefix(name, "--") {
		fl = f.Lookup(strings.TrimPrefix(name, "--"))
	} else if len(name) == 2 {
		fl = f.ShorthandLookup(name[1:])
	}
	if fl == nil {
		return false, false
	}
	return true, fl.NoOptDefVal == "" && fl.Value.Type() != "bool"
}

func commandNames(root *cobra.Command) []string {
	var names []string
	for _, c := range root.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
		}
	}
	return names
}

func unknownCommand(root *cobra.Command, word string) error {
	names := commandNames(root)
	if looksLikeConfig(word) { // `train run.yaml`: the config goes after -c
		return fmt.Errorf("%s is not a command; a run's config goes after -c: %s", word, cmdline.Train(withConfigFlag(commandArgs, word)...))
	}
	return fmt.Errorf("unknown command %q%s; the commands are %s (train --help says what each does)",
		word, suggest.DidYouMean(word, names), strings.Join(names, ", "))
}

// looksLikeConfig: word names a YAML file, or a file that exists.
func looksLikeConfig(word string) bool {
	if ext := strings.ToLower(filepath.Ext(word)); ext == ".yaml" || ext == ".yml" {
		return true
	}
	st, err := os.Stat(word)
	return err == nil && st.Mode().IsRegular()
}

// withConfigFlag is the command line args with -c before word (or, when
// args do not hold it, train -c word).
func withConfigFlag(args []string, word string) []string {
	for i, a := range args {
		if a == word {
			return append(append(append([]string(nil), args[:i]...), "-c", word), args[i+1:]...)
		}
	}
	return []string{"-c", word}
}

// unknownFlag suggests the command's closest flag, or the --set of a
// config key of that name when the command takes --set.
func unknownFlag(cmd *cobra.Command, err error, name, shorthands string) error {
	if shorthands != "" { // -x in a group of single-letter flags
		return fmt.Errorf("%s%v; %s", where(cmd), err, flagList(cmd))
	}
	var flags []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			flags = append(flags, f.Name)
		}
	})
	if cmd.Flags().Lookup("set") != nil {
		if key := configKeyNamed(name); key != "" {
			return fmt.Errorf("%sunknown flag --%s; it is a config key: --set %s=VALUE", where(cmd), name, key)
		}
	}
	if s := suggest.Closest(name, flags); s != "" {
		return fmt.Errorf("%sunknown flag --%s (did you mean --%s?)", where(cmd), name, s)
	}
	return fmt.Errorf("%sunknown flag --%s; %s", where(cmd), name, flagList(cmd))
}

// where prefixes a subcommand's errors with its name (main adds "train: ").
func where(cmd *cobra.Command) string {
	if !cmd.HasParent() {
		return ""
	}
	return cmd.Name() + ": "
}

func flagList(cmd *cobra.Command) string {
	return fmt.Sprintf("`%s --help` lists its flags", cmd.CommandPath())
}

// configKeyNamed is the config key whose last part is name (dashes read as
// underscores): the shortest such path, top-level sections before agents'
// overrides.
func configKeyNamed(name string) string {
	leaf := strings.ReplaceAll(name, "-", "_")
	best := ""
	for _, k := range config.KeyPaths() {
		if k == leaf || strings.HasSuffix(k, "."+leaf) {
			if best == "" || strings.Count(k, ".") < strings.Count(best, ".") {
				best = k
			}
		}
	}
	return best
}
