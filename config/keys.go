package config

// keys.go — the config's key paths, for the CLI's suggestions: a flag that
// names a config key (`--steps`) is answered with the --set that sets it
// (`--set run.steps=N`). Lists are written with [N], models with NAME; the
// env and workflow plug-ins' own sections are left out (their keys differ
// per plug-in).

import (
	"reflect"
	"sort"
)

// KeyPaths lists every settable key path of the schema, sorted.
func KeyPaths() []string {
	var out []string
	var walk func(t reflect.Type, path string)
	walk = func(t reflect.Type, path string) {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch t.Kind() {
		case reflect.Struct:
			if t == reflect.TypeOf(Env{}) || t == reflect.TypeOf(Workflow{}) {
				out = append(out, join(path, "name"))
				return
			}
			for k, f := range fields(t) {
				walk(f.Type, join(path, k))
			}
		case reflect.Slice:
			if e := t.Elem(); e.Kind() == reflect.Struct || e.Kind() == reflect.Pointer {
				walk(e, path+"[N]")
				return
			}
			out = append(out, path)
		case reflect.Map:
			walk(t.Elem(), join(path, "NAME"))
		default:
			out = append(out, path)
		}
	}
	walk(reflect.TypeOf(Config{}), "")
	sort.Strings(out)
	return out
}
