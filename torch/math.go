package torch

// #include "tshim.h"
import "C"

import "math"

func (t *Tensor) unary(op C.int, name string) *Tensor {
	var out C.ts_tensor
	check(name, C.ts_unary(op, t.handle(), &out))
	return wrap(out)
}

func (t *Tensor) binary(op C.int, name string, o *Tensor) *Tensor {
	var out C.ts_tensor
	check(name, C.ts_binary(op, t.handle(), o.handle(), &out))
	return wrap(out)
}

// scalarArg keeps integer tensors integer: an integral value against an
// integer tensor travels as an integer scalar.
func (t *Tensor) scalarArg(s float64) (C.double, C.int) {
	isInt := !t.DType().IsFloat() && s == math.Trunc(s) && math.Abs(s) < 1<<62
	return C.double(s), cbool(isInt)
}

func (t *Tensor) binaryScalar(op C.int, name string, s float64) *Tensor {
	v, isInt := t.scalarArg(s)
	var out C.ts_tensor
	check(name, C.ts_binary_scalar(op, t.handle(), v, isInt, &out))
	return wrap(out)
}

// Elementwise, with broadcasting.
func (t *Tensor) Add(o *Tensor) *Tensor        { return t.binary(C.TS_ADD, "add", o) }
func (t *Tensor) Sub(o *Tensor) *Tensor        { return t.binary(C.TS_SUB, "sub", o) }
func (t *Tensor) Mul(o *Tensor) *Tensor        { return t.binary(C.TS_MUL, "mul", o) }
func (t *Tensor) Div(o *Tensor) *Tensor        { return t.binary(C.TS_DIV, "div", o) }
func (t *Tensor) Pow(o *Tensor) *Tensor        { return t.binary(C.TS_POW, "pow", o) }
func (t *Tensor) Minimum(o *Tensor) *Tensor    { return t.binary(C.TS_MINIMUM, "minimum", o) }
func (t *Tensor) Maximum(o *Tensor) *Tensor    { return t.binary(C.TS_MAXIMUM, "maximum", o) }
func (t *Tensor) Remainder(o *Tensor) *Tensor  { return t.binary(C.TS_REM, "remainder", o) }
func (t *Tensor) Eq(o *Tensor) *Tensor         { return t.binary(C.TS_EQ, "eq", o) }
func (t *Tensor) Ne(o *Tensor) *Tensor         { return t.binary(C.TS_NE, "ne", o) }
func (t *Tensor) Lt(o *Tensor) *Tensor         { return t.binary(C.TS_LT, "lt", o) }
func (t *Tensor) Le(o *Tensor) *Tensor         { return t.binary(C.TS_LE, "le", o) }
func (t *Tensor) Gt(o *Tensor) *Tensor         { return t.binary(C.TS_GT, "gt", o) }
func (t *Tensor) Ge(o *Tensor) *Tensor         { return t.binary(C.TS_GE, "ge", o) }
func (t *Tensor) LogicalAnd(o *Tensor) *Tensor { return t.binary(C.TS_LOGICAL_AND, "logical_and", o) }
func (t *Tensor) LogicalOr(o *Tensor) *Tensor  { return t.binary(C.TS_LOGICAL_OR, "logical_or", o) }

// Elementwise against a scalar.
func (t *Tensor) AddScalar(s float64) *Tensor { return t.binaryScalar(C.TS_ADD, "add", s) }
func (t *Tensor) SubScalar(s float64) *Tensor { return t.binaryScalar(C.TS_SUB, "sub", s) }
func (t *Tensor) MulScalar(s float64) *Tensor { return t.binaryScalar(C.TS_MUL, "mul", s) }
func (t *Tensor) DivScalar(s float64) *Tensor { return t.binaryScalar(C.TS_DIV, "div", s) }
func (t *Tensor) PowScalar(s float64) *Tensor { return t.binaryScalar(C.TS_POW, "pow", s) }
func (t *Tensor) EqScalar(s float64) *Tensor  { return t.binaryScalar(C.TS_EQ, "eq", s) }
func (t *Tensor) NeScalar(s float64) *Tensor  { return t.binaryScalar(C.TS_NE, "ne", s) }
func (t *Tensor) LtScalar(s float64) *Tensor  { return t.binaryScalar(C.TS_LT, "lt", s) }
func (t *Tensor) LeScalar(s float64) *Tensor  { return t.binaryScalar(C.TS_LE, "le", s) }
func (t *Tensor) GtScalar(s float64) *Tensor  { return t.binaryScalar(C.TS_GT, "gt", s) }
func (t *Tensor) GeScalar(s float64) *Tensor  { return t.binaryScalar(C.TS_GE, "ge", s) }

// RSubScalar is s − t.
func (t *Tensor) RSubScalar(s float64) *Tensor {
	v, isInt := t.scalarArg(s)
	var out C.ts_tensor
	check("rsub", C.ts_rsub_scalar(t.handle(), v, isInt, &out))
	return wrap(out)
}

func (t *Tensor) inplace(op C.int, name string, o *Tensor) {
	check(name, C.ts_inplace_binary(op, t.handle(), o.handle()))
}

// In place: t += o, t −= o, t *= o, t /= o (t must not need grad history).
func (t *Tensor) AddInPlace(o *Tensor) { t.inplace(C.TS_ADD, "add_", o) }
func (t *Tensor) SubInPlace(o *Tensor) { t.inplace(C.TS_SUB, "sub_", o) }
func (t *Tensor) MulInPlace(o *Tensor) { t.inplace(C.TS_MUL, "mul_", o) }
func (t *Tensor) DivInPlace(o *Tensor) { t.inplace(C.TS_DIV, "div_", o) }

// Elementwise unary functions.
func (t *Tensor) Neg() *Tensor        { return t.unary(C.TS_NEG, "neg") }
func (t *Tensor) Abs() *Tensor        { return t.unary(C.TS_ABS, "abs") }
func (t *Tensor) Exp() *Tensor        { return t.unary(C.TS_EXP, "exp") }
func (t *Tensor) Log() *Tensor        { return t.unary(C.TS_LOG, "log") }
func (t *Tensor) Sqrt() *Tensor       { return t.unary(C.TS_SQRT, "sqrt") }
func (t *Tensor) Rsqrt() *Tensor      { return t.unary(C.TS_RSQRT, "rsqrt") }
func (t *Tensor) Sin() *Tensor        { return t.unary(C.TS_SIN, "sin") }
func (t *Tensor) Cos() *Tensor        { return t.unary(C.TS_COS, "cos") }
func (t *Tensor) Tanh() *Tensor       { return t.unary(C.TS_TANH, "tanh") }
func (t *Tensor) Sigmoid() *Tensor    { return t.unary(C.TS_SIGMOID, "sigmoid") }
func (t *Tensor) Silu() *Tensor       { return t.unary(C.TS_SILU, "silu") }
func (t *Tensor) Relu() *Tensor       { return t.unary(C.TS_RELU, "relu") }
func (t *Tensor) Log1p() *Tensor      { return t.unary(C.TS_LOG1P, "log1p") }
func (t *Tensor) Expm1() *Tensor      { return t.unary(C.TS_EXPM1, "expm1") }
func (t *Tensor) LogicalNot() *Tensor { return t.unary(C.TS_LOGICAL_NOT, "logical_not") }
func (t *Tensor) IsFinite() *Tensor   { return t.unary(C.TS_ISFINITE, "isfinite") }
func (t *Tensor) IsNaN() *Tensor      { return t.unary(C.TS_ISNAN, "isnan") }
func (t *Tensor) Sign() *Tensor       { return t.unary(C.TS_SIGN, "sign") }
func (t *Tensor) Floor() *Tensor      { return t.unary(C.TS_FLOOR, "floor") }
func (t *Tensor) Reciprocal() *Tensor { return t.unary(C.TS_RECIPROCAL, "reciprocal") }
func (t *Tensor) Square() *Tensor     { return t.unary(C.TS_SQUARE, "square") }
func (t *Tensor) GeluTanh() *Tensor   { return t.unary(C.TS_GELU_TANH, "gelu") }

func (t *Tensor) clamp(lo, hi float64, hasLo, hasHi bool) *Tensor {
	var out C.ts_tensor
	check("clamp", C.ts_clamp(t.handle(), C.double(lo), C.double(hi), cbool(hasLo), cbool(hasHi), &out))
	return wrap(out)
}

// Clamp limits every element to [lo, hi].
func (t *Tensor) Clamp(lo, hi float64) *Tensor { return t.clamp(lo, hi, true, true) }

// ClampMin limits every element to ≥ lo.
func (t *Tensor) ClampMin(lo float64) *Tensor { return t.clamp(lo, 0, true, false) }

// ClampMax limits every element to ≤ hi.
func (t *Tensor) ClampMax(hi float64) *Tensor { return t.clamp(0, hi, false, true) }

// ---- reductions ----

func (t *Tensor) reduce(op C.int, name string, dims []int64, keepdim, unbiased bool) *Tensor {
	d, nd := shapeArg(dims)
	var out C.ts_tensor
	check(name, C.ts_reduce(op, t.handle(), d, nd, cbool(keepdim), cbool(unbiased), &out))
	return wrap(out)
}

// Sum over all elements; SumDim over one dimension.
func (t *Tensor) Sum() *Tensor { return t.reduce(C.TS_SUM, "sum", nil, false, false) }
func (t *Tensor) SumDim(dim int64, keepdim bool) *Tensor {
	return t.reduce(C.TS_SUM, "sum", []int64{dim}, keepdim, false)
}

// Mean over all elements; MeanDim over one dimension.
func (t *Tensor) Mean() *Tensor { return t.reduce(C.TS_MEAN, "mean", nil, false, false) }
func (t *Tensor) MeanDim(dim int64, keepdim bool) *Tensor {
	return t.reduce(C.TS_MEAN, "mean", []int64{dim}, keepdim, false)
}

// Max / Min over all elements.
func (t *Tensor) Max() *Tensor { return t.reduce(C.TS_AMAX, "amax", nil, false, false) }
func (t *Tensor) Min() *Tensor { return t.reduce(C.TS_AMIN, "amin", nil, false, false) }

// AmaxDim / AminDim: the max / min values along dim (no indices).
func (t *Tensor) AmaxDim(dim int64, keepdim bool) *Tensor {
	return t.reduce(C.TS_AMAX, "amax", []int64{dim}, keepdim, false)
}
func (t *Tensor) AminDim(dim int64, keepdim bool) *Tensor {
	return t.reduce(C.TS_AMIN, "amin", []int64{dim}, keepdim, false)
}

// Prod multiplies all elements.
func (t *Tensor) Prod() *Tensor { return t.reduce(C.TS_PROD, "prod", nil, false, false) }

// All / Any over all elements (bool result).
func (t *Tensor) All() *Tensor { return t.reduce(C.TS_ALL, "all", nil, false, false) }
func (t *Tensor) Any() *Tensor { return t.reduce(C.TS_ANY, "any", nil, false, false) }

// LogSumExp along dim, computed stably.
func (t *Tensor) LogSumExp(dim int64, keepdim bool) *Tensor {
	return t.reduce(C.TS_LOGSUMEXP, "logsumexp", []int64{dim}, keepdim, false)
}

// Var / Std over all elements; unbiased divides by N−1.
func (t *Tensor) Var(unbiased bool) *Tensor { return t.reduce(C.TS_VAR, "var", nil, false, unbiased) }
func (t *Tensor) Std(unbiased bool) *Tensor { return t.reduce(C.TS_STD, "std", nil, false, unbiased) }

// VarDim / StdDim along one dimension.
func (t *Tensor) VarDim(dim int64, keepdim, unbiased bool) *Tensor {
	return t.reduce(C.TS_VAR, "var", []int64{dim}, keepdim, unbiased)
}
func (t *Tensor) StdDim(dim int64, keepdim, unbiased bool) *Tensor {
	return t.reduce(C.TS_STD, "std", []int64{dim}, keepdim, unbiased)
}

// Norm is the 2-norm of all elements.
func (t *Tensor) Norm() *Tensor { return t.reduce(C.TS_NORM, "norm", nil, false, false) }

// MaxDim returns the max values along dim and their indices.
func (t *Tensor) MaxDim(dim int64, keepdim bool) (values, indices *Tensor) {
	var v, i C.ts_tensor
	check("max", C.ts_max_dim(t.handle(), C.int64_t(dim), cbool(keepdim), &v, &i))
	return wrap(v), wrap(i)
}

// MinDim returns the min values along dim and their indices.
func (t *Tensor) MinDim(dim int64, keepdim bool) (values, indices *Tensor) {
	var v, i C.ts_tensor
	check("min", C.ts_min_dim(t.handle(), C.int64_t(dim), cbool(keepdim), &v, &i))
	return wrap(v), wrap(i)
}

// Argmax is the index of the max along dim (the first on ties).
func (t *Tensor) Argmax(dim int64, keepdim bool) *Tensor {
	var out C.ts_tensor
	check("argmax", C.ts_argmax(t.handle(), C.int64_t(dim), cbool(keepdim), &out))
	return wrap(out)
}

// Cumsum is the running sum along dim.
func (t *Tensor) Cumsum(dim int64) *Tensor {
	var out C.ts_tensor
	check("cumsum", C.ts_cumsum(t.handle(), C.int64_t(dim), &out))
	return wrap(out)
}

// Sort orders along dim and returns the values and their original indices.
func (t *Tensor) Sort(dim int64, descending bool) (values, indices *Tensor) {
	var v, i C.ts_tensor
	check("sort", C.ts_sort(t.handle(), C.int64_t(dim), cbool(descending), &v, &i))
	return wrap(v), wrap(i)
}

// TopK returns the k largest (or smallest) values along dim, sorted, and their indices.
func (t *Tensor) TopK(k, dim int64, largest bool) (values, indices *Tensor) {
	var v, i C.ts_tensor
	check("topk", C.ts_topk(t.handle(), C.int64_t(k), C.int64_t(dim), cbool(largest), &v, &i))
	return wrap(v), wrap(i)
}

// Matmul is the matrix product with numpy broadcasting rules.
func (t *Tensor) Matmul(o *Tensor) *Tensor {
	var out C.ts_tensor
	check("matmul", C.ts_matmul(t.handle(), o.handle(), &out))
	return wrap(out)
}

// Bmm is the batched matrix product of (B,N,K) and (B,K,M).
func (t *Tensor) Bmm(o *Tensor) *Tensor {
	var out C.ts_tensor
	check("bmm", C.ts_bmm(t.handle(), o.handle(), &out))
	return wrap(out)
}
