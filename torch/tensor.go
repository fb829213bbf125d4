package torch

// #include "tshim.h"
import "C"

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// Tensor is one reference to a libtorch tensor. Its memory is released by
// Free (idempotent) or by the Scope it was created in; never by the garbage
// collector. A freed tensor used again panics with a *Error.
type Tensor struct {
	h     C.ts_tensor
	owner *Scope
}

// Error is what a failed libtorch call panics with: the op and libtorch's
// own message. Package boundaries turn it into an error with Recover.
type Error struct {
	Op  string
	Msg string
}

func (e *Error) Error() string { return "torch: " + e.Op + ": " + e.Msg }

// Recover, deferred at a package boundary, turns a *Error panic into *err
// and lets any other panic continue:
//
//	func (m *Model) Forward(...) (out *torch.Tensor, err error) {
//		defer torch.Recover(&err)
func Recover(err *error) {
	r := recover()
	if r == nil {
		return
	}
	if te, ok := r.(*Error); ok {
		*err = te
		return
	}
	panic(r)
}

// check panics with a *Error when a shim call failed.
func check(op string, e C.ts_err) {
	if e == nil {
		return
	}
	msg := C.GoString(e)
	C.ts_free_err(e)
	panic(&Error{Op: op, Msg: msg})
}

var live atomic.Int64

// LiveTensors is the number of tensor handles created and not yet freed in
// this process. Leak tests compare it before and after.
func LiveTensors() int64 { return live.Load() }

// wrap takes ownership of a fresh handle and registers it with the innermost
// open scope.
func wrap(h C.ts_tensor) *Tensor {
	if h == nil {
		return nil
	}
	live.Add(1)
	t := &Tensor{h: h}
	scopes.mu.Lock()
	if s := currentStack().top; s != nil {
		t.owner = s
		s.tensors = append(s.tensors, t)
	}
	scopes.mu.Unlock()
	return t
}

// handle returns the C handle or panics on a nil or freed tensor.
func (t *Tensor) handle() C.ts_tensor {
	if t == nil {
		panic(&Error{Op: "tensor", Msg: "nil *Tensor"})
	}
	if t.h == nil {
		panic(&Error{Op: "tensor", Msg: "use of a freed tensor"})
	}
	return t.h
}

// Free releases the tensor now. Calling it again, or on nil, does nothing.
func (t *Tensor) Free() {
	if t == nil || t.h == nil {
		return
	}
	h := t.h
	t.h = nil
	live.Add(-1)
	check("free", C.ts_free(h))
}

// Freed reports whether the tensor has been released.
func (t *Tensor) Freed() bool { return t == nil || t.h == nil }

// FreeAll frees every tensor given (nil entries are skipped).
func FreeAll(ts ...*Tensor) {
	for _, t := range ts {
		t.Free()
	}
}

// Scope frees, at Close, every tensor created while it was the innermost open
// scope, except those passed to Keep. Scopes nest in a stack: the
// process-wide one (the torch goroutine's), or, on a Thread, that thread's
// own (thread.go). Open and close a scope on the goroutine that uses it:
//
//	s := torch.NewScope()
//	defer s.Close()
//	y := s.Keep(x.Matmul(w).Add(b))
type Scope struct {
	parent  *Scope
	stack   *scopeStack // the stack it was opened on
	tensors []*Tensor
	closed  bool
}

// scopeStack is one stack of open scopes: the process-wide one, or a
// Thread's.
type scopeStack struct{ top *Scope }

// scopes guards every stack and every scope's tensor list. process is the
// stack of every goroutine that is not a Thread's; threads holds the
// Threads' stacks by OS thread id, and threadCount says whether there are
// any, so that a process without Threads never asks for its thread id.
var scopes struct {
	mu          sync.Mutex
	process     scopeStack
	threads     map[int]*scopeStack
	threadCount atomic.Int32
}

// currentStack is the calling thread's stack (scopes.mu held).
func currentStack() *scopeStack {
	if scopes.threadCount.Load() == 0 {
		return &scopes.process
	}
	if st, ok := scopes.threads[threadID()]; ok {
		return st
	}
	return &scopes.process
}

// NewScope opens a scope nested in the current one.
func NewScope() *Scope {
	scopes.mu.Lock()
	defer scopes.mu.Unlock()
	st := currentStack()
	s := &Scope{parent: st.top, stack: st}
	st.top = s
	return s
}

// Keep moves tensors out of s into its parent scope (or leaves them owned by
// the caller when s is outermost) and returns the first, for chaining.
func (s *Scope) Keep(ts ...*Tensor) *Tensor {
	scopes.mu.Lock()
	defer scopes.mu.Unlock()
	for _, t := range ts {
		if t == nil || t.owner != s {
			continue
		}
		t.owner = s.parent
		if s.parent != nil {
			s.parent.tensors = append(s.parent.tensors, t)
		}
	}
	if len(ts) == 0 {
		return nil
	}
	return ts[0]
}

// Close frees the scope's tensors and makes its parent current again. Scopes
// opened inside s and still open are closed first. Close is idempotent.
func (s *Scope) Close() {
	scopes.mu.Lock()
	if s.closed {
		scopes.mu.Unlock()
		return
	}
	var doomed []*Tensor
	inStack := false
	for c := s.stack.top; c != nil; c = c.parent {
		if c == s {
			inStack = true
			break
		}
	}
	if !inStack {
		scopes.mu.Unlock()
		panic(&Error{Op: "scope", Msg: "Close of a scope that is not open"})
	}
	for c := s.stack.top; ; c = c.parent {
		c.closed = true
		for _, t := range c.tensors {
			if t.owner == c {
				doomed = append(doomed, t)
			}
		}
		c.tensors = nil
		if c == s {
			break
		}
	}
	s.stack.top = s.parent
	scopes.mu.Unlock()
	for _, t := range doomed {
		t.Free()
	}
}

// Len is the number of tensors the scope currently owns.
func (s *Scope) Len() int {
	scopes.mu.Lock()
	defer scopes.mu.Unlock()
	n := 0
	for _, t := range s.tensors {
		if t.owner == s && t.h != nil {
			n++
		}
	}
	return n
}

// Untrack removes t from whatever scope owns it: the caller frees it.
func (t *Tensor) Untrack() *Tensor {
	scopes.mu.Lock()
	t.owner = nil
	scopes.mu.Unlock()
	return t
}

// String describes the tensor's type, device and shape (not its values).
func (t *Tensor) String() string {
	if t == nil || t.h == nil {
		return "Tensor(freed)"
	}
	return fmt.Sprintf("Tensor(%v, %v, %v)", t.DType(), t.Device(), t.Shape())
}
