package model

// peft.go — adapters on disk in PEFT's layout, which PEFT, transformers and
// vLLM load:
//
//	adapter_config.json          peft_type LORA, r, lora_alpha, target_modules, …
//	adapter_model.safetensors    base_model.model.<projection>.lora_A.weight (r, in)
//	                             base_model.model.<projection>.lora_B.weight (out, r)
//
// Loading is strict, as Load is for models: every tensor the config implies
// must be there with its shape, no other tensor may be, and a config using a
// PEFT feature troupe does not implement (DoRA, trained biases, per-module
// rank patterns, fan_in_fan_out, layer subsets, regex targets) is refused by
// field name rather than silently loaded as something else.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"troupe/internal/atomicfile"
	"troupe/safetensors"
	"troupe/torch"
)

// Adapter file names inside a PEFT directory.
const (
	AdapterConfigFile  = "adapter_config.json"
	AdapterWeightsFile = "adapter_model.safetensors"
)

// peftConfig is adapter_config.json, with the fields troupe reads or checks.
type peftConfig struct {
	PEFTType          string          `json:"peft_type"`
	TaskType          string          `json:"task_type"`
	BaseModel         string          `json:"base_model_name_or_path,omitempty"`
	R                 int             `json:"r"`
	Alpha             float64         `json:"lora_alpha"`
	Dropout           float64         `json:"lora_dropout"`
	Targets           json.RawMessage `json:"target_modules"`
	Bias              string          `json:"bias"`
	FanInFanOut       bool            `json:"fan_in_fan_out"`
	RSLoRA            bool            `json:"use_rslora"`
	DoRA              bool            `json:"use_dora"`
	InferenceMode     bool            `json:"inference_mode"`
	InitLoRAWeights   bool            `json:"init_lora_weights"`
	ModulesToSave     json.RawMessage `json:"modules_to_save"`
	LayersToTransform json.RawMessage `json:"layers_to_transform"`
	RankPattern       map[string]any  `json:"rank_pattern"`
	AlphaPattern      map[string]any  `json:"alpha_pattern"`
}

// Save writes the adapter as a PEFT directory (created if missing) with its
// tensors converted to dtype. BaseModel, when set, is written as
// base_model_name_or_path.
func (a *Adapter) Save(dir string, dtype torch.DType) error {
	if a.base == nil {
		return fmt.Errorf("model: saving a freed adapter")
	}
	sdt, err := SafetensorsDType(dtype)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	targets, _ := json.Marshal(a.Config.Targets)
	cfg := peftConfig{
		PEFTType: "LORA", TaskType: "CAUSAL_LM", BaseModel: a.BaseModel,
		R: a.Config.Rank, Alpha: a.Config.Alpha, Dropout: a.Config.Dropout, Targets: targets,
		Bias: "none", RSLoRA: a.Config.RSLoRA, InferenceMode: true, InitLoRAWeights: true,
		ModulesToSave: json.RawMessage("null"), LayersToTransform: json.RawMessage("null"),
		RankPattern: map[string]any{}, AlphaPattern: map[string]any{},
	}
	js, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return err
	}
	tensors := lazyTensors(a.params, sdt, dtype)
	if err := safetensors.Write(filepath.Join(dir, AdapterWeightsFile), tensors, map[string]string{"format": "pt"}); err != nil {
		return err
	}
	return atomicfile.WriteBytes(filepath.Join(dir, AdapterConfigFile), append(js, '\n'))
}

// ReadAdapterConfig reads a PEFT directory's adapter_config.json and refuses
// what troupe does not implement.
func ReadAdapterConfig(dir string) (LoRAConfig, string, error) {
	path := filepath.Join(dir, AdapterConfigFile)
	raw, err := os.ReadFile(path)
	if err != nil {
		return LoRAConfig{}, "", fmt.Errorf("model: adapter: %w", err)
	}
	var pc peftConfig
	if err := json.Unmarshal(raw, &pc); err != nil {
		return LoRAConfig{}, "", fmt.Errorf("model: adapter: %s: %w", path, err)
	}
	bad := func(field string, v any) error {
		return fmt.Errorf("model: adapter: %s: %s is %v, which troupe does not support", path, field, v)
	}
	switch {
	case pc.PEFTType != "LORA":
		return LoRAConfig{}, "", bad("peft_type", fmt.Sprintf("%q (want \"LORA\")", pc.PEFTType))
	case pc.DoRA:
		return LoRAConfig{}, "", bad("use_dora", true)
	case pc.Bias != "" && pc.Bias != "none":
		return LoRAConfig{}, "", bad("bias", fmt.Sprintf("%q (want \"none\")", pc.Bias))
	case pc.FanInFanOut:
		return LoRAConfig{}, "", bad("fan_in_fan_out", true)
	case len(pc.RankPattern) > 0:
		return LoRAConfig{}, "", bad("rank_pattern", pc.RankPattern)
	case len(pc.AlphaPattern) > 0:
		return LoRAConfig{}, "", bad("alpha_pattern", pc.AlphaPattern)
	case !isNull(pc.LayersToTransform):
		return LoRAConfig{}, "", bad("layers_to_transform", string(pc.LayersToTransform))
	case !isNull(pc.ModulesToSave):
		return LoRAConfig{}, "", bad("modules_to_save", string(pc.ModulesToSave))
	}
	var targets []string
	if err := json.Unmarshal(pc.Targets, &targets); err != nil {
		var one string
		if json.Unmarshal(pc.Targets, &one) != nil {
			return LoRAConfig{}, "", fmt.Errorf("model: adapter: %s: target_modules must be a list of module names, got %s", path, pc.Targets)
		}
		if !slices.Contains(LoRATargets, one) {
			return LoRAConfig{}, "", bad("target_modules", fmt.Sprintf("%q (a regular expression; list the module names instead)", one))
		}
		targets = []string{one}
	}
	// PEFT writes target_modules from a set, in no fixed order: keep module order.
	var ordered []string
	for _, t := range LoRATargets {
		if slices.Contains(targets, t) {
			ordered = append(ordered, t)
		}
	}
	for _, t := range targets {
		if !slices.Contains(LoRATargets, t) {
			return LoRAConfig{}, "", bad("target_modules", fmt.Sprintf("%v (%q is not a Qwen projection)", targets, t))
		}
	}
	c := LoRAConfig{Rank: pc.R, Alpha: pc.Alpha, Targets: ordered, Dropout: 0, RSLoRA: pc.RSLoRA}
	if err := c.Validate(); err != nil {
		return LoRAConfig{}, "", fmt.Errorf("model: adapter: %s: %w", path, err)
	}
	return c, pc.BaseModel, nil
}

func isNull(raw json.RawMessage) bool { return len(raw) == 0 || string(raw) == "null" }

// LoadAdapter attaches the PEFT adapter in dir to m (a base model), its
// tensors converted to m's dtype and device. lora_dropout in the file is
// ignored: it does not change the weights, and troupe trains without it.
func (m *Model) LoadAdapter(dir string) (*Adapter, error) {
	cfg, baseName, err := ReadAdapterConfig(dir)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, AdapterWeightsFile)
	f, err := safetensors.Open(path)
	if err != nil {
		return nil, fmt.Errorf("model: adapter: %w", err)
	}
	defer f.Close()
	used := map[string]bool{}
	a, err := m.attach(cfg, func(key string, shape []int64, _ bool) (t *torch.Tensor, err error) {
		info, ok := f.Info(key)
		if !ok {
			return nil, fmt.Errorf("model: adapter %s: missing tensor %s (want shape %v)", path, key, shape)
		}
		if !slices.Equal(info.Shape, shape) {
			return nil, fmt.Errorf("model: adapter %s: tensor %s has shape %v, the adapter config and base model need %v", path, key, info.Shape, shape)
		}
		dt, err := TorchDType(info.DType)
		if err != nil {
			return nil, fmt.Errorf("model: adapter %s: tensor %s: %w", path, key, err)
		}
		data, err := f.Bytes(key)
		if err != nil {
			return nil, err
		}
		if err := safetensors.CheckWeight(key, info.DType, data); err != nil {
			return nil, fmt.Errorf("model: adapter %s: %w", path, err)
		}
		used[key] = true
		defer torch.Recover(&err)
		s := torch.NewScope()
		defer s.Close()
		return s.Keep(torch.FromBytes(data, dt, shape...).To(m.device, m.dtype)).Untrack(), nil
	})
	if err != nil {
		return nil, err
	}
	var extra []string
	for _, k := range f.Names() {
		if !used[k] {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		a.Free()
		return nil, fmt.Errorf("model: adapter %s: tensors the config does not imply (another base model, or unsupported PEFT modules): %v", path, extra[:min(len(extra), 5)])
	}
	a.BaseModel = baseName
	return a, nil
}
