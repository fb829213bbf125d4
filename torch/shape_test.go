package torch

import "testing"

func TestViewsAndIndexing(t *testing.T) {
	noLeaks(t)
	x := []float64{0, 1, 2, 3, 4, 5} // (2,3)
	scoped(func() {
		tx := FromFloat64(x, 2, 3)
		closeTo(t, "reshape", tx.Reshape(3, -1).Float64s(), x, 0)
		if s := tx.View(6).Shape(); s[0] != 6 {
			t.Fatalf("view %v", s)
		}
		closeTo(t, "transpose", tx.Transpose(0, 1).Float64s(), []float64{0, 3, 1, 4, 2, 5}, 0)
		closeTo(t, "permute", tx.Permute(1, 0).Contiguous().Float64s(), []float64{0, 3, 1, 4, 2, 5}, 0)
		if tx.Transpose(0, 1).IsContiguous() || !tx.Transpose(0, 1).Contiguous().IsContiguous() {
			t.Fatal("contiguity")
		}
		closeTo(t, "narrow", tx.Narrow(1, 1, 2).Float64s(), []float64{1, 2, 4, 5}, 0)
		closeTo(t, "slice step", FromFloat64(x).Slice(0, 1, 6, 2).Float64s(), []float64{1, 3, 5}, 0)
		if s := tx.Unsqueeze(1).Shape(); len(s) != 3 || s[1] != 1 {
			t.Fatalf("unsqueeze %v", s)
		}
		if s := tx.Unsqueeze(0).Squeeze(0).Shape(); len(s) != 2 {
			t.Fatalf("squeeze %v", s)
		}
		closeTo(t, "expand", FromFloat64([]float64{7, 8}, 2, 1).Expand(2, 3).Float64s(), []float64{7, 7, 7, 8, 8, 8}, 0)
		closeTo(t, "cat", Cat([]*Tensor{tx, tx.Narrow(0, 0, 1)}, 0).Float64s(), append(append([]float64{}, x...), 0, 1, 2), 0)
		st := Stack([]*Tensor{tx, tx}, 1)
		if s := st.Shape(); s[0] != 2 || s[1] != 2 || s[2] != 3 {
			t.Fatalf("stack %v", s)
		}
		closeTo(t, "stack", st.Float64s()[:6], []float64{0, 1, 2, 0, 1, 2}, 0)
		closeTo(t, "index_select", tx.IndexSelect(1, FromInt64([]int64{2, 0})).Float64s(), []float64{2, 0, 5, 3}, 0)
		g := tx.Gather(1, FromInt64([]int64{1, 1, 0, 2}, 2, 2))
		closeTo(t, "gather", g.Float64s(), []float64{1, 1, 3, 5}, 0)
		z := Zeros([]int64{2, 3}, Float64, CPU)
		sc := z.Scatter(1, FromInt64([]int64{2, 0}, 2, 1), FromFloat64([]float64{9, 8}, 2, 1))
		closeTo(t, "scatter", sc.Float64s(), []float64{0, 0, 9, 8, 0, 0}, 0)
		sa := tx.ScatterAdd(1, FromInt64([]int64{0, 0}, 1, 2), FromFloat64([]float64{10, 20}, 1, 2))
		closeTo(t, "scatter_add", sa.Float64s(), []float64{30, 1, 2, 3, 4, 5}, 0)
		ip := tx.IndexPut([]*Tensor{FromInt64([]int64{1, 0}), FromInt64([]int64{2, 1})}, FromFloat64([]float64{-1, -2}), false)
		closeTo(t, "index_put", ip.Float64s(), []float64{0, -2, 2, 3, 4, -1}, 0)
		acc := tx.IndexPut([]*Tensor{FromInt64([]int64{0, 0})}, FromFloat64([]float64{1, 1, 1}, 1, 3), true)
		closeTo(t, "index_put accumulate", acc.Float64s(), []float64{2, 3, 4, 3, 4, 5}, 0)
		mask := FromBool([]bool{true, false, true})
		closeTo(t, "masked_fill", tx.MaskedFill(mask, -5).Float64s(), []float64{-5, 1, -5, -5, 4, -5}, 0)
		closeTo(t, "masked_select", tx.MaskedSelect(tx.GtScalar(2)).Float64s(), []float64{3, 4, 5}, 0)
		closeTo(t, "where", Where(tx.GtScalar(2), tx, tx.Neg()).Float64s(), []float64{0, -1, -2, 3, 4, 5}, 0)
		sq := Ones([]int64{3, 3}, Float64, CPU)
		closeTo(t, "triu", sq.Triu(1).Float64s(), []float64{0, 1, 1, 0, 0, 1, 0, 0, 0}, 0)
		closeTo(t, "tril", sq.Tril(0).Float64s(), []float64{1, 0, 0, 1, 1, 0, 1, 1, 1}, 0)
		closeTo(t, "repeat_interleave", tx.RepeatInterleave(2, 0).Float64s(), []float64{0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5}, 0)
		closeTo(t, "flip", tx.Flip(1).Float64s(), []float64{2, 1, 0, 5, 4, 3}, 0)
		// in-place copy into a view writes through to the base tensor
		base := Zeros([]int64{2, 4}, Float64, CPU)
		base.Narrow(1, 1, 2).CopyFrom(FromFloat64([]float64{1, 2, 3, 4}, 2, 2))
		closeTo(t, "copy into view", base.Float64s(), []float64{0, 1, 2, 0, 0, 3, 4, 0}, 0)
		base.Narrow(0, 1, 1).Fill(7)
		closeTo(t, "fill view", base.Float64s()[4:], []float64{7, 7, 7, 7}, 0)
		r := tx.Ref()
		r.Free()
		closeTo(t, "ref is a second handle", tx.Float64s(), x, 0)
	})
}
