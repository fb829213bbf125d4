package torch

// thread.go — a second torch thread: a goroutine locked to its own OS
// thread, with its own scope stack, that runs the functions given to it
// one after another.
//
// The package's rule is one torch goroutine per process (doc.go, Threads).
// A Thread is the sanctioned exception: work that must run beside the torch
// goroutine (one model's update beside another's, on another device) runs
// on a Thread, whose scopes nest in a stack of its own, so neither side's
// Close frees the other's temporaries. libtorch keeps grad mode, the
// current CUDA stream and autograd's sequence numbers per OS thread, so a
// Thread's work is as repeatable as the torch goroutine's: the same
// functions in the same order give the same bits whatever runs beside.
//
// What it is not: a pool. One Thread runs one function at a time; the
// caller decides what runs where. Without a Thread the process-wide stack
// is the only one and nothing here is on the path (tensor.go never asks
// for the thread id).

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"syscall"
)

// Thread is a locked OS thread with its own scope stack.
type Thread struct {
	work   chan func()
	closed chan struct{}
}

// NewThread starts a Thread. Close stops it.
func NewThread() *Thread {
	th := &Thread{work: make(chan func()), closed: make(chan struct{})}
	started := make(chan struct{})
	go th.loop(started)
	<-started
	return th
}

// loop runs on the Thread's goroutine: locked for good (the OS thread ends
// with it), registered with its stack until the work channel closes.
func (th *Thread) loop(started chan<- struct{}) {
	runtime.LockOSThread()
	id := threadID()
	st := &scopeStack{}
	scopes.mu.Lock()
	if scopes.threads == nil {
		scopes.threads = map[int]*scopeStack{}
	}
	scopes.threads[id] = st
	scopes.threadCount.Add(1)
	scopes.mu.Unlock()
	close(started)
	defer close(th.closed)
	for fn := range th.work {
		fn()
	}
	// scopes left open by the work are closed, their tensors freed
	scopes.mu.Lock()
	bottom := st.top
	for bottom != nil && bottom.parent != nil {
		bottom = bottom.parent
	}
	scopes.mu.Unlock()
	if bottom != nil {
		bottom.Close()
	}
	scopes.mu.Lock()
	delete(scopes.threads, id)
	scopes.threadCount.Add(-1)
	scopes.mu.Unlock()
}

// Go starts fn on the Thread and returns at once; the channel gives its
// result. A *Error panic in fn comes back as its error, any other panic as
// an error that names it (the Thread survives both). Go blocks while the
// Thread is still running an earlier function.
func (th *Thread) Go(fn func() error) <-chan error {
	res := make(chan error, 1)
	th.work <- func() { res <- runGuarded(fn) }
	return res
}

// Run runs fn on the Thread and waits for it.
func (th *Thread) Run(fn func() error) error { return <-th.Go(fn) }

// Close lets the Thread finish its current function, closes the scopes it
// left open and ends its OS thread. Close is idempotent.
func (th *Thread) Close() {
	select {
	case <-th.closed:
		return
	default:
	}
	close(th.work)
	<-th.closed
}

// runGuarded runs fn, turning a panic into an error.
func runGuarded(fn func() error) (err error) {
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		if te, ok := r.(*Error); ok {
			err = te
			return
		}
		err = fmt.Errorf("torch thread: panic: %v\n%s", r, debug.Stack())
	}()
	return fn()
}

// threadID is the calling OS thread's id.
func threadID() int { return syscall.Gettid() }
