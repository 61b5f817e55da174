package main

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/attkit/attkit/internal/cli"
)

// progress reports the decodes on stderr: every second the traces done,
// the bytes read and the waves decoded, and a line per finished trace.
type progress struct {
	env         *cli.Env
	total       int
	done, bytes atomic.Int64
	waves       atomic.Int64

	mu      sync.Mutex
	shown   bool // a \r line is on the terminal
	stopped bool
	quit    chan struct{}
	exited  chan struct{}
}

func newProgress(env *cli.Env, total int) *progress {
	p := &progress{env: env, total: total, quit: make(chan struct{}), exited: make(chan struct{})}
	go func() {
		defer close(p.exited)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-p.quit:
				return
			case <-t.C:
				p.mu.Lock()
				fmt.Fprintf(env.Stderr, "\r%s: decoding: %d of %d traces done, %.1f MB read, %d waves",
					env.Name, p.done.Load(), p.total, float64(p.bytes.Load())/1e6, p.waves.Load())
				p.shown = true
				p.mu.Unlock()
			}
		}
	}()
	return p
}

// clear ends a \r line, so that the next message starts on its own line.
// The caller holds no lock of p.
func (p *progress) clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprintln(p.env.Stderr)
		p.shown = false
	}
}

func (p *progress) traceDone(path string, bytes, waves int64) {
	p.done.Add(1)
	p.clear()
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.env.Stderr, "%s: %s: %s, %d waves\n", p.env.Name, path, size(bytes), waves)
}

func (p *progress) stop() {
	p.mu.Lock()
	if p.stopped {
		p.mu.Unlock()
		return
	}
	p.stopped = true
	p.mu.Unlock()
	close(p.quit)
	<-p.exited
	p.clear()
}

// counting counts the bytes read from a trace file; the file's other
// methods (Stat, ReadAt, Seek) pass through for the decoders.
type counting struct {
	*os.File
	prog *progress
	n    atomic.Int64
}

func (c *counting) Read(b []byte) (int, error) {
	n, err := c.File.Read(b)
	c.n.Add(int64(n))
	c.prog.bytes.Add(int64(n))
	return n, err
}

func (c *counting) ReadAt(b []byte, off int64) (int, error) {
	n, err := c.File.ReadAt(b, off)
	c.n.Add(int64(n))
	c.prog.bytes.Add(int64(n))
	return n, err
}

// size formats a byte count for people.
func size(n int64) string {
	switch {
	case n >= 1e6:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d bytes", n)
}
