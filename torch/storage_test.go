package torch

import (
	"reflect"
	"testing"
)

// Freeing a fused weight's storage frees its views' memory too; allocating
// it again and writing through the views fills the whole tensor.
func TestResizeStorageSharedByViews(t *testing.T) {
	s := NewScope()
	defer s.Close()
	whole := Arange(0, 12, 1, Float32, CPU).Reshape(4, 3) // (4,3)
	top, bottom := whole.Narrow(0, 0, 1).Detach(), whole.Narrow(0, 1, 3).Detach()
	n, id := whole.StorageInfo()
	if _, id2 := bottom.StorageInfo(); n != 48 || id2 != id {
		t.Fatalf("storage of the whole: %d bytes; a view shares it: %v", n, id2 == id)
	}
	whole.ResizeStorage(0)
	if m, _ := top.StorageInfo(); m != 0 {
		t.Fatalf("after freeing, a view's storage has %d bytes", m)
	}
	whole.ResizeStorage(n)
	if m, _ := bottom.StorageInfo(); m != n {
		t.Fatalf("after re-allocating, a view's storage has %d bytes, want %d", m, n)
	}
	top.CopyFrom(FromFloat32([]float32{9, 8, 7}, 1, 3))
	bottom.CopyFrom(Full([]int64{3, 3}, 1, Float32, CPU))
	want := []float32{9, 8, 7, 1, 1, 1, 1, 1, 1, 1, 1, 1}
	if got := whole.Float32s(); !reflect.DeepEqual(got, want) {
		t.Fatalf("after re-allocating and writing the views: %v, want %v", got, want)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("a storage too small for the tensor was accepted")
		}
	}()
	whole.ResizeStorage(8)
}

func TestSetGrad(t *testing.T) {
	s := NewScope()
	defer s.Close()
	p := Zeros([]int64{2, 2}, Float32, CPU).SetRequiresGrad(true)
	p.SetGrad(Ones([]int64{2, 2}, Float32, CPU))
	if got := p.Grad().Sum().Item(); got != 4 {
		t.Fatalf("grad sums to %g, want 4", got)
	}
	p.SetGrad(nil)
	if p.Grad() != nil {
		t.Fatal("SetGrad(nil) left a grad")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("a grad of another shape was accepted")
		}
	}()
	p.SetGrad(Ones([]int64{4}, Float32, CPU))
}
