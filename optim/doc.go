// Package optim says how each trained model is optimised, in pure Go (no
// libtorch): the per-agent optimizer and loss Settings with the reference
// defaults and validation, per-agent Overrides and the key-by-key diff, the
// learning-rate schedule, and Assign, which groups agents by the model they
// train (one optimizer per model) and refuses shared models with differing
// settings. It is the one place where agent-to-model grouping is decided;
// config validates with it and policy trains with its Groups.
//
//	doc.go        this overview
//	settings.go   Settings, DefaultSettings (Dr. MAS math), Validate
//	overrides.go  per-agent partial settings; the key-by-key diff
//	schedule.go   constant / cosine learning rate with warmup
//	precision.go  state_dtype (AdamW state in float32 or the weights' dtype) and loss_padding
//	assign.go     Assign: agents → models, refusing shared models with differing settings
package optim
