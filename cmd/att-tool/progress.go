package main

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/attkit/attkit/internal/cli"
)

// progress reports every phase of a run on stderr: a line when a phase
// starts (indexing, decoding, writing, committing), then every second
// where the phase is (traces decoded, bytes read and waves decoded; runs
// written and waves written), and a line per finished trace. A nil
// *progress reports nothing.
type progress struct {
	env *cli.Env

	traces, runs int // totals of the decode and write phases
	// decode
	done, bytes, waves atomic.Int64
	// write
	written, wavesOut atomic.Int64

	mu      sync.Mutex
	phase   string // "" before the first phase
	shown   bool   // a \r line is on the terminal
	stopped bool
	quit    chan struct{}
	exited  chan struct{}
}

func newProgress(env *cli.Env) *progress {
	p := &progress{env: env, quit: make(chan struct{}), exited: make(chan struct{})}
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
				if line := p.status(); line != "" {
					fmt.Fprintf(env.Stderr, "\r%s: %s", env.Name, line)
					p.shown = true
				}
				p.mu.Unlock()
			}
		}
	}()
	return p
}

// status is the \r line of the current phase. The caller holds p.mu.
func (p *progress) status() string {
	switch p.phase {
	case "decode":
		return fmt.Sprintf("decoding: %d of %d traces done, %.1f MB read, %d waves",
			p.done.Load(), p.traces, float64(p.bytes.Load())/1e6, p.waves.Load())
	case "write":
		return fmt.Sprintf("writing: %d of %d runs done, %d of %d waves written",
			p.written.Load(), p.runs, p.wavesOut.Load(), p.waves.Load())
	case "":
		return ""
	}
	return p.phase + "…"
}

// start begins a phase ("index", "decode", "write", "commit") and says so
// on a line of its own.
func (p *progress) start(phase, line string) {
	if p == nil {
		return
	}
	p.clear()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.phase = phase
	fmt.Fprintf(p.env.Stderr, "%s: %s\n", p.env.Name, line)
}

// clear ends a \r line, so that the next message starts on its own line.
// The caller holds no lock of p.
func (p *progress) clear() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprintln(p.env.Stderr)
		p.shown = false
	}
}

func (p *progress) traceDone(path string, bytes, waves int64) {
	if p == nil {
		return
	}
	p.done.Add(1)
	p.clear()
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.env.Stderr, "%s: %s: %s, %d waves\n", p.env.Name, path, size(bytes), waves)
}

func (p *progress) stop() {
	if p == nil {
		return
	}
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
