package run

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// publishedSets are --set flags pointing each models entry of the shipped
// config at testdata/published/<last element of its path>/, the model's
// published config.json (Qwen3-1.7B/4B/8B, Qwen2.5-3B, Qwen2.5-Coder-3B,
// Qwen2.5-7B-Instruct, Llama-3.2-3B-Instruct as Hugging Face lists them).
func publishedSets(t *testing.T, file string) []string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Models map[string]struct {
			Path string `yaml:"path"`
		} `yaml:"models"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	var sets []string
	for name, m := range doc.Models {
		dir := filepath.Join("..", "testdata", "published", filepath.Base(m.Path))
		if _, err := os.Stat(filepath.Join(dir, "config.json")); err != nil {
			t.Fatalf("%s: models.%s is %s, and testdata/published has no config.json of that model", file, name, m.Path)
		}
		sets = append(sets, "models."+name+".path="+dir)
	}
	return sets
}

// launchRanks is the --nproc of the config header's "# launch:" line (1
// without one), which every shipped real-size config must have.
func launchRanks(t *testing.T, file string) int {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^# launch: (bin/train .*)$`).FindSubmatch(data)
	if m == nil {
		t.Fatalf("%s: no \"# launch: bin/train …\" line in its header", file)
	}
	if !strings.Contains(string(m[1]), "-c configs/"+filepath.Base(file)) {
		t.Fatalf("%s: the launch line %q does not run this file", file, m[1])
	}
	if n := regexp.MustCompile(`--nproc (\d+)`).FindSubmatch(m[1]); n != nil {
		r, _ := strconv.Atoi(string(n[1]))
		return r
	}
	return 1
}

// Every shipped real-size config — configs/*.yaml but the *-tiny ones, 9
// files — fits one node of 8 × 80 GB GPUs launched as its header says:
// `train plan --gpu-gib 80` (with that --nproc) exits 0 and says "fits"
// for each device, slack included, on the published models' shapes, and
// the devices times the ranks are at most 8.
func TestShippedConfigsFitEightGPUs(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "configs", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, file := range files {
		if strings.HasSuffix(file, "-tiny.yaml") {
			continue
		}
		n++
		t.Run(filepath.Base(file), func(t *testing.T) {
			ranks := launchRanks(t, file)
			var out strings.Builder
			c := &Plan{Config: file, Sets: publishedSets(t, file), GpuGiB: 80, Prompt: 1024, Ranks: ranks}
			if err := c.Run(&out, nil); err != nil {
				t.Fatalf("plan --nproc %d: %v\n%s", ranks, err, out.String())
			}
			devices := regexp.MustCompile(`(?m)^cuda:\d+ \(80\.0 GiB\)$`).FindAllString(out.String(), -1)
			fits := regexp.MustCompile(`(?m)^  peak ≈ [0-9.]+ GiB of 80\.0 GiB: fits, with`).FindAllString(out.String(), -1)
			if len(devices) == 0 || len(fits) != len(devices) {
				t.Fatalf("%d GPUs planned, %d say fits:\n%s", len(devices), len(fits), out.String())
			}
			if len(devices)*ranks > 8 {
				t.Fatalf("%d devices × %d ranks: more than one node's 8 GPUs", len(devices), ranks)
			}
		})
	}
	if n != 9 {
		t.Fatalf("%d real-size configs shipped, this test was written for 9: add the new one's models to testdata/published and update the count", n)
	}
}

// A plan that does not fit exits non-zero and names remedies it planned,
// best first: for AT-GRPO's code team without activation checkpointing,
// checkpointing (same results) before data-parallel sharding before
// adapters; each remedy's figure is what planning the config with it gives.
func TestPlanRefusesWithRankedRemedies(t *testing.T) {
	file := filepath.Join("..", "configs", "atgrpo-code-qwen3-1.7b.yaml")
	sets := append(publishedSets(t, file), "optim.activation_checkpointing=false", "optim.state_dtype=float32")
	var out strings.Builder
	err := (&Plan{Config: file, Sets: sets, GpuGiB: 80, Prompt: 1024}).Run(&out, nil)
	if err == nil || !strings.Contains(err.Error(), "cuda:0 does not fit 80.0 GiB") {
		t.Fatalf("plan of a config that does not fit: err %v, want an error naming cuda:0\n%s", err, out.String())
	}
	lines := regexp.MustCompile(`(?m)^  (--\S+ .*?)\s+→ ([0-9.]+) GiB`).FindAllStringSubmatch(out.String(), -1)
	if len(lines) < 3 {
		t.Fatalf("want at least 3 remedies, got %d:\n%s", len(lines), out.String())
	}
	order := []string{"--set optim.activation_checkpointing=true", "--nproc ", "--set assignment=lora"} // data parallel on as many GPUs as it takes
	at := 0
	for _, l := range lines {
		if at < len(order) && strings.HasPrefix(l[1], order[at]) {
			at++
		}
	}
	if at != len(order) || !strings.HasPrefix(lines[0][1], order[0]) {
		t.Fatalf("remedies not ranked %v (same results, more GPUs, another model) with checkpointing first:\n%s", order, out.String())
	}
	// the first remedy's figure is the plan of the config with it
	var again strings.Builder
	if err := (&Plan{Config: file, Sets: append(sets, "optim.activation_checkpointing=true"), GpuGiB: 80, Prompt: 1024}).Run(&again, nil); err != nil {
		t.Fatalf("the first remedy does not fit when applied: %v\n%s", err, again.String())
	}
	if !strings.Contains(again.String(), "peak ≈ "+lines[0][2]+" GiB of 80.0 GiB: fits") {
		t.Fatalf("remedy says %s GiB; planning with it:\n%s", lines[0][2], again.String())
	}
}
