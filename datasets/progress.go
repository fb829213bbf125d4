package datasets

// progress.go — progress lines of downloads: one when a file starts, one
// every few seconds while it comes (bytes, share, rate), one when it is
// complete, with the checksum it was checked against.

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// progress writes the lines; a nil *progress writes nothing.
type progress struct {
	mu    sync.Mutex
	out   io.Writer
	every time.Duration
	now   func() time.Time
}

// transfer is one file's download.
type transfer struct {
	p           *progress
	name        string
	size, n     int64
	start, last time.Time // last: the last line's time
}

func (p *progress) line(format string, args ...any) {
	if p == nil || p.out == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.out, "data: "+format+"\n", args...)
}

func (p *progress) start(name string, size int64) *transfer {
	if p == nil {
		return nil
	}
	t := &transfer{p: p, name: name, size: size, start: p.now()}
	t.last = t.start
	if size >= 0 {
		p.line("downloading %s (%s)", name, bytesText(size))
	} else {
		p.line("downloading %s", name)
	}
	return t
}

func (t *transfer) add(n int64) {
	if t == nil {
		return
	}
	t.n += n
	now := t.p.now()
	if now.Sub(t.last) < t.p.every {
		return
	}
	t.last = now
	rate := float64(t.n) / now.Sub(t.start).Seconds()
	if t.size > 0 {
		t.p.line("%s: %s of %s (%.0f%%, %s/s)", t.name, bytesText(t.n), bytesText(t.size), 100*float64(t.n)/float64(t.size), bytesText(int64(rate)))
	} else {
		t.p.line("%s: %s (%s/s)", t.name, bytesText(t.n), bytesText(int64(rate)))
	}
}

// finish reports a complete file and what it was checked against.
func (t *transfer) finish(checked string) {
	if t == nil {
		return
	}
	t.p.line("%s: %s in %.1f s; checksum: %s", t.name, bytesText(t.n), t.p.now().Sub(t.start).Seconds(), checked)
}

// bytesText is a byte count in B, kB, MB or GB (powers of 1000).
func bytesText(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2f GB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d B", n)
}
