package driver

import (
	"sync/atomic"

	"github.com/attkit/attkit/internal/backend"
	"github.com/attkit/attkit/internal/wire"
)

// A pipe runs a decode on two cores as a pipeline: the decoder's goroutine
// decodes and copies each batch into a chunk (a wire.Arena), and a second
// goroutine hands the chunks' batches to the sink (encoding and writing
// them, for att-decode; the viewer's and the statistics' work, for
// att-tool), in the order the decoder emitted them. The sink sees the same
// batches in the same order as without the pipe, so the output is the
// same, byte for byte; only the time changes.
//
// Memory is bounded: at most chunks chunks are in flight, each closed once
// it holds chunkLen elements (records, instructions, states), so a chunk
// holds at most chunkLen plus one batch of at most bigLen elements. A
// batch larger than bigLen (a whole trace's occupancy, pooled to the end
// with --whole-batches) is not copied: the decoder waits until the sink has
// taken it.
type pipe struct {
	sink backend.Emit // the sink's side: called on the pipe's goroutine
	cur  *chunk
	full chan *chunk   // to the sink's goroutine, in order
	free chan *chunk   // back to the decoder's
	ack  chan struct{} // a big batch was delivered
	done chan struct{}
	// failed is set once sink returned an error: the decoder's next emit
	// returns errSink, and the batches still in flight are dropped.
	failed atomic.Bool

	chunkLen, bigLen int
}

// A chunk is a run of batches copied from the decoder, or one batch too
// large to copy (big), which the decoder waits for (pipe.ack).
type chunk struct {
	arena   wire.Arena
	batches []wire.Batch
	big     *wire.Batch
}

// The pipe's bounds (see pipe): 4 chunks of 16 Ki elements of a few dozen
// bytes (plus one copied batch of at most 128 Ki each) in flight at most.
// Chunks of 16 Ki cost less CPU time than 64 Ki on a 100 MB gfx942 trace
// (att-decode -j 2: 1.75 s against 1.94-2.45 s, peak RSS 38 MB against
// 46-52 MB; bench-cores, loaded machine): the sink reads what the
// decoder just wrote while it is still in a cache.
const (
	pipeChunks   = 4
	pipeChunkLen = 1 << 14
	pipeBigLen   = 1 << 17
)

// pipeline returns the Emit a decode calls, and what to call once it
// returned: a pipe to sink when a core is spare (it takes it until stop),
// else sink itself.
func (d *Driver) pipeline(sink backend.Emit) (emit backend.Emit, stop func()) {
	if d.spare.Add(-1) < 0 {
		d.spare.Add(1)
		return sink, func() {}
	}
	p := newPipe(sink, d.chunkLen, d.bigLen)
	return p.emit, func() {
		p.close()
		d.spare.Add(1)
	}
}

// newPipe starts the sink's goroutine; close ends it.
func newPipe(sink backend.Emit, chunkLen, bigLen int) *pipe {
	p := &pipe{
		sink:     sink,
		full:     make(chan *chunk, pipeChunks),
		free:     make(chan *chunk, pipeChunks),
		ack:      make(chan struct{}),
		done:     make(chan struct{}),
		chunkLen: chunkLen,
		bigLen:   bigLen,
	}
	for range pipeChunks {
		p.free <- new(chunk)
	}
	go p.drain()
	return p
}

// emit is the decoder's Emit: it copies b into the current chunk, or hands
// a large b over and waits until the sink has taken it.
func (p *pipe) emit(b *wire.Batch) error {
	if p.failed.Load() {
		return errSink
	}
	if b.Len() > p.bigLen {
		p.send()
		c := <-p.free
		c.big = b
		p.full <- c
		<-p.ack
		if p.failed.Load() {
			return errSink
		}
		return nil
	}
	if p.cur == nil {
		p.cur = <-p.free
	}
	p.cur.batches = append(p.cur.batches, p.cur.arena.Clone(b))
	if p.cur.arena.Len() >= p.chunkLen {
		p.send()
	}
	return nil
}

// send hands the current chunk, if any, to the sink's goroutine.
func (p *pipe) send() {
	if p.cur != nil {
		p.full <- p.cur
		p.cur = nil
	}
}

// drain is the sink's goroutine: it delivers the chunks' batches in order
// until close, and after an error of the sink only returns the chunks.
func (p *pipe) drain() {
	defer close(p.done)
	for c := range p.full {
		if c.big != nil {
			p.deliver(c.big)
			c.big = nil
			p.free <- c
			p.ack <- struct{}{}
			continue
		}
		for i := range c.batches {
			p.deliver(&c.batches[i])
		}
		clear(c.batches)
		c.batches = c.batches[:0]
		c.arena.Reset()
		p.free <- c
	}
}

func (p *pipe) deliver(b *wire.Batch) {
	if !p.failed.Load() && p.sink(b) != nil {
		p.failed.Store(true)
	}
}

// close delivers what the decoder emitted last and waits until the sink
// has taken every batch. It is the decoder's last call to the pipe.
func (p *pipe) close() {
	p.send()
	close(p.full)
	<-p.done
}
