package sqtt

import (
	"cmp"
	"errors"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/attkit/attkit/internal/backend"
	"github.com/attkit/attkit/internal/wire"
)

// A back is the back half of a split decode (Decoder.Split), run on a
// goroutine of its own: it stitches each wave the front (the token reader
// and its per-wave state) finished, builds its WAVE record, and calls the
// caller's Emit with every batch, in the order the front produced them.
// The front hands a finished wave over as it is, without a copy (the back
// gives it back for reuse, wave.reset), and copies its other batches
// (occupancy, perf counters, shader data, infos...: small or rare) into a
// chunk's arena. The back's parseState has the stitcher's instruction
// cache and the once-only infos of finishWave, which only the stitch
// reads, so the records and their order are those of one goroutine.
//
// Memory is bounded as in a pipeline: at most splitChunks chunks are in
// flight, each handed over once it holds splitChunkLen elements (records,
// instructions, timeline states; a wave counts its own) or that many
// items; a batch larger than splitBigLen (a whole trace's occupancy, with
// PoolLimit < 0) is not copied: the front waits until the back has
// emitted it. The chunks go round a ring of splitChunks; a side that
// waits (the back for a chunk, the front for room) spins briefly, doing an
// RDNA decode's token scan ahead meanwhile (rdnaScanner; an RDNA decode
// spins for parkScan after the scan's last work), then sleeps.
type back struct {
	ps  *parseState // the back's: the real Emit, the stitch's cache
	cur *splitChunk
	// The chunks go round a ring: the front fills chunks[sent%splitChunks]
	// and hands it over (sent), the back does the chunks in order and
	// gives each back (freed); closed says the front sent its last.
	chunks      [splitChunks]splitChunk
	sent, freed atomic.Int64
	closed      atomic.Bool
	room, ready parker        // the front waits for room, the back for a chunk
	ack         chan struct{} // a big batch was emitted
	done        chan struct{}
	failed      atomic.Bool
	err         error // the back's error; read after done

	chunkLen, bigLen int

	waves  []*wave            // gfx9 waves the back is done with, for the front
	rwaves []*rwave           // RDNA ones
	occs   [][]wire.Occupancy // occupancy arrays, for the front's pool

	scan atomic.Pointer[rdnaScanner] // an RDNA decode's scan, once started
}

// A splitChunk is a run of the front's items.
type splitChunk struct {
	arena wire.Arena
	items []splitItem
	n     int // elements, see back
	// The waves of the items, reset by the back, for the front to reuse.
	waves  []*wave
	rwaves []*rwave
	occs   [][]wire.Occupancy // the occupancy arrays of the items
}

// A splitItem is one wave to stitch and emit (w, a gfx9 wave, or rw, an
// RDNA one) or one batch (b, copied into the chunk's arena, or big, not
// copied).
type splitItem struct {
	w   *wave
	rw  *rwave
	off int64 // the byte offset of the token that ended w
	b   wire.Batch
	big *wire.Batch
	occ bool // b.Occupancy is the front's occupancy pool's, to give back
}

// The back's bounds: 4 chunks of 4 Ki elements (and the waves they hold)
// in flight at most.
const (
	splitChunks   = 4
	splitChunkLen = 1 << 12
	splitBigLen   = 1 << 17
	// splitPooled waves at most are kept for reuse (each keeps the
	// capacity of its largest instruction list); the others are left to
	// the garbage collector. Many small waves in flight at once would
	// otherwise keep that many arrays.
	splitPooled = 256
)

// errBackFailed stops the front once the back failed; the decode returns
// the back's error.
var errBackFailed = errors.New("the back half of the decode failed")

// startBack makes ps the front of a split decode into emit and starts the
// back; finish ends it.
func startBack(ps *parseState, emit backend.Emit, chunkLen, bigLen int) *back {
	bk := &back{
		chunkLen: cmp.Or(chunkLen, splitChunkLen),
		bigLen:   cmp.Or(bigLen, splitBigLen),
		ps: &parseState{
			em:    emitter{emit: emit, rules: ps.rules},
			cache: ps.cache,
			limit: ps.limit,
			rules: ps.rules,
		},
		room:  newParker(),
		ready: newParker(),
		ack:   make(chan struct{}),
		done:  make(chan struct{}),
	}
	ps.cache = nil // the back's alone
	ps.em.emit, ps.em.split, ps.em.own = bk.batch, true, bk.occupancy
	ps.back = bk
	go bk.run()
	return bk
}

// chunk returns the chunk the front fills, taking a free one (and the
// waves it held) when there is none.
func (bk *back) chunk() *splitChunk {
	if bk.cur == nil {
		i := bk.sent.Load()
		if i-bk.freed.Load() >= splitChunks {
			bk.room.wait(func() bool { return i-bk.freed.Load() < splitChunks }, bk.help, bk.keep())
		}
		c := &bk.chunks[i%splitChunks]
		bk.waves = append(bk.waves, c.waves[:min(len(c.waves), splitPooled-len(bk.waves))]...)
		bk.rwaves = append(bk.rwaves, c.rwaves[:min(len(c.rwaves), splitPooled-len(bk.rwaves))]...)
		bk.occs = append(bk.occs, c.occs[:min(len(c.occs), splitChunks-len(bk.occs))]...)
		c.items, c.n = c.items[:0], 0
		bk.cur = c
	}
	return bk.cur
}

// added counts n more elements in c, handing it over when full.
func (bk *back) added(c *splitChunk, n int) {
	if c.n += n; c.n >= bk.chunkLen || len(c.items) >= bk.chunkLen {
		bk.send()
	}
}

// send hands the current chunk, if any, to the back.
func (bk *back) send() {
	if bk.cur != nil {
		bk.sent.Add(1)
		bk.ready.signal()
		bk.cur = nil
	}
}

// batch is the front's Emit: it copies b into the current chunk, or hands
// a large b over and waits until the back has emitted it.
func (bk *back) batch(b *wire.Batch) error {
	if bk.failed.Load() {
		return errBackFailed
	}
	if b.Len() > bk.bigLen {
		bk.send()
		c := bk.chunk()
		c.items = append(c.items, splitItem{big: b})
		bk.send()
		<-bk.ack
		return nil
	}
	c := bk.chunk()
	c.items = append(c.items, splitItem{b: c.arena.Clone(b)})
	bk.added(c, b.Len())
	return nil
}

// occupancy hands the occupancy pool's records over without a copy (the
// back gives the array back with its chunk) and returns an array for the
// pool's next records; too many for a chunk go as a large batch does.
func (bk *back) occupancy(o []wire.Occupancy) ([]wire.Occupancy, error) {
	if len(o) > bk.bigLen {
		return o, bk.batch(&wire.Batch{Type: wire.TypeOccupancy, Occupancy: o})
	}
	if bk.failed.Load() {
		return o, errBackFailed
	}
	c := bk.chunk()
	c.items = append(c.items, splitItem{b: wire.Batch{Type: wire.TypeOccupancy, Occupancy: o}, occ: true})
	var next []wire.Occupancy
	if n := len(bk.occs); n > 0 {
		next, bk.occs = bk.occs[n-1], bk.occs[:n-1]
	}
	bk.added(c, len(o))
	return next, nil
}

// wave hands a finished gfx9 wave over, ended by the token at byte off.
func (bk *back) wave(w *wave, off int64) error {
	if bk.failed.Load() {
		return errBackFailed
	}
	c := bk.chunk()
	c.items = append(c.items, splitItem{w: w, off: off})
	bk.added(c, 1+len(w.insts)+len(w.timeline))
	return nil
}

// rwave hands a finished RDNA wave over.
func (bk *back) rwave(w *rwave) error {
	if bk.failed.Load() {
		return errBackFailed
	}
	c := bk.chunk()
	c.items = append(c.items, splitItem{rw: w})
	bk.added(c, 1+len(w.insts)+len(w.timeline))
	return nil
}

// takeWaves appends the gfx9 waves the back is done with to free, reset
// (wave.reset).
func (bk *back) takeWaves(free []*wave) []*wave {
	free = append(free, bk.waves...)
	clear(bk.waves)
	bk.waves = bk.waves[:0]
	return free
}

// takeRWaves appends the RDNA waves the back is done with to free, reset
// (rwave.reset).
func (bk *back) takeRWaves(free []*rwave) []*rwave {
	free = append(free, bk.rwaves...)
	clear(bk.rwaves)
	bk.rwaves = bk.rwaves[:0]
	return free
}

// help scans ahead for an RDNA decode's front while a side waits; it
// reports whether it did (rdnaScanner.help).
func (bk *back) help() bool {
	sc := bk.scan.Load()
	return sc != nil && sc.help(4)
}

// keep is how long a waiting side spins after help's last work
// (parker.wait): parkScan once an RDNA decode's scan runs, else 0.
func (bk *back) keep() time.Duration {
	if bk.scan.Load() != nil {
		return parkScan
	}
	return 0
}

// run is the back's goroutine: it does the chunks' items in order until
// finish, and after an error only returns the chunks.
func (bk *back) run() {
	defer close(bk.done)
	for i := int64(0); ; i++ {
		if bk.sent.Load() <= i {
			bk.ready.wait(func() bool { return bk.sent.Load() > i || bk.closed.Load() }, bk.help, bk.keep())
			if bk.sent.Load() <= i {
				return // closed, and every chunk done
			}
		}
		c := &bk.chunks[i%splitChunks]
		if !bk.failed.Load() {
			for i := range c.items {
				if err := bk.do(&c.items[i]); err != nil {
					bk.err = err
					bk.failed.Store(true)
					break
				}
			}
		}
		// The waves are made ready for reuse and the chunk emptied here
		// rather than by the front, which has the larger share of the
		// work.
		c.waves, c.rwaves = c.waves[:0], c.rwaves[:0]
		clear(c.occs)
		c.occs = c.occs[:0]
		for i := range c.items {
			if it := &c.items[i]; it.occ {
				c.occs = append(c.occs, it.b.Occupancy[:0])
			} else if it.w != nil {
				it.w.reset()
				c.waves = append(c.waves, it.w)
			} else if it.rw != nil {
				it.rw.reset()
				c.rwaves = append(c.rwaves, it.rw)
			}
		}
		big := len(c.items) > 0 && c.items[len(c.items)-1].big != nil
		clear(c.items)
		c.items = c.items[:0]
		c.arena.Reset()
		bk.freed.Store(i + 1)
		bk.room.signal()
		if big {
			bk.ack <- struct{}{}
		}
	}
}

// do stitches and emits a wave, or emits a batch.
func (bk *back) do(it *splitItem) error {
	ps := bk.ps
	switch {
	case it.w != nil:
		return ps.emitGFX9Wave(it.w, it.off)
	case it.rw != nil:
		return ps.finishWave(&it.rw.wave, ps.stitchRDNA(&it.rw.wave))
	case it.big != nil:
		return bk.emit(it.big)
	}
	return bk.emit(&it.b)
}

// emit emits a batch of the front's, keeping watch of the waves still
// running (emitter.occupancy) for the front.
func (bk *back) emit(b *wire.Batch) error {
	if b.Type == wire.TypeOccupancy {
		bk.ps.em.watch.occupancy(b.Occupancy)
	}
	return bk.ps.em.emit(b)
}

// finish hands the front's last items over and waits until the back has
// done them all. It returns the back's error, if any: the back fails only
// at an item the front made before anything the front failed at, so its
// error is the decode's.
func (bk *back) finish() error {
	bk.send()
	bk.closed.Store(true)
	bk.ready.signal()
	<-bk.done
	return bk.err
}

// An rdnaScanner runs a split RDNA decode's token scan (rdna.scanBlock:
// the clock, the skip state and where each token starts come from the
// tokens alone) ahead of the handlers, on whichever side of the split has
// nothing else to do: the back scans while it waits for a chunk, the
// front while it waits for room for one, and the front scans a block
// itself when it needs one and none is ready. So the scan takes no third
// goroutine, which two cores would time-share: a third goroutine made
// ready by the front waits in the front's run queue until the front
// blocks, since the other core is busy with the back (an execution trace
// of the 100 MB gfx1100 trace showed the front runnable but not running
// for 0.65 s of a 2.3 s decode that way).
//
// The front gives the scanner one stretch of the buffered bytes at a time
// (scan's: up to 2^20 bits, before fastEnd) and takes its blocks until the
// stretch's last; it does not refill the buffer before, so whoever scans
// reads bytes nobody writes. Whoever scans holds busy, which guards the
// stretch's state; blocks go through a ring of scanRing, each with room
// for the open group the front carries (rdnaCarry tokens) before the
// scanned tokens, so the carried group is not copied with the block.
type rdnaScanner struct {
	r    *rdna
	ring *[scanRing]scanBlock

	produced, consumed atomic.Int64 // blocks written, blocks given back
	busy               atomic.Bool  // a side is scanning
	head               int64        // the front's next block

	// The stretch's scan state; only the holder of busy reads or writes
	// it.
	buf                  []byte
	p, end, start, clock int64
	ext, fresh, live     bool // live: blocks are left to scan; fresh: none scanned yet
}

// scanRing blocks of 256 tokens are in flight at most (about 330 KB).
const scanRing = 32

// A scanBlock is a block of tokens scanned: toks[rdnaCarry:rdnaCarry+n],
// the TIMESTAMP that ended it (stamp, 0 if none) and the clock before it;
// the last block of a stretch has the scan's state after it.
type scanBlock struct {
	toks     [rdnaCarry + 256]rdnaTok
	n        int
	stamp    uint64
	clock    int64
	last     bool
	p, start int64
	ext      bool
}

// A parker lets one goroutine wait until a condition holds that another
// makes true, without a wake-up per change: the waiter sleeps only after
// it said so (waiting) and checked the condition again, and the other
// wakes it once it made the condition true.
type parker struct {
	waiting atomic.Bool
	wake    chan struct{}
}

func newParker() parker { return parker{wake: make(chan struct{}, 1)} }

// parkSpin is how many times a waiting side checks its condition, once
// help finds no work, before it sleeps.
const parkSpin = 64

// parkScan is how long a waiting side of an RDNA decode goes on checking
// its condition and looking for scan work after help last found some,
// before it sleeps. A side that sleeps scans nothing until it is woken,
// and a wake-up took about 120 µs on average on a 2-vCPU VM (an
// execution trace of a split decode of the 100 MB gfx1100 trace: the
// back slept 1,800-4,000 times a decode and was runnable 0.2-0.5 s in
// all before it ran again), while the front hands a chunk over or takes
// a block every 100-300 µs. Spinning instead keeps both sides scanning:
// the back slept 22-59 times a decode, and whole att-decode -j 2 runs
// took 1.295 s -> 1.165 s (medians of 8 interleaved pairs, 7 faster).
// gfx9 has no scan to share, and spinning there only took CPU (wall
// 0.87 s -> 0.94-0.98 s), so its sides sleep after parkSpin checks.
const parkScan = 200 * time.Microsecond

// wait returns once ready() holds. Before it sleeps it calls help while
// help finds work (back.help: an RDNA decode's token scan), so that a side
// that waits does the scan's work, and with keep > 0 it goes on calling
// both for keep after help last found work (parkScan).
func (pk *parker) wait(ready func() bool, help func() bool, keep time.Duration) {
	var since time.Time // when the spin after help's last work began
	for spin := 0; !ready(); spin++ {
		if help() {
			spin, since = 0, time.Time{}
			continue
		}
		if spin < parkSpin {
			continue
		}
		if keep > 0 {
			if spin%parkSpin != 0 {
				continue
			}
			now := time.Now()
			if since.IsZero() {
				since = now
			}
			if now.Sub(since) < keep {
				// Let the other side run should both share one
				// thread (GOMAXPROCS 1).
				runtime.Gosched()
				continue
			}
		}
		pk.waiting.Store(true)
		if ready() {
			pk.waiting.Store(false)
			return
		}
		<-pk.wake
		since = time.Time{}
	}
}

// signal wakes the waiter, if waiting; call it after making its condition
// true.
func (pk *parker) signal() {
	if pk.waiting.Load() && pk.waiting.CompareAndSwap(true, false) {
		select {
		case pk.wake <- struct{}{}:
		default:
		}
	}
}

// scanner returns the decode's scanner, making it on first use.
func (r *rdna) scanner() *rdnaScanner {
	bk := r.ps.back
	sc := bk.scan.Load()
	if sc == nil {
		sc = &rdnaScanner{r: r, ring: new([scanRing]scanBlock)}
		bk.scan.Store(sc)
	}
	return sc
}

// stretch gives the scanner the front's next stretch: bits p to end of buf.
// The blocks of the one before have all been taken.
func (sc *rdnaScanner) stretch(buf []byte, p, end, start, clock int64, ext bool) {
	for !sc.busy.CompareAndSwap(false, true) {
		// The back is looking for a block to scan and finds none; let it
		// run should both share one thread (GOMAXPROCS 1).
		runtime.Gosched()
	}
	sc.buf, sc.p, sc.end, sc.start, sc.clock, sc.ext = buf, p, end, start, clock, ext
	sc.fresh, sc.live = true, true
	sc.busy.Store(false)
}

// help scans up to n blocks ahead of the front, if the stretch has blocks
// left, the ring room and no other side is scanning. It reports whether it
// scanned any.
func (sc *rdnaScanner) help(n int) bool {
	if sc.produced.Load()-sc.consumed.Load() >= scanRing || !sc.busy.CompareAndSwap(false, true) {
		return false
	}
	did := false
	for ; n > 0 && sc.live && sc.produced.Load()-sc.consumed.Load() < scanRing; n-- {
		sc.scanOne()
		did = true
	}
	sc.busy.Store(false)
	return did
}

// scanOne scans the stretch's next block into the ring; the caller holds
// busy, the stretch is live and the ring has room.
func (sc *rdnaScanner) scanOne() {
	r := sc.r
	if sc.fresh {
		sc.fresh = false
		if sc.ext {
			sc.start, sc.p, sc.ext = skipExt(sc.buf, sc.start, sc.p, sc.end)
		}
	}
	i := sc.produced.Load()
	b := &sc.ring[i%scanRing]
	var n int
	var stamp uint64
	sc.p, sc.start, n, sc.clock, stamp, sc.ext = r.scanBlock(sc.buf, (*[256]rdnaTok)(b.toks[rdnaCarry:]), sc.p, sc.end, sc.start, 0, sc.clock, sc.ext)
	b.n, b.stamp, b.clock = n, stamp, sc.clock
	if stamp != 0 {
		sc.clock += stampClock(r.gen, stamp)
	}
	b.last = sc.p >= sc.end
	b.p, b.start, b.ext = sc.p, sc.start, sc.ext
	sc.live = !b.last
	sc.produced.Store(i + 1)
}

// next returns the front's next block: one the back scanned, or else one
// the front scans now.
func (sc *rdnaScanner) next() *scanBlock {
	i := sc.head
	for sc.produced.Load() <= i {
		if sc.r.ps.backScans {
			// Tests: wake the back, which scans while it waits.
			sc.r.ps.back.ready.signal()
			runtime.Gosched()
			continue
		}
		sc.help(1) // fails while the back scans: it is making the block
	}
	return &sc.ring[i%scanRing]
}

// release gives the front's block back to the scanner.
func (sc *rdnaScanner) release() {
	sc.head++
	sc.consumed.Store(sc.head)
}

// scanSplit is scan in a split decode: the scanner reads the tokens, the
// front (here) delivers its blocks as scan does its own.
func (r *rdna) scanSplit(fast int64) error {
	sc := r.scanner()
	base := r.bufOff * 8
	p := r.pos - base
	sc.stretch(r.buf, p, min(fast-base, p+1<<20), r.prevPos-base, r.clock, r.extSkip)
	carry := 0
	var keep [rdnaCarry]rdnaTok // the carried group
	for {
		b := sc.next()
		toks := b.toks[rdnaCarry-carry : rdnaCarry+b.n]
		copy(toks, keep[:carry])
		var err error
		if carry, err = r.deliverBlock(toks, carry); err != nil {
			sc.release()
			return err
		}
		copy(keep[:], toks[:carry])
		r.clock = b.clock
		if b.stamp != 0 {
			r.timestamp(b.stamp, false)
		}
		last, p, start, ext := b.last, b.p, b.start, b.ext
		sc.release()
		if last {
			r.q = append(r.q, keep[:carry]...)
			r.pos, r.prevPos, r.extSkip = p+base, start+base, ext
			return r.ctx.Err()
		}
	}
}
