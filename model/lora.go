package model

// lora.go — low-rank adapters on a frozen base model (LoRA, Hu et al. 2021),
// several per base, in PEFT's layout.
//
// On a targeted projection W (out, in) an adapter adds a rank-r update:
//
//	y = x·Wᵀ + s·(x·Aᵀ)·Bᵀ,   A (r, in), B (out, r), s = α/r   (1)
//
// (s = α/√r with rsLoRA). A starts from PEFT's default draw (Kaiming-uniform
// with a = √5, i.e. U(−1/√in, 1/√in)), B from zero, so a fresh adapter
// leaves the base's outputs unchanged.
//
// Several adapters attach to one base and share its weights in memory. Each
// projection holds a loraSite: the (A, B) pair of every attached adapter
// that targets it, by the adapter's slot. Which adapter a row goes through
// is a route, passed down the forward like the KV cache (STYLE rule 5):
//
//   - one adapter for the whole batch (a view's forwards, the update): (1)
//     as written, two skinny matmuls;
//   - a mixed batch (generation for several agents at once): the attached
//     adapters' A are stacked to (Σr, in) and B to (out, Σr), and a per-row
//     gate (…, Σr) holds s at the row's adapter's r columns and 0 elsewhere:
//     y = x·Wᵀ + ((x·A_allᵀ) ⊙ gate)·B_allᵀ, which is (1) row by row and
//     never merges weights.
//
// An Adapter's Model is a view of the base: the same weights, its forwards
// routed through the adapter, its Params the adapter's tensors under PEFT's
// key names. So the trainer, the checkpoint code and the engine take a view
// where they take any model, and only the adapter trains.
//
// Departures from PEFT: lora_dropout must be 0 (dropout on the adapter's
// input would make the no-grad old log-probs differ from the training
// forward's, and the first mini-batch's ratio would no longer be 1); no
// DoRA, no bias training, no per-module rank or alpha patterns. Loading a
// PEFT directory that uses any of these is refused with the field's name.

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"troupe/torch"
)

// LoRATargets are the projections an adapter may target, by PEFT's module
// names, in module order.
var LoRATargets = []string{"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"}

// LoRAConfig is one adapter's shape.
type LoRAConfig struct {
	Rank    int      `yaml:"rank" json:"r"`                 // r
	Alpha   float64  `yaml:"alpha" json:"lora_alpha"`       // α; the update is scaled by α/r
	Targets []string `yaml:"targets" json:"target_modules"` // projections to adapt (LoRATargets)
	Dropout float64  `yaml:"dropout" json:"lora_dropout"`   // must be 0 (see the file header)
	RSLoRA  bool     `yaml:"rslora" json:"use_rslora"`      // scale by α/√r instead of α/r
	Seed    uint64   `yaml:"-" json:"-"`                    // draws A; set by the caller
}

// Validate checks the config; messages name the field and the fix.
func (c LoRAConfig) Validate() error {
	switch {
	case c.Rank < 1:
		return fmt.Errorf("lora.rank: must be >= 1, got %d", c.Rank)
	case !(c.Alpha > 0) || math.IsInf(c.Alpha, 0):
		return fmt.Errorf("lora.alpha: must be > 0 and finite, got %g", c.Alpha)
	case c.Dropout != 0:
		return fmt.Errorf("lora.dropout: only 0 is supported, got %g: dropout on the adapter's input would make the no-grad old log-probs differ from the training forward's", c.Dropout)
	case len(c.Targets) == 0:
		return fmt.Errorf("lora.targets: name at least one of %s", strings.Join(LoRATargets, ", "))
	}
	seen := map[string]bool{}
	for _, t := range c.Targets {
		if !slices.Contains(LoRATargets, t) {
			return fmt.Errorf("lora.targets: unknown projection %q; choose from %s", t, strings.Join(LoRATargets, ", "))
		}
		if seen[t] {
			return fmt.Errorf("lora.targets: %q is listed twice", t)
		}
		seen[t] = true
	}
	return nil
}

// Scale is s in (1).
func (c LoRAConfig) Scale() float64 {
	if c.RSLoRA {
		return c.Alpha / math.Sqrt(float64(c.Rank))
	}
	return c.Alpha / float64(c.Rank)
}

// Adapter is one set of low-rank updates attached to a base model.
type Adapter struct {
	Config LoRAConfig
	// BaseModel is written as base_model_name_or_path when saved (Save).
	BaseModel string
	base      *Model
	slot      int     // index in base.adapters and in every site's pairs
	params    []Param // PEFT key names: lora_A then lora_B per targeted projection, in module order
	view      *Model
}

// loraPair is one adapter's update of one projection.
type loraPair struct {
	a *torch.Tensor // (r, in)
	b *torch.Tensor // (out, r)
}

// loraSite is one projection's adapters, by slot: nil where the adapter
// does not target it (or was freed).
type loraSite struct {
	pairs  []*loraPair
	scales []float64

	// colMap caches the mixed route's (Σr, slots) column map for one
	// (slots, dtype, device): constant while the same adapters are
	// attached, so a mixed decode step copies nothing from the host. Freed
	// when an adapter attaches or detaches.
	colMap *torch.Tensor
	colKey colKey
}

type colKey struct {
	slots  int64
	dtype  torch.DType
	device torch.Device
}

// invalidate drops the cached column map.
func (s *loraSite) invalidate() {
	if s != nil && s.colMap != nil {
		s.colMap.Free()
		s.colMap = nil
	}
}

// route says which adapter the rows of a forward go through. The zero route
// is the base alone.
type route struct {
	slot   int           // adapter slot + 1 for every row; 0: none
	onehot *torch.Tensor // mixed batches: (rows…, slots) in the model dtype, 1 at each row's slot; nil otherwise
}

// site is a projection with its name, for walking the adapted projections.
type site struct {
	key    string // checkpoint key path without ".weight"
	target string // PEFT module name
	lin    *Linear
}

// projections lists the model's adaptable projections in module order.
func (m *Model) projections() []site {
	var out []site
	for i, b := range m.Layers {
		p := fmt.Sprintf("model.layers.%d.", i)
		for _, s := range []struct {
			name string
			lin  *Linear
		}{{"self_attn.q_proj", &b.Attn.Q}, {"self_attn.k_proj", &b.Attn.K}, {"self_attn.v_proj", &b.Attn.V}, {"self_attn.o_proj", &b.Attn.O},
			{"mlp.gate_proj", &b.MLP.Gate}, {"mlp.up_proj", &b.MLP.Up}, {"mlp.down_proj", &b.MLP.Down}} {
			out = append(out, site{key: p + s.name, target: s.name[strings.IndexByte(s.name, '.')+1:], lin: s.lin})
		}
	}
	return out
}

// PEFTKey is PEFT's name of a projection's lora_A or lora_B weight.
func PEFTKey(projection, which string) string {
	return "base_model.model." + projection + ".lora_" + which + ".weight"
}

// NewAdapter attaches a fresh adapter to m (A drawn from cfg.Seed, B zero)
// in m's dtype and device. m must be a base model, not an adapter's view.
func (m *Model) NewAdapter(cfg LoRAConfig) (*Adapter, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return m.attach(cfg, func(key string, shape []int64, isA bool) (t *torch.Tensor, err error) {
		defer torch.Recover(&err)
		if !isA {
			return torch.Zeros(shape, m.dtype, m.device).Untrack(), nil
		}
		s := torch.NewScope()
		defer s.Close()
		bound := 1 / math.Sqrt(float64(shape[1]))
		// drawn on the CPU in float32, so a seed gives the same adapter on any device and dtype
		g := generatorFor(cfg.Seed, key)
		defer g.Free()
		u := torch.Rand(shape, torch.Float32, torch.CPU, g)
		return s.Keep(u.MulScalar(2*bound).AddScalar(-bound).To(m.device, m.dtype)).Untrack(), nil
	})
}

// generatorFor is a generator per tensor, so adding a target does not
// change the draws of the others (the caller frees it).
func generatorFor(seed uint64, key string) *torch.Generator {
	h := uint64(14695981039346656037)
	for i := 0; i < len(key); i++ {
		h = (h ^ uint64(key[i])) * 1099511628211
	}
	return torch.NewGenerator(torch.CPU, seed^h)
}

// attach builds an adapter's tensors with build and wires them into m's
// projections under a new slot.
func (m *Model) attach(cfg LoRAConfig, build func(key string, shape []int64, isA bool) (*torch.Tensor, error)) (a *Adapter, err error) {
	if m.adapter != nil {
		return nil, fmt.Errorf("model: adapters attach to a base model, not to another adapter's view")
	}
	ad := &Adapter{Config: cfg, base: m, slot: len(m.adapters)}
	a = ad
	projs := m.projections()
	pairs := make([]*loraPair, len(projs))
	defer func() {
		if err != nil {
			ad.freeTensors()
		}
	}()
	r := int64(cfg.Rank)
	for i, p := range projs {
		if !slices.Contains(cfg.Targets, p.target) {
			continue
		}
		out, in := p.lin.W.Size(0), p.lin.W.Size(1)
		A, err := build(PEFTKey(p.key, "A"), []int64{r, in}, true)
		if err != nil {
			return nil, err
		}
		a.params = append(a.params, Param{PEFTKey(p.key, "A"), A})
		B, err := build(PEFTKey(p.key, "B"), []int64{out, r}, false)
		if err != nil {
			return nil, err
		}
		a.params = append(a.params, Param{PEFTKey(p.key, "B"), B})
		pairs[i] = &loraPair{a: A, b: B}
	}
	for i, p := range projs {
		if p.lin.lora == nil {
			p.lin.lora = &loraSite{}
		}
		site := p.lin.lora
		site.invalidate()
		for len(site.pairs) < a.slot {
			site.pairs, site.scales = append(site.pairs, nil), append(site.scales, 0)
		}
		site.pairs, site.scales = append(site.pairs, pairs[i]), append(site.scales, cfg.Scale())
	}
	m.adapters = append(m.adapters, a)
	m.version++ // routes change shape: engines capture their graphs again
	view := *m
	view.adapter, view.base, view.adapters = a, m, nil
	a.view = &view
	return a, nil
}

// Model is the base seen through this adapter: the base's weights, every
// forward routed through the adapter, Params the adapter's tensors.
func (a *Adapter) Model() *Model { return a.view }

// Base is the model the adapter is attached to.
func (a *Adapter) Base() *Model { return a.base }

// Params are the adapter's tensors under PEFT's key names.
func (a *Adapter) Params() []Param { return a.params }

// NumParams counts the adapter's elements.
func (a *Adapter) NumParams() int64 {
	var n int64
	for _, p := range a.params {
		n += p.T.Numel()
	}
	return n
}

// Free detaches the adapter from its base and releases its tensors.
// Idempotent.
func (a *Adapter) Free() {
	if a == nil || a.base == nil {
		return
	}
	for _, p := range a.base.projections() {
		if s := p.lin.lora; s != nil && a.slot < len(s.pairs) {
			s.pairs[a.slot] = nil
			s.invalidate()
		}
	}
	a.base.adapters[a.slot] = nil
	a.base.version++ // engines drop graphs that read the freed tensors
	a.freeTensors()
	a.base = nil
}

func (a *Adapter) freeTensors() {
	for _, p := range a.params {
		p.T.Free()
	}
}

// routeAll sends every row through one adapter (nil: the base alone).
func routeAll(a *Adapter) route {
	if a == nil {
		return route{}
	}
	return route{slot: a.slot + 1}
}

// ownRoute is how the model's forwards route by default: a view through
// its adapter, a base through no adapter.
func (m *Model) ownRoute() route { return routeAll(m.adapter) }

// root is the base of a view, or m itself.
func (m *Model) root() *Model {
	if m.base != nil {
		return m.base
	}
	return m
}

// routeRows routes row i through ads[i] (nil: the base alone); the one-hot
// has shape lead + (slots) with lead's product = len(ads). A nil ads is the
// model's own route, and rows that all share one adapter need no one-hot.
func (m *Model) routeRows(ads []*Adapter, lead ...int64) route {
	if ads == nil {
		return m.ownRoute()
	}
	for _, a := range ads {
		if a != nil && a.base != m.root() {
			panic(&torch.Error{Op: "lora route", Msg: "an adapter of another base model was passed"})
		}
	}
	if len(ads) == 0 || !slices.ContainsFunc(ads, func(a *Adapter) bool { return a != ads[0] }) {
		return routeAll(ads[0])
	}
	slots := int64(len(m.root().adapters))
	hot := make([]float32, int64(len(ads))*slots)
	for i, a := range ads {
		if a != nil {
			hot[int64(i)*slots+int64(a.slot)] = 1
		}
	}
	t := torch.FromFloat32(hot, append(slices.Clone(lead), slots)...).To(m.device, m.dtype)
	return route{onehot: t}
}

// touches reports whether any adapter of this projection applies to a row
// of rt (delta is nil otherwise).
func (s *loraSite) touches(rt route) bool {
	if s == nil {
		return false
	}
	if rt.onehot == nil {
		i := rt.slot - 1
		return i >= 0 && i < len(s.pairs) && s.pairs[i] != nil
	}
	for _, p := range s.pairs {
		if p != nil {
			return true
		}
	}
	return false
}

// delta is the adapters' update of x through this projection, or nil when
// no adapter applies to any row.
func (s *loraSite) delta(x *torch.Tensor, rt route) *torch.Tensor {
	if !s.touches(rt) {
		return nil
	}
	if rt.onehot == nil {
		i := rt.slot - 1
		p := s.pairs[i]
		return torch.Linear(torch.Linear(x, p.a, nil), p.b, nil).MulScalar(s.scales[i]) // (…,out)
	}
	var as, bs []*torch.Tensor
	for _, p := range s.pairs {
		if p != nil {
			as, bs = append(as, p.a), append(bs, p.b)
		}
	}
	gate := torch.Linear(rt.onehot, s.columns(rt.onehot), nil) // (rows…,Σr)
	xa := torch.Linear(x, torch.Cat(as, 0), nil).Mul(gate)     // (…,Σr)
	return torch.Linear(xa, torch.Cat(bs, 1), nil)             // (…,out)
}

// columns is the (Σr, slots) map from a row's one-hot slot to its gate:
// the adapter's scale at its r columns, 0 elsewhere; cached per site.
func (s *loraSite) columns(onehot *torch.Tensor) *torch.Tensor {
	key := colKey{onehot.Size(-1), onehot.DType(), onehot.Device()}
	if s.colMap != nil && s.colKey == key {
		return s.colMap
	}
	s.invalidate()
	var cols []float32
	for i, p := range s.pairs {
		if p == nil {
			continue
		}
		for range p.a.Size(0) {
			row := make([]float32, key.slots)
			row[i] = float32(s.scales[i])
			cols = append(cols, row...)
		}
	}
	sc := torch.NewScope()
	defer sc.Close()
	m := torch.FromFloat32(cols, int64(len(cols))/key.slots, key.slots).To(key.device, key.dtype)
	s.colMap, s.colKey = sc.Keep(m).Untrack(), key
	return s.colMap
}

// Merged returns a new model whose weights are the base's with the
// adapter's update folded in, W + s·B·A, in the base's dtype and device:
// what an export for tools without PEFT needs.
func (a *Adapter) Merged() (m *Model, err error) {
	defer torch.Recover(&err)
	if a.base == nil {
		return nil, fmt.Errorf("model: merging a freed adapter")
	}
	base := a.base
	src := mergedSource{a: a, byKey: map[string]*torch.Tensor{}}
	for _, p := range base.Params() {
		src.byKey[p.Name] = p.T
	}
	return newModel(base.Config, src, Options{DType: base.dtype, Device: base.device})
}

// mergedSource hands out copies of the base's weights, the adapted
// projections with the update added (computed in float32).
type mergedSource struct {
	a     *Adapter
	byKey map[string]*torch.Tensor
}

func (s mergedSource) tensor(key string, shape []int64) (t *torch.Tensor, err error) {
	defer torch.Recover(&err)
	w, ok := s.byKey[key]
	if !ok {
		return nil, fmt.Errorf("model: merge: the base has no tensor %s", key)
	}
	sc := torch.NewScope()
	defer sc.Close()
	var out *torch.Tensor
	if proj, found := strings.CutSuffix(key, ".weight"); found {
		var A, B *torch.Tensor
		for _, p := range s.a.params {
			switch p.Name {
			case PEFTKey(proj, "A"):
				A = p.T
			case PEFTKey(proj, "B"):
				B = p.T
			}
		}
		if A != nil {
			upd := B.Detach().ToDType(torch.Float32).Matmul(A.Detach().ToDType(torch.Float32)).MulScalar(s.a.Config.Scale())
			out = w.Detach().ToDType(torch.Float32).Add(upd).ToDType(w.DType())
		}
	}
	if out == nil { // not adapted: a plain copy
		out = w.Detach().Clone()
	}
	return sc.Keep(out).Untrack(), nil
}
