package model

// weights.go — building a Model from a weight source by checkpoint key path:
// Hugging Face safetensors (Load), a seeded random initialisation (New), and
// writing the same layout back (Save). One constructor, newModel, serves
// every source: each struct field is fetched by its full key and expected
// shape, so a missing tensor, an unexpected one or a shape mismatch is
// reported with the key and both shapes.

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"troupe/internal/atomicfile"
	"troupe/safetensors"
	"troupe/torch"
)

// Options says where the weights go and in which dtype.
type Options struct {
	DType  torch.DType  // Float32 or BFloat16; Float16 on CUDA only (untested)
	Device torch.Device // torch.CPU or torch.CUDA(n)
}

// check refuses a dtype the forward cannot run in on the device, at load
// rather than inside libtorch at the first forward: the weights' dtype must
// be floating point, and half precision (float16) is CUDA only — libtorch's
// CPU kernels lack it for some of the forward's ops (bfloat16 has them).
func (o Options) check() error {
	switch {
	case !o.DType.IsFloat():
		return fmt.Errorf("model: dtype %v: weights load as float32 or bfloat16 (float16 on CUDA)", o.DType)
	case o.DType == torch.Float16 && !o.Device.IsCUDA():
		return fmt.Errorf("model: dtype float16 on the CPU: libtorch's CPU kernels do not run the whole forward in half precision; use bfloat16 (the same size) or float32 on the CPU, or float16 on a CUDA device")
	}
	return nil
}

// source produces a tensor for a key, already in the model's dtype and device.
type source interface {
	tensor(key string, shape []int64) (*torch.Tensor, error)
}

// loadError carries a source error through the constructor's panics to the
// boundary (Load/New), which returns it.
type loadError struct{ err error }

// vars is a source seen through a key prefix (candle's VarBuilder.pp). It
// records every tensor it hands out, so a failed construction frees them.
type vars struct {
	prefix  string
	src     source
	created *[]*torch.Tensor
}

func (v vars) pp(name string) vars {
	if v.prefix == "" {
		return vars{name, v.src, v.created}
	}
	return vars{v.prefix + "." + name, v.src, v.created}
}

func (v vars) ppi(i int) vars { return v.pp(strconv.Itoa(i)) }

func (v vars) get(name string, shape ...int64) *torch.Tensor {
	key := v.pp(name).prefix
	t, err := v.src.tensor(key, shape)
	if err != nil {
		panic(loadError{err})
	}
	*v.created = append(*v.created, t)
	return t
}

func (v vars) linear(name string, out, in int64, bias bool) Linear {
	l := Linear{W: v.pp(name).get("weight", out, in)}
	if bias {
		l.B = v.pp(name).get("bias", out)
	}
	return l
}

// fuse lays the weights (and biases, when they have them) of ls end to end
// along the output dimension in one new tensor each, and makes every
// Linear's W and B a leaf view of its own rows: the storage is shared, so
// the parameters, their checkpoint keys, grads and optimizer state stay per
// projection and in-place updates of them (the optimizer, a resume, a
// broadcast) are what the fused tensor holds. The separate tensors are
// freed. (N.B. only in-place writes keep the two in step: whoever replaces a
// projection's tensor must fuse again.)
func (v vars) fuse(ls ...*Linear) Linear {
	cat := func(field func(*Linear) **torch.Tensor) *torch.Tensor {
		parts := make([]*torch.Tensor, len(ls))
		for i, l := range ls {
			parts[i] = *field(l)
		}
		whole := torch.Cat(parts, 0).Untrack() // (Σ out, …)
		*v.created = append(*v.created, whole)
		var at int64
		for i, l := range ls {
			n := parts[i].Size(0)
			rows := whole.Narrow(0, at, n)
			view := rows.Detach().Untrack() // a leaf sharing whole's storage
			rows.Free()
			*v.created = append(*v.created, view)
			parts[i].Free()
			*field(l) = view
			at += n
		}
		return whole
	}
	f := Linear{W: cat(func(l *Linear) **torch.Tensor { return &l.W })}
	if ls[0].B != nil {
		f.B = cat(func(l *Linear) **torch.Tensor { return &l.B })
	}
	return f
}

func (v vars) norm(name string, dim int64, eps float64) RMSNorm {
	return RMSNorm{W: v.pp(name).get("weight", dim), Eps: eps}
}

// newModel fetches every weight by key from src.
func newModel(cfg Config, src source, opt Options) (m *Model, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := opt.check(); err != nil {
		return nil, err
	}
	m = &Model{Config: cfg, dtype: opt.DType, device: opt.Device}
	var created []*torch.Tensor
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		torch.FreeAll(created...)
		m.rope.invFreq.Free()
		m = nil
		switch e := r.(type) {
		case loadError:
			err = e.err
		case *torch.Error:
			err = e
		default:
			panic(r)
		}
	}()
	D, V, F := int64(cfg.HiddenSize), int64(cfg.VocabSize), int64(cfg.IntermediateSize)
	H, KVH, Dh := int64(cfg.NumHeads), int64(cfg.NumKVHeads), int64(cfg.HeadDim)
	root := vars{src: src, created: &created}
	mv := root.pp("model")
	m.Embed = mv.pp("embed_tokens").get("weight", V, D)
	for i := 0; i < cfg.NumLayers; i++ {
		lv := mv.pp("layers").ppi(i)
		av := lv.pp("self_attn")
		blk := &Block{
			InputNorm: lv.norm("input_layernorm", D, cfg.RMSNormEps),
			Attn: Attention{
				Q:     av.linear("q_proj", H*Dh, D, cfg.AttentionBias),
				K:     av.linear("k_proj", KVH*Dh, D, cfg.AttentionBias),
				V:     av.linear("v_proj", KVH*Dh, D, cfg.AttentionBias),
				O:     av.linear("o_proj", D, H*Dh, cfg.outputBias()),
				heads: H, kvHeads: KVH, headDim: Dh,
			},
			PostNorm: lv.norm("post_attention_layernorm", D, cfg.RMSNormEps),
			MLP: MLP{
				Gate: lv.pp("mlp").linear("gate_proj", F, D, cfg.MLPBias),
				Up:   lv.pp("mlp").linear("up_proj", F, D, cfg.MLPBias),
				Down: lv.pp("mlp").linear("down_proj", D, F, cfg.MLPBias),
			},
		}
		if cfg.hasQKNorm() {
			qn, kn := av.norm("q_norm", Dh, cfg.RMSNormEps), av.norm("k_norm", Dh, cfg.RMSNormEps)
			blk.Attn.QNorm, blk.Attn.KNorm = &qn, &kn
		}
		blk.Attn.qkv = lv.fuse(&blk.Attn.Q, &blk.Attn.K, &blk.Attn.V)
		blk.MLP.gateUp = lv.fuse(&blk.MLP.Gate, &blk.MLP.Up)
		m.Layers = append(m.Layers, blk)
	}
	m.Norm = mv.norm("norm", D, cfg.RMSNormEps)
	if cfg.TieEmbeddings {
		m.LMHead = m.Embed
	} else {
		m.LMHead = root.pp("lm_head").get("weight", V, D)
	}
	m.rope = newRotary(cfg, opt.Device)
	return m, nil
}

// Param is a named weight.
type Param struct {
	Name string
	T    *torch.Tensor
}

// Params lists the weights by checkpoint key in module order; a tied lm_head
// is not listed twice. An adapter's view lists the adapter's tensors: what
// it trains and saves.
func (m *Model) Params() []Param {
	if m.adapter != nil {
		return m.adapter.params
	}
	ps := []Param{{"model.embed_tokens.weight", m.Embed}}
	add := func(name string, t *torch.Tensor) {
		if t != nil {
			ps = append(ps, Param{name, t})
		}
	}
	for i, b := range m.Layers {
		p := fmt.Sprintf("model.layers.%d.", i)
		add(p+"input_layernorm.weight", b.InputNorm.W)
		for _, l := range []struct {
			name string
			lin  Linear
		}{{"q_proj", b.Attn.Q}, {"k_proj", b.Attn.K}, {"v_proj", b.Attn.V}, {"o_proj", b.Attn.O}} {
			add(p+"self_attn."+l.name+".weight", l.lin.W)
			add(p+"self_attn."+l.name+".bias", l.lin.B)
		}
		if b.Attn.QNorm != nil {
			add(p+"self_attn.q_norm.weight", b.Attn.QNorm.W)
			add(p+"self_attn.k_norm.weight", b.Attn.KNorm.W)
		}
		add(p+"post_attention_layernorm.weight", b.PostNorm.W)
		for _, l := range []struct {
			name string
			lin  Linear
		}{{"gate_proj", b.MLP.Gate}, {"up_proj", b.MLP.Up}, {"down_proj", b.MLP.Down}} {
			add(p+"mlp."+l.name+".weight", l.lin.W)
			add(p+"mlp."+l.name+".bias", l.lin.B)
		}
	}
	add("model.norm.weight", m.Norm.W)
	if !m.Config.TieEmbeddings {
		add("lm_head.weight", m.LMHead)
	}
	return ps
}

// Parameters lists the weight tensors in Params order (for optimizers).
func (m *Model) Parameters() []*torch.Tensor {
	var out []*torch.Tensor
	for _, p := range m.Params() {
		out = append(out, p.T)
	}
	return out
}

// NumParams counts the weights' elements (a tied head once).
func (m *Model) NumParams() int64 {
	var n int64
	for _, p := range m.Params() {
		n += p.T.Numel()
	}
	return n
}

// SetRequiresGrad turns gradient recording on or off for every weight.
func (m *Model) SetRequiresGrad(on bool) {
	for _, p := range m.Params() {
		p.T.SetRequiresGrad(on)
	}
}

// Free releases every weight and every attached adapter; a view frees its
// adapter only. Idempotent.
func (m *Model) Free() {
	if m == nil {
		return
	}
	if m.adapter != nil {
		m.adapter.Free()
		return
	}
	for _, a := range m.adapters {
		a.Free()
	}
	for _, p := range m.Params() {
		p.T.Free()
	}
	for _, b := range m.Layers {
		torch.FreeAll(b.Attn.qkv.W, b.Attn.qkv.B, b.MLP.gateUp.W, b.MLP.gateUp.B)
	}
	m.LMHead.Free()
	m.rope.invFreq.Free()
}

// ---- safetensors ----

// SafetensorsDType maps a torch dtype to its safetensors spelling.
func SafetensorsDType(d torch.DType) (safetensors.DType, error) {
	switch d {
	case torch.Float32:
		return safetensors.F32, nil
	case torch.BFloat16:
		return safetensors.BF16, nil
	case torch.Float16:
		return safetensors.F16, nil
	case torch.Float64:
		return safetensors.F64, nil
	case torch.Int64:
		return safetensors.I64, nil
	case torch.Int32:
		return safetensors.I32, nil
	case torch.Int16:
		return safetensors.I16, nil
	case torch.Int8:
		return safetensors.I8, nil
	case torch.Uint8:
		return safetensors.U8, nil
	case torch.Bool:
		return safetensors.Bool, nil
	}
	return 0, fmt.Errorf("no safetensors dtype for %v", d)
}

// TorchDType maps a safetensors dtype to torch's.
func TorchDType(d safetensors.DType) (torch.DType, error) {
	for _, t := range []torch.DType{torch.Float32, torch.BFloat16, torch.Float16, torch.Float64, torch.Int64, torch.Int32, torch.Int16, torch.Int8, torch.Uint8, torch.Bool} {
		if s, _ := SafetensorsDType(t); s == d {
			return t, nil
		}
	}
	return 0, fmt.Errorf("safetensors dtype %v has no torch equivalent here", d)
}

// fileSource reads tensors from a Hugging Face model directory, converting
// them to the target dtype and device, and remembers which keys were used.
type fileSource struct {
	dir  *safetensors.ModelDir
	opt  Options
	used map[string]bool
}

func (f *fileSource) tensor(key string, shape []int64) (t *torch.Tensor, err error) {
	info, ok := f.dir.Info(key)
	if !ok {
		return nil, fmt.Errorf("%s: missing tensor %s (want shape %v)", f.dir.Dir(), key, shape)
	}
	if !slices.Equal(info.Shape, shape) {
		return nil, fmt.Errorf("%s: tensor %s has shape %v, the config needs %v", f.dir.Dir(), key, info.Shape, shape)
	}
	data, err := f.dir.Bytes(key)
	if err != nil {
		return nil, err
	}
	if err := safetensors.CheckWeight(key, info.DType, data); err != nil {
		return nil, fmt.Errorf("%s: %w", f.dir.Dir(), err)
	}
	dt, err := TorchDType(info.DType)
	if err != nil {
		return nil, fmt.Errorf("%s: tensor %s: %w", f.dir.Dir(), key, err)
	}
	f.used[key] = true
	defer torch.Recover(&err)
	raw := torch.FromBytes(data, dt, shape...).Untrack()
	defer raw.Free()
	return raw.To(f.opt.Device, f.opt.DType).Untrack(), nil
}

// ignorableKey names tensors some checkpoints carry that the model does not
// use: a duplicate lm_head in tied checkpoints, and rotary buffers written
// by old transformers versions.
func ignorableKey(key string, cfg Config) bool {
	return (cfg.TieEmbeddings && key == "lm_head.weight") || strings.HasSuffix(key, "rotary_emb.inv_freq")
}

// Load reads a Hugging Face directory of a supported family (config.json plus
// model.safetensors or a sharded index) into opt's dtype and device. The
// match is strict: every tensor the config implies must be present with its
// shape, and the files may hold no other tensor.
func Load(dir string, opt Options) (*Model, error) {
	cfg, err := LoadConfig(dir)
	if err != nil {
		return nil, err
	}
	md, err := safetensors.OpenModelDir(dir)
	if err != nil {
		return nil, err
	}
	defer md.Close()
	src := &fileSource{dir: md, opt: opt, used: map[string]bool{}}
	m, err := newModel(cfg, src, opt)
	if err != nil {
		return nil, fmt.Errorf("model: loading %s: %w", dir, err)
	}
	var extra []string
	for _, k := range md.Names() {
		if !src.used[k] && !ignorableKey(k, cfg) {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		m.Free()
		if len(extra) > 5 {
			extra = append(extra[:5], fmt.Sprintf("… (%d more)", len(extra)-5))
		}
		return nil, fmt.Errorf("model: loading %s: unexpected tensors not used by the %s config: %s", dir, cfg.Family, strings.Join(extra, ", "))
	}
	return m, nil
}

// ---- random initialisation ----

// randomSource initialises like transformers' _init_weights: projection and
// embedding weights from N(0, initializer_range²), biases zero, norm weights one.
type randomSource struct {
	cfg Config
	opt Options
	gen *torch.Generator
}

func (r *randomSource) tensor(key string, shape []int64) (t *torch.Tensor, err error) {
	defer torch.Recover(&err)
	s := torch.NewScope()
	defer s.Close()
	var out *torch.Tensor
	switch {
	case strings.HasSuffix(key, "norm.weight"):
		out = torch.Ones(shape, r.opt.DType, r.opt.Device)
	case strings.HasSuffix(key, ".bias"):
		out = torch.Zeros(shape, r.opt.DType, r.opt.Device)
	default:
		// drawn on the CPU in float32 so a seed gives the same weights on any device and dtype
		out = torch.Randn(shape, torch.Float32, torch.CPU, r.gen).MulScalar(r.cfg.InitializerRange).To(r.opt.Device, r.opt.DType)
	}
	return s.Keep(out).Untrack(), nil
}

// New builds a randomly initialised model from cfg; the same seed gives the
// same weights.
func New(cfg Config, seed uint64, opt Options) (m *Model, err error) {
	defer torch.Recover(&err)
	gen := torch.NewGenerator(torch.CPU, seed)
	defer gen.Free()
	return newModel(cfg, &randomSource{cfg: cfg, opt: opt, gen: gen}, opt)
}

// ---- saving ----

// DefaultShardBytes is save_pretrained's default shard limit (5 GB).
const DefaultShardBytes = 5_000_000_000

// Save writes config.json and the weights (model.safetensors, or shards of
// at most maxShardBytes with an index; ≤ 0 means DefaultShardBytes) into
// dir, converted to dtype (pass m.DType() to keep the model's). Tensors are
// copied off the device one at a time. An adapter's view writes the adapter
// as a PEFT directory instead (Adapter.Save).
func (m *Model) Save(dir string, dtype torch.DType, maxShardBytes int64) error {
	if m.adapter != nil {
		return m.adapter.Save(dir, dtype)
	}
	if maxShardBytes <= 0 {
		maxShardBytes = DefaultShardBytes
	}
	name, err := ConfigDTypeName(dtype)
	if err != nil {
		return err
	}
	sdt, err := SafetensorsDType(dtype)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tensors := lazyTensors(m.Params(), sdt, dtype)
	if _, err := safetensors.WriteModelDir(dir, tensors, map[string]string{"format": "pt"}, maxShardBytes); err != nil {
		return err
	}
	cfgJSON, err := m.Config.JSON(name)
	if err != nil {
		return err
	}
	return atomicfile.WriteBytes(filepath.Join(dir, "config.json"), cfgJSON)
}

// ConfigDTypeName is how config.json spells a weight dtype (torch_dtype);
// only the dtypes Hugging Face checkpoints use are accepted.
func ConfigDTypeName(d torch.DType) (string, error) {
	switch d {
	case torch.Float32:
		return "float32", nil
	case torch.BFloat16:
		return "bfloat16", nil
	case torch.Float16:
		return "float16", nil
	}
	return "", fmt.Errorf("weights are saved as float32, bfloat16 or float16, not %v", d)
}

// lazyTensors describes params for a safetensors writer, each converted to
// dtype on the CPU only when the writer reaches it (one tensor in host
// memory at a time).
func lazyTensors(params []Param, sdt safetensors.DType, dtype torch.DType) []safetensors.Tensor {
	tensors := make([]safetensors.Tensor, 0, len(params))
	for _, p := range params {
		t := p.T
		tensors = append(tensors, safetensors.Tensor{
			Name: p.Name, DType: sdt, Shape: t.Shape(),
			Bytes: func() (b []byte, err error) {
				defer torch.Recover(&err)
				s := torch.NewScope()
				defer s.Close()
				return t.Detach().To(torch.CPU, dtype).Bytes(), nil
			},
		})
	}
	return tensors
}
