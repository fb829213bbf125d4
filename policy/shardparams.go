package policy

import "troupe/torch"

// unitStorage is one distinct storage under a unit's weights.
type unitStorage struct {
	t     *torch.Tensor
	bytes int64
}

// presentBytes is what the weights hold now.
func (s *sharded) presentBytes() int64 {
	var n int64
	for _, p := range s.params {
		n += p.Numel() * int64(p.DType().Size())
	}
	return n
}
