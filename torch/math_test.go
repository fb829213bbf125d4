package torch

import (
	"math"
	"sort"
	"testing"
)

func TestUnaryOps(t *testing.T) {
	noLeaks(t)
	x := randData(1, 24)
	pos := make([]float64, len(x))
	for i, v := range x {
		pos[i] = math.Abs(v) + 0.1
	}
	sigmoid := func(v float64) float64 { return 1 / (1 + math.Exp(-v)) }
	cases := []struct {
		name string
		op   func(*Tensor) *Tensor
		ref  func(float64) float64
		in   []float64
	}{
		{"neg", (*Tensor).Neg, func(v float64) float64 { return -v }, x},
		{"abs", (*Tensor).Abs, math.Abs, x},
		{"exp", (*Tensor).Exp, math.Exp, x},
		{"log", (*Tensor).Log, math.Log, pos},
		{"sqrt", (*Tensor).Sqrt, math.Sqrt, pos},
		{"rsqrt", (*Tensor).Rsqrt, func(v float64) float64 { return 1 / math.Sqrt(v) }, pos},
		{"sin", (*Tensor).Sin, math.Sin, x},
		{"cos", (*Tensor).Cos, math.Cos, x},
		{"tanh", (*Tensor).Tanh, math.Tanh, x},
		{"sigmoid", (*Tensor).Sigmoid, sigmoid, x},
		{"silu", (*Tensor).Silu, func(v float64) float64 { return v * sigmoid(v) }, x},
		{"relu", (*Tensor).Relu, func(v float64) float64 { return math.Max(v, 0) }, x},
		{"log1p", (*Tensor).Log1p, math.Log1p, pos},
		{"expm1", (*Tensor).Expm1, math.Expm1, x},
		{"sign", (*Tensor).Sign, func(v float64) float64 {
			if v > 0 {
				return 1
			} else if v < 0 {
				return -1
			}
			return 0
		}, x},
		{"floor", func(t *Tensor) *Tensor { return t.MulScalar(3).Floor() }, func(v float64) float64 { return math.Floor(3 * v) }, x},
		{"reciprocal", (*Tensor).Reciprocal, func(v float64) float64 { return 1 / v }, pos},
		{"square", (*Tensor).Square, func(v float64) float64 { return v * v }, x},
		{"gelu_tanh", (*Tensor).GeluTanh, func(v float64) float64 {
			return 0.5 * v * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(v+0.044715*v*v*v)))
		}, x},
		{"clamp", func(t *Tensor) *Tensor { return t.Clamp(-0.3, 0.4) }, func(v float64) float64 { return math.Min(math.Max(v, -0.3), 0.4) }, x},
		{"clamp_min", func(t *Tensor) *Tensor { return t.ClampMin(0.1) }, func(v float64) float64 { return math.Max(v, 0.1) }, x},
		{"clamp_max", func(t *Tensor) *Tensor { return t.ClampMax(0.1) }, func(v float64) float64 { return math.Min(v, 0.1) }, x},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := make([]float64, len(c.in))
			for i, v := range c.in {
				want[i] = c.ref(v)
			}
			scoped(func() {
				closeTo(t, c.name+" f64", c.op(FromFloat64(c.in, 4, 6)).Float64s(), want, 1e-12)
				closeTo(t, c.name+" f32", c.op(FromFloat64(c.in, 4, 6).ToDType(Float32)).Float64s(), want, 1e-5)
			})
		})
	}
}

func TestBinaryOpsBroadcast(t *testing.T) {
	noLeaks(t)
	a := randData(2, 6) // (2,3)
	b := randData(3, 3) // (3), broadcast over rows
	bp := make([]float64, 3)
	for i := range b {
		bp[i] = math.Abs(b[i]) + 0.5
	}
	ap := make([]float64, 6)
	for i := range a {
		ap[i] = math.Abs(a[i]) + 0.5
	}
	b2 := func(v []float64, i int) float64 { return v[i%3] }
	bool01 := func(c bool) float64 {
		if c {
			return 1
		}
		return 0
	}
	cases := []struct {
		name   string
		op     func(x, y *Tensor) *Tensor
		ref    func(x, y float64) float64
		lh, rh []float64
	}{
		{"add", (*Tensor).Add, func(x, y float64) float64 { return x + y }, a, b},
		{"sub", (*Tensor).Sub, func(x, y float64) float64 { return x - y }, a, b},
		{"mul", (*Tensor).Mul, func(x, y float64) float64 { return x * y }, a, b},
		{"div", (*Tensor).Div, func(x, y float64) float64 { return x / y }, a, bp},
		{"pow", (*Tensor).Pow, math.Pow, ap, b},
		{"minimum", (*Tensor).Minimum, math.Min, a, b},
		{"maximum", (*Tensor).Maximum, math.Max, a, b},
		{"remainder", (*Tensor).Remainder, func(x, y float64) float64 { return x - y*math.Floor(x/y) }, a, bp},
		{"eq", (*Tensor).Eq, func(x, y float64) float64 { return bool01(x == y) }, a, b},
		{"ne", (*Tensor).Ne, func(x, y float64) float64 { return bool01(x != y) }, a, b},
		{"lt", (*Tensor).Lt, func(x, y float64) float64 { return bool01(x < y) }, a, b},
		{"le", (*Tensor).Le, func(x, y float64) float64 { return bool01(x <= y) }, a, b},
		{"gt", (*Tensor).Gt, func(x, y float64) float64 { return bool01(x > y) }, a, b},
		{"ge", (*Tensor).Ge, func(x, y float64) float64 { return bool01(x >= y) }, a, b},
		{"logical_and", func(x, y *Tensor) *Tensor { return x.GtScalar(0).LogicalAnd(y.GtScalar(0)) },
			func(x, y float64) float64 { return bool01(x > 0 && y > 0) }, a, b},
		{"logical_or", func(x, y *Tensor) *Tensor { return x.GtScalar(0).LogicalOr(y.GtScalar(0)) },
			func(x, y float64) float64 { return bool01(x > 0 || y > 0) }, a, b},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := make([]float64, 6)
			for i := range want {
				want[i] = c.ref(c.lh[i], b2(c.rh, i))
			}
			scoped(func() {
				got := c.op(FromFloat64(c.lh, 2, 3), FromFloat64(c.rh, 3))
				if s := got.Shape(); s[0] != 2 || s[1] != 3 {
					t.Fatalf("broadcast shape %v", s)
				}
				closeTo(t, c.name, got.Float64s(), want, 1e-12)
			})
		})
	}
	t.Run("scalar", func(t *testing.T) {
		scoped(func() {
			x := FromFloat64(a, 2, 3)
			for name, pair := range map[string]struct {
				got *Tensor
				ref func(float64) float64
			}{
				"add":  {x.AddScalar(1.5), func(v float64) float64 { return v + 1.5 }},
				"sub":  {x.SubScalar(1.5), func(v float64) float64 { return v - 1.5 }},
				"mul":  {x.MulScalar(-2), func(v float64) float64 { return -2 * v }},
				"div":  {x.DivScalar(4), func(v float64) float64 { return v / 4 }},
				"pow":  {x.PowScalar(2), func(v float64) float64 { return v * v }},
				"rsub": {x.RSubScalar(1), func(v float64) float64 { return 1 - v }},
				"gt":   {x.GtScalar(0), func(v float64) float64 { return bool01(v > 0) }},
				"le":   {x.LeScalar(0), func(v float64) float64 { return bool01(v <= 0) }},
				"eq":   {x.EqScalar(a[2]), func(v float64) float64 { return bool01(v == a[2]) }},
			} {
				want := make([]float64, 6)
				for i, v := range a {
					want[i] = pair.ref(v)
				}
				closeTo(t, name, pair.got.Float64s(), want, 1e-12)
			}
		})
	})
	t.Run("inplace", func(t *testing.T) {
		scoped(func() {
			x := FromFloat64(a, 2, 3)
			y := FromFloat64(b, 3)
			x.AddInPlace(y)
			x.MulInPlace(y)
			x.SubInPlace(y)
			x.DivInPlace(FromFloat64(bp, 3))
			want := make([]float64, 6)
			for i := range want {
				want[i] = ((a[i]+b[i%3])*b[i%3] - b[i%3]) / bp[i%3]
			}
			closeTo(t, "in place", x.Float64s(), want, 1e-12)
		})
	})
}

func TestReductions(t *testing.T) {
	noLeaks(t)
	x := randData(4, 12) // (3,4)
	row := func(r int) []float64 { return x[4*r : 4*r+4] }
	col := func(c int) []float64 { return []float64{x[c], x[4+c], x[8+c]} }
	sum := func(v []float64) float64 {
		s := 0.0
		for _, e := range v {
			s += e
		}
		return s
	}
	mean := func(v []float64) float64 { return sum(v) / float64(len(v)) }
	variance := func(v []float64, unbiased bool) float64 {
		m, s := mean(v), 0.0
		for _, e := range v {
			s += (e - m) * (e - m)
		}
		if unbiased {
			return s / float64(len(v)-1)
		}
		return s / float64(len(v))
	}
	lse := func(v []float64) float64 {
		m := math.Inf(-1)
		for _, e := range v {
			m = math.Max(m, e)
		}
		s := 0.0
		for _, e := range v {
			s += math.Exp(e - m)
		}
		return m + math.Log(s)
	}
	maxOf := func(v []float64) (float64, int) {
		best, at := math.Inf(-1), -1
		for i, e := range v {
			if e > best {
				best, at = e, i
			}
		}
		return best, at
	}
	scoped(func() {
		tx := FromFloat64(x, 3, 4)
		closeTo(t, "sum", tx.Sum().Float64s(), []float64{sum(x)}, 1e-12)
		closeTo(t, "mean", tx.Mean().Float64s(), []float64{mean(x)}, 1e-12)
		closeTo(t, "sum dim 1", tx.SumDim(1, false).Float64s(), []float64{sum(row(0)), sum(row(1)), sum(row(2))}, 1e-12)
		closeTo(t, "mean dim 0", tx.MeanDim(0, false).Float64s(), []float64{mean(col(0)), mean(col(1)), mean(col(2)), mean(col(3))}, 1e-12)
		if s := tx.SumDim(1, true).Shape(); len(s) != 2 || s[1] != 1 {
			t.Fatalf("keepdim shape %v", s)
		}
		closeTo(t, "var unbiased", tx.Var(true).Float64s(), []float64{variance(x, true)}, 1e-12)
		closeTo(t, "std population", tx.Std(false).Float64s(), []float64{math.Sqrt(variance(x, false))}, 1e-12)
		closeTo(t, "var dim", tx.VarDim(1, false, true).Float64s(), []float64{variance(row(0), true), variance(row(1), true), variance(row(2), true)}, 1e-12)
		closeTo(t, "std dim", tx.StdDim(0, false, false).Float64s()[:1], []float64{math.Sqrt(variance(col(0), false))}, 1e-12)
		closeTo(t, "logsumexp", tx.LogSumExp(1, false).Float64s(), []float64{lse(row(0)), lse(row(1)), lse(row(2))}, 1e-12)
		m0, i0 := maxOf(row(0))
		vals, idx := tx.MaxDim(1, false)
		closeTo(t, "max dim", vals.Float64s()[:1], []float64{m0}, 0)
		if idx.Int64s()[0] != int64(i0) || tx.Argmax(1, false).Int64s()[0] != int64(i0) {
			t.Fatalf("argmax row 0: %v, want %d", idx.Int64s(), i0)
		}
		neg := make([]float64, 4)
		for i, v := range row(1) {
			neg[i] = -v
		}
		mn, imn := maxOf(neg)
		mv, mi := tx.MinDim(1, true)
		if mv.Float64s()[1] != -mn || mi.Int64s()[1] != int64(imn) {
			t.Fatalf("min dim row 1: %v %v", mv.Float64s(), mi.Int64s())
		}
		gmax, _ := maxOf(x)
		closeTo(t, "max", tx.Max().Float64s(), []float64{gmax}, 0)
		closeTo(t, "amax dim", tx.AmaxDim(1, false).Float64s()[:1], []float64{m0}, 0)
		closeTo(t, "amin dim", tx.AminDim(1, false).Float64s()[1:2], []float64{-mn}, 0)
		norm := 0.0
		prod := 1.0
		for _, v := range x {
			norm += v * v
			prod *= v
		}
		closeTo(t, "norm", tx.Norm().Float64s(), []float64{math.Sqrt(norm)}, 1e-12)
		closeTo(t, "prod", tx.Prod().Float64s(), []float64{prod}, 1e-12)
		if !tx.GtScalar(-2).All().Bools()[0] || tx.GtScalar(2).Any().Bools()[0] {
			t.Fatal("all/any")
		}
		cs := tx.Cumsum(1).Float64s()
		closeTo(t, "cumsum", cs[:4], []float64{x[0], x[0] + x[1], x[0] + x[1] + x[2], sum(row(0))}, 1e-12)
	})
}

func TestSortTopK(t *testing.T) {
	noLeaks(t)
	x := randData(5, 8)
	order := make([]int, 8)
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(i, j int) bool { return x[order[i]] > x[order[j]] })
	scoped(func() {
		tx := FromFloat64(x)
		v, idx := tx.Sort(0, true)
		got := idx.Int64s()
		for i, o := range order {
			if got[i] != int64(o) || v.Float64s()[i] != x[o] {
				t.Fatalf("sort desc position %d: index %d, want %d", i, got[i], o)
			}
		}
		tv, ti := tx.TopK(3, 0, true)
		for i := 0; i < 3; i++ {
			if ti.Int64s()[i] != int64(order[i]) || tv.Float64s()[i] != x[order[i]] {
				t.Fatalf("topk %d", i)
			}
		}
		_, lo := tx.TopK(1, 0, false)
		if lo.Int64s()[0] != int64(order[7]) {
			t.Fatal("topk smallest")
		}
	})
}

func TestMatmulBmm(t *testing.T) {
	noLeaks(t)
	a := randData(6, 2*3*4) // (2,3,4)
	b := randData(7, 2*4*5) // (2,4,5)
	want := make([]float64, 2*3*5)
	for n := 0; n < 2; n++ {
		for i := 0; i < 3; i++ {
			for j := 0; j < 5; j++ {
				s := 0.0
				for k := 0; k < 4; k++ {
					s += a[n*12+i*4+k] * b[n*20+k*5+j]
				}
				want[n*15+i*5+j] = s
			}
		}
	}
	scoped(func() {
		ta, tb := FromFloat64(a, 2, 3, 4), FromFloat64(b, 2, 4, 5)
		closeTo(t, "bmm", ta.Bmm(tb).Float64s(), want, 1e-12)
		closeTo(t, "matmul", ta.Matmul(tb).Float64s(), want, 1e-12)
		closeTo(t, "matmul f32", ta.ToDType(Float32).Matmul(tb.ToDType(Float32)).Float64s(), want, 1e-5)
		// broadcast: (2,3,4) x (4,5) uses the first batch's b for both
		b0 := FromFloat64(b[:20], 4, 5)
		got := ta.Matmul(b0).Float64s()
		s := 0.0
		for k := 0; k < 4; k++ {
			s += a[12+k] * b[k*5]
		}
		closeTo(t, "broadcast matmul", got[15:16], []float64{s}, 1e-12)
	})
}
