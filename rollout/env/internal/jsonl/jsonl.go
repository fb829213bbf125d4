// Package jsonl reads the JSON Lines dataset files of the cooperative
// environments (writing, coding): one record per non-blank line.
//
// Files: jsonl.go (all of it).
//
// What it is not: a record decoder. Each environment decodes its own
// records; this package only walks the lines and names the file and line in
// the errors it makes.
package jsonl

import (
	"bufio"
	"fmt"
	"os"
	"strings"

	"troupe/rollout"
)

// Tasks reads path and returns the task task makes of each non-blank line
// (trimmed; line counts from 1), stopping at the first error it returns.
// env names the environment in the errors; a file without tasks is one.
func Tasks(env, path string, task func(line int, record string) (rollout.Task, error)) (rollout.SliceSource, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: dataset: %w", env, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var tasks rollout.SliceSource
	line := 0
	for sc.Scan() {
		line++
		b := strings.TrimSpace(sc.Text())
		if b == "" {
			continue
		}
		t, err := task(line, b)
		if err != nil {
			return nil, err
		}
		tasks = append(tasks, t)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: dataset %s: %w", env, path, err)
	}
	if len(tasks) == 0 {
		return nil, fmt.Errorf("%s: dataset %s has no tasks", env, path)
	}
	return tasks, nil
}
