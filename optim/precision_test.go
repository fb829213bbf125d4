package optim

import (
	"strings"
	"testing"
)

// state_dtype takes float32 or model, and its bytes per parameter are those
// of the state it keeps (bf16 weights: 12 with float32 masters and moments,
// 4 with bf16 moments; float32 weights: 8 either way); loss_padding needs
// the magrpo loss, whose reference trains pads. Refusals name the key, the
// value and the fix.
func TestPrecisionSettings(t *testing.T) {
	s := DefaultSettings()
	for _, c := range []struct {
		mode       string
		weight, by int64
	}{{StateFloat32, 2, 12}, {StateModel, 2, 4}, {StateFloat32, 4, 8}, {StateModel, 4, 8}} {
		s.StateDType = c.mode
		if got, _ := s.StateBytesPerParam(c.weight); got != c.by {
			t.Errorf("state_dtype %s, %d-byte weights: %d bytes per parameter, want %d", c.mode, c.weight, got, c.by)
		}
	}
	bad := DefaultSettings()
	bad.StateDType = "bf16"
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), `state_dtype: must be one of float32, model, got "bf16"`) {
		t.Errorf("state_dtype bf16: %v", err)
	}
	bad = DefaultSettings()
	bad.LossPadding = true
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "loss_padding") || !strings.Contains(err.Error(), "loss: clipped") {
		t.Errorf("loss_padding with the clipped loss: %v", err)
	}
	bad.Loss = LossMAGRPO
	if err := bad.Validate(); err != nil {
		t.Errorf("loss_padding with the magrpo loss: %v", err)
	}
}
