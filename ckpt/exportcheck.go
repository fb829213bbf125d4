// exportcheck.go: what an export's dtype conversion loses. Narrowing
// describes it in one line for the caller to print; Export itself refuses
// the one conversion that changes values rather than rounding them — a
// weight beyond float16's ±65504 would be written as infinity.
//
// What it is not: a measure of the rounding error (a float32 → bfloat16
// export rounds every weight to 8 significant bits, by design of the
// format; the line says so and the export goes ahead).
package ckpt

import (
	"fmt"
	"math"

	"troupe/model"
	"troupe/torch"
)

// float16Max is the largest finite float16.
const float16Max = 65504

// NarrowingNote says what exporting weights held in from as dtype (as a
// config spells it; "" keeps from) loses, or "" when nothing is lost or
// dtype is not one an export takes (Export reports that).
func NarrowingNote(from torch.DType, dtype string) string {
	if dtype == "" {
		return ""
	}
	to, err := torch.ParseDType(dtype)
	if err != nil {
		return ""
	}
	switch {
	case to == torch.Float16 && from != torch.Float16:
		return fmt.Sprintf("exporting %v weights as float16 narrows their range to ±65504 (and loses magnitudes below 6e-8); bfloat16 keeps %v's range at the same size", from, from)
	case to == torch.BFloat16 && from == torch.Float32:
		return "exporting float32 weights as bfloat16 rounds each to 8 significant bits (the range is kept); export as float32 to keep them exactly"
	}
	return ""
}

// checkFloat16Range refuses to export as float16 a model with a weight
// beyond float16's range (it would be written as infinity).
func checkFloat16Range(m *model.Model) (err error) {
	defer torch.Recover(&err)
	for _, p := range m.Params() {
		s := torch.NewScope()
		peak := p.T.Detach().Abs().Max().Item()
		s.Close()
		if peak > float16Max || math.IsNaN(peak) {
			return fmt.Errorf("ckpt: export: tensor %s reaches |w| = %.4g, beyond float16's ±%d: it would be written as infinity; export as bfloat16 (the same size, float32's range) or float32", p.Name, peak, float16Max)
		}
	}
	return nil
}
