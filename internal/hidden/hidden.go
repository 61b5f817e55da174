// Package hidden estimates, per program counter, how many of an
// instruction's cycles were hidden by work of other instruction pipes on
// the same SIMD: the hidden-latency analysis of python-layer §8 (upstream's
// analyze_hidden_latency, which is designed to match ROCprof Compute
// Viewer's own analysis). It works for every architecture; gfx11+ adds the
// vector-memory issue of the other SIMD (OtherSIMD records).
//
// In: the waves of each shader engine's records (wire.Wave), that shader
// engine's other-SIMD records, and which PCs are matrix instructions (from
// the index text, MatrixPCs). Out: per PC the hidden idle, stall and issue
// cycles (Latency), summed over every (shader engine, SIMD) scope, and on
// request per scope.
//
// # Memory
//
// A hidden window needs the whole set of busy intervals of its SIMD, which
// only the last wave of the trace completes, so the analysis cannot run in
// constant memory per wave in flight. It runs in two passes. The first,
// in AddWave, keeps no records and no intervals: the few numbers the
// analysis needs of each instruction (PC number, category, time, stall,
// duration: 8 bytes, more for rare large values) go to a spool file, in
// sections of 64 KiB per (shader engine, SIMD) scope, so each scope holds
// at most that much unwritten. The Analyzer also keeps the other-SIMD
// intervals of each shader engine, coalesced as they come, and one entry
// per distinct PC. The second pass takes one scope at a time per CPU (a
// shader engine's scopes from EndSE on, while the caller reads the next
// one; the rest in Result). It reads the scope's sections back (about 8
// bytes per instruction of the scope), builds the scope's busy intervals
// per pipe from them (16 bytes per interval, coalesced, so an unbroken run
// of busy cycles costs one interval whatever the number of instructions in
// it), the unions of the pipes (MATH, VECTOR, ALL) and their prefix sums,
// then walks the waves again. So the memory of the analysis is that of the
// scopes being walked, one per CPU, not of the whole trace: about 50 MB per
// CPU for the 100 MB benchmark trace of att-stats (8 million instructions
// in 12 scopes; a peak heap of 110-125 MiB on 2 CPUs, against 12 MiB for
// the stats alone). Close removes the spool file.
//
// The methods of an Analyzer must be called from one goroutine.
package hidden

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/attkit/attkit/internal/publish"
	"github.com/attkit/attkit/internal/wire"
)

// Latency is the hidden part of an instruction's cycles (§8.1): of its idle
// time before it, of its stall, and of its issue.
type Latency struct{ Idle, Stall, Issue int64 }

// Total returns Idle + Stall + Issue.
func (h Latency) Total() int64 { return h.Idle + h.Stall + h.Issue }

// Add adds o to h.
func (h *Latency) Add(o Latency) {
	h.Idle += o.Idle
	h.Stall += o.Stall
	h.Issue += o.Issue
}

// A Scope is one (shader engine, SIMD) pair. SE is the caller's key of the
// shader engine's records: any distinct integer per capture.
type Scope struct {
	SE   int
	SIMD uint8
}

// Pipes of §8.2.
const (
	pipeValu = iota
	pipeMatrix
	pipeVmem
	pipeScalar
	nPipes
)

// MatrixPCs returns the matrix test of §8.2 for an index: the PCs whose
// instruction text starts with v_mfma, v_smfma, v_wmma or v_swmma. A nil
// index has none.
func MatrixPCs(ix *wire.Index) func(wire.PC) bool {
	set := map[wire.PC]bool{}
	if ix != nil {
		for i := range ix.Rows {
			r := &ix.Rows[i]
			if r.Raw == nil && !r.IsLabel() && IsMatrix(r.Text) {
				set[r.PC()] = true
			}
		}
	}
	return func(pc wire.PC) bool { return set[pc] }
}

// IsMatrix reports whether an instruction text names a matrix instruction.
func IsMatrix(text string) bool {
	for _, p := range [...]string{"v_mfma", "v_smfma", "v_wmma", "v_swmma"} {
		if strings.HasPrefix(text, p) {
			return true
		}
	}
	return false
}

// Options configure an Analyzer.
type Options struct {
	// Matrix tells the matrix PCs (MatrixPCs); nil means none, as without
	// a code index upstream.
	Matrix func(wire.PC) bool
	// ByScope keeps the per-scope results too (Result.ByScope).
	ByScope bool
	// SpoolDir is where the spool file goes ("" is os.TempDir). With
	// InMemory the spool is a memory buffer instead (for small inputs).
	SpoolDir string
	InMemory bool
}

type scope struct {
	key  Scope
	segs []block   // the scope's sections of the spool, in order
	tail []byte    // the scope's waves not yet in a section
	sums []Latency // per PC id, with Options.ByScope

	// Set when the scope goes to the second pass: the other-SIMD
	// intervals of its shader engine and the matrix flags of the PC
	// numbers so far (the scope's waves use no others).
	other  []Interval
	matrix []bool
	sent   bool
}

// A block is one section of the spool: whole waves of one scope, one
// after another; at off in the spool file, or mem with Options.InMemory.
type block struct {
	off int64
	n   int
	mem []byte
}

// An Analyzer gathers the waves and other-SIMD records of a capture and
// computes the hidden latency once all are in (Result).
type Analyzer struct {
	opt     Options
	pcs     []wire.PC
	matrix  []bool
	byPC    map[wire.PC]uint32
	lastID  uint32
	scopes  []*scope
	byScope map[Scope]int
	other   map[int]*coalescer
	seOrder []int

	spool     *bufio.Writer
	file      *os.File
	closeFile func() error // closes and removes file
	spoolOff  int64        // bytes in sections so far
	window    int          // bytes of a scope's waves per spool section (tests make it small)

	ended map[int]bool // shader engines whose scopes went to the second pass

	// The second pass: queue takes scopes to the walkers, which run from
	// the first EndSE on (with more than one CPU) or from Result on.
	queue   chan *scope
	walkers []*walker
	wg      sync.WaitGroup
	cancel  atomic.Bool // Close without Result: walkers skip what is left

	err  error
	done bool
}

// New returns an empty Analyzer. Call Close when done with it.
func New(opt Options) *Analyzer {
	a := &Analyzer{opt: opt, byPC: map[wire.PC]uint32{}, byScope: map[Scope]int{}, other: map[int]*coalescer{},
		ended: map[int]bool{}, window: 64 << 10}
	return a
}

func (a *Analyzer) openSpool() error {
	if a.spool != nil || a.opt.InMemory {
		return nil
	}
	// A work file of publish's registry: gone at once from its directory
	// where the system allows it, else removed by an interrupt or, after
	// a SIGKILL, by the next run's sweep.
	f, closeFile, err := publish.WorkFile(a.opt.SpoolDir, "hidden-spool")
	if err != nil {
		return fmt.Errorf("hidden-latency spool: %w", err)
	}
	a.file, a.closeFile = f, closeFile
	a.spool = bufio.NewWriterSize(f, 256<<10)
	return nil
}

// Close stops the second pass, if Result did not run it to the end, and
// removes the spool file.
func (a *Analyzer) Close() error {
	if a.queue != nil {
		a.cancel.Store(true)
		close(a.queue)
		a.queue = nil
		a.wg.Wait()
	}
	if a.file == nil {
		return nil
	}
	err := a.closeFile()
	a.file = nil
	return err
}

func (a *Analyzer) pcID(pc wire.PC) uint32 {
	if n := a.lastID + 1; int(n) < len(a.pcs) && a.pcs[n] == pc {
		a.lastID = n
		return n
	}
	if int(a.lastID) < len(a.pcs) && a.pcs[a.lastID] == pc {
		return a.lastID
	}
	id, ok := a.byPC[pc]
	if !ok {
		id = uint32(len(a.pcs))
		a.pcs = append(a.pcs, pc)
		a.matrix = append(a.matrix, a.opt.Matrix != nil && pc != (wire.PC{}) && a.opt.Matrix(pc))
		a.byPC[pc] = id
	}
	a.lastID = id
	return id
}

func (a *Analyzer) scope(k Scope) (int, *scope) {
	i, ok := a.byScope[k]
	if !ok {
		i = len(a.scopes)
		a.scopes = append(a.scopes, &scope{key: k})
		a.byScope[k] = i
		if !slices.Contains(a.seOrder, k.SE) {
			a.seOrder = append(a.seOrder, k.SE)
		}
	}
	return i, a.scopes[i]
}

// AddWave adds a wave of the shader engine keyed se, to the scope
// (se, w.SIMD): the few numbers the analysis needs of each instruction go
// to the spool. It keeps no reference to w.
func (a *Analyzer) AddWave(se int, w *wire.Wave) error {
	if a.err != nil {
		return a.err
	}
	if a.done {
		return errors.New("hidden: AddWave after Result")
	}
	if a.ended[se] {
		a.err = fmt.Errorf("hidden: AddWave of shader engine %d after EndSE", se)
		return a.err
	}
	if a.err = a.openSpool(); a.err != nil {
		return a.err
	}
	_, sc := a.scope(Scope{SE: se, SIMD: w.SIMD})
	b := sc.tail
	if b == nil {
		b = make([]byte, 0, a.window+a.window/4)
	}
	b = binary.LittleEndian.AppendUint64(b, uint64(w.BeginTime))
	b = binary.LittleEndian.AppendUint64(b, uint64(len(w.Instructions)))
	prev := w.BeginTime
	for i := range w.Instructions {
		in := &w.Instructions[i]
		b = appendInst(b, a.pcID(in.PC), in.Category, in.Time-prev, in.Stall, in.Duration)
		prev = in.Time
	}
	// A scope's waves go to the spool in sections of their own, so the
	// second pass reads a scope's waves at once.
	sc.tail = b
	if len(b) >= a.window {
		a.err = a.writeSection(sc)
	}
	return a.err
}

// writeSection moves a scope's unwritten waves into a section.
func (a *Analyzer) writeSection(sc *scope) error {
	b := sc.tail
	if a.opt.InMemory {
		sc.segs = append(sc.segs, block{n: len(b), mem: b})
		sc.tail = nil
	} else {
		if _, err := a.spool.Write(b); err != nil {
			return fmt.Errorf("hidden-latency spool: %w", err)
		}
		sc.segs = append(sc.segs, block{off: a.spoolOff, n: len(b)})
		sc.tail = b[:0]
	}
	a.spoolOff += int64(len(b))
	return nil
}

// The spool holds, per wave, its begin time and instruction count (8
// bytes each, little-endian), then per instruction one 64-bit word: the
// category in bits 0-3, the PC number in bits 4-23, the time since the
// previous instruction (the wave's begin for the first) in bits 24-37,
// the stall in bits 38-50 and the duration in bits 51-63. An instruction
// whose numbers do not fit writes the word wideInst instead, then its
// category (1 byte), PC number (4), time since the previous (8), stall (4)
// and duration (4). Fixed fields decode at a few instructions per
// nanosecond, which varints did not (they were a third of the second
// pass).
const (
	wideInst = 15 // a category field of 15
	wideLen  = 8 + 1 + 4 + 8 + 4 + 4
)

func appendInst(b []byte, id uint32, cat wire.InstCategory, dt int64, stall uint32, dur int32) []byte {
	if cat < wideInst && id < 1<<20 && uint64(dt) < 1<<14 && stall < 1<<13 && uint32(dur) < 1<<13 {
		return binary.LittleEndian.AppendUint64(b, uint64(cat)|uint64(id)<<4|uint64(dt)<<24|uint64(stall)<<38|uint64(dur)<<51)
	}
	b = binary.LittleEndian.AppendUint64(b, wideInst)
	b = append(b, byte(cat))
	b = binary.LittleEndian.AppendUint32(b, id)
	b = binary.LittleEndian.AppendUint64(b, uint64(dt))
	b = binary.LittleEndian.AppendUint32(b, stall)
	return binary.LittleEndian.AppendUint32(b, uint32(dur))
}

// A spooled instruction, decoded.
type inst struct {
	id                  uint32
	cat                 wire.InstCategory
	clock, stall, cycle int64 // cycle: max(stall, duration)
}

// decodeWave decodes the spooled wave at the start of b into out (reused),
// checking the PC numbers against n; it returns the wave's begin time, its
// instructions and the rest of b.
func decodeWave(b []byte, out []inst, n int) (begin int64, ins []inst, rest []byte, err error) {
	if len(b) < 16 {
		return 0, nil, nil, errSpool
	}
	begin = int64(binary.LittleEndian.Uint64(b))
	count := binary.LittleEndian.Uint64(b[8:])
	b = b[16:]
	if count > uint64(len(b))/8 {
		return 0, nil, nil, errSpool
	}
	ins = slices.Grow(out[:0], int(count))[:count]
	t := begin
	for k := range ins {
		if len(b) < 8 {
			return 0, nil, nil, errSpool
		}
		x := binary.LittleEndian.Uint64(b)
		in := &ins[k]
		var stall, dur int64
		if x&15 != wideInst {
			in.id = uint32(x >> 4 & (1<<20 - 1))
			in.cat = wire.InstCategory(x & 15)
			t += int64(x >> 24 & (1<<14 - 1))
			stall, dur = int64(x>>38&(1<<13-1)), int64(x>>51)
			b = b[8:]
		} else {
			if len(b) < wideLen {
				return 0, nil, nil, errSpool
			}
			in.cat = wire.InstCategory(b[8])
			in.id = binary.LittleEndian.Uint32(b[9:])
			t += int64(binary.LittleEndian.Uint64(b[13:]))
			stall = int64(binary.LittleEndian.Uint32(b[21:]))
			dur = int64(int32(binary.LittleEndian.Uint32(b[25:])))
			b = b[wideLen:]
		}
		if int(in.id) >= n {
			return 0, nil, nil, errSpool
		}
		in.clock, in.stall, in.cycle = t, stall, max(stall, dur)
	}
	return begin, ins, b, nil
}

// AddOther adds other-SIMD records of the shader engine keyed se: each
// with positive cycles is busy vector-memory time on every SIMD of that
// shader engine (§8.2 item 1).
//
// After EndSE(se) it is an error, which AddWave and Result report.
func (a *Analyzer) AddOther(se int, recs []wire.OtherSIMD) {
	if a.ended[se] {
		if a.err == nil {
			a.err = fmt.Errorf("hidden: AddOther of shader engine %d after EndSE", se)
		}
		return
	}
	c := a.other[se]
	if c == nil {
		c = &coalescer{}
		a.other[se] = c
	}
	for i := range recs {
		if o := &recs[i]; o.Cycles > 0 {
			c.add(Span{Start: o.Time, Len: int64(o.Cycles)})
		}
	}
}

// A Result is the hidden latency of a capture: per PC summed over all
// scopes, and, with Options.ByScope, per scope. The unresolved PC (0, 0)
// is never in it; PCs whose hidden latency is zero are.
type Result struct {
	ByPC map[wire.PC]Latency
	// Scopes lists the scopes in the order of §8.2: shader-engine keys in
	// the order they first came, SIMDs ascending.
	Scopes  []Scope
	ByScope map[Scope]map[wire.PC]Latency
}

// lists are a scope's interval lists: the four pipes and the unions.
type lists struct {
	own                 [nPipes]*List
	math, vector, allOf *List
}

// EndSE tells that the shader engine keyed se gets no more waves or
// other-SIMD records. With more than one CPU, the second pass of its
// scopes starts then, on all CPUs but one, while the caller reads the
// next shader engine's records; Result does the rest. Without EndSE,
// Result does it all.
func (a *Analyzer) EndSE(se int) error {
	if a.err != nil {
		return a.err
	}
	if a.done || a.ended[se] {
		return nil
	}
	a.ended[se] = true
	if runtime.GOMAXPROCS(0) == 1 {
		return nil // Result walks every scope, on the one CPU
	}
	if a.spool != nil {
		// The walkers read the sections from the file.
		if err := a.spool.Flush(); err != nil {
			a.err = fmt.Errorf("hidden-latency spool: %w", err)
			return a.err
		}
	}
	if a.queue == nil {
		a.queue = make(chan *scope, 1024)
		a.startWalkers(runtime.GOMAXPROCS(0) - 1)
	}
	a.send(se)
	return nil
}

// send queues the scopes of the shader engine keyed se for the second
// pass, with what they need of the Analyzer.
func (a *Analyzer) send(se int) {
	var other []Interval
	if c := a.other[se]; c != nil {
		other = c.intervals()
	}
	for _, sc := range a.scopes {
		if sc.key.SE == se && !sc.sent {
			sc.other, sc.matrix, sc.sent = other, a.matrix, true
			a.queue <- sc
		}
	}
}

func (a *Analyzer) startWalkers(n int) {
	for range n {
		w := &walker{a: a}
		a.walkers = append(a.walkers, w)
		a.wg.Add(1)
		go func(q chan *scope) {
			defer a.wg.Done()
			for sc := range q {
				if w.err == nil && !a.cancel.Load() {
					w.err = w.scope(sc)
				}
			}
		}(a.queue)
	}
}

// Result computes the hidden latency of everything added. It reads the
// spool back one scope at a time per CPU, so that only those scopes'
// intervals exist at once; the Analyzer takes no more input afterwards.
func (a *Analyzer) Result() (*Result, error) {
	if a.err != nil {
		return nil, a.err
	}
	if a.done {
		return nil, errors.New("hidden: Result called twice")
	}
	a.done = true
	if a.spool != nil {
		if err := a.spool.Flush(); err != nil {
			return nil, fmt.Errorf("hidden-latency spool: %w", err)
		}
	}
	// Scopes are independent: walk them on every CPU, each walker with
	// its own sums and buffers, one scope at a time.
	if a.queue == nil {
		a.queue = make(chan *scope, 1024)
	}
	if n := min(runtime.GOMAXPROCS(0), len(a.scopes)) - len(a.walkers); n > 0 || len(a.walkers) == 0 {
		a.startWalkers(max(n, 1))
	}
	for _, se := range a.seOrder {
		a.send(se)
	}
	close(a.queue)
	a.queue = nil
	a.wg.Wait()
	sums := make([]Latency, len(a.pcs))
	for _, w := range a.walkers {
		if w.err != nil {
			return nil, w.err
		}
		for id := range w.sums {
			sums[id].Add(w.sums[id])
		}
	}
	// Every PC number is of an instruction of a wave, and every wave was
	// walked.
	res := &Result{ByPC: map[wire.PC]Latency{}}
	for id, pc := range a.pcs {
		if pc != (wire.PC{}) {
			res.ByPC[pc] = sums[id]
		}
	}
	for _, sc := range a.scopes {
		res.Scopes = append(res.Scopes, sc.key)
	}
	slices.SortStableFunc(res.Scopes, func(x, y Scope) int {
		if x.SE != y.SE {
			return slices.Index(a.seOrder, x.SE) - slices.Index(a.seOrder, y.SE)
		}
		return int(x.SIMD) - int(y.SIMD)
	})
	if a.opt.ByScope {
		res.ByScope = map[Scope]map[wire.PC]Latency{}
		for _, sc := range a.scopes {
			m := map[wire.PC]Latency{}
			for id, h := range sc.sums {
				if pc := a.pcs[id]; h != (Latency{}) && pc != (wire.PC{}) {
					m[pc] = h
				}
			}
			res.ByScope[sc.key] = m
		}
	}
	return res, nil
}

var errSpool = errors.New("hidden-latency spool: corrupt block")

// A walker does the second pass, one scope at a time: it reads the
// scope's spooled waves, builds the scope's intervals from them, then
// walks them again. Its buffers serve scope after scope.
type walker struct {
	a    *Analyzer
	sums []Latency
	err  error

	buf   []byte            // the scope's sections read from the spool file
	parts [][]byte          // the scope's spooled waves, section by section
	span  [nPipes][]Span    // one wave's spans per pipe
	pipes [nPipes]coalescer // the scope's intervals per pipe
	spare []Interval        // the pipes' sort buffer
	ins   []inst            // one wave's instructions
	union [3][]Interval     // the storage of MATH, VECTOR, ALL
	lists [nPipes + 3]List  // the pipes', then the unions'
}

// scope computes the hidden latency of a scope (§8.2), other being the
// other-SIMD intervals of its shader engine.
func (w *walker) scope(sc *scope) error {
	if err := w.read(sc); err != nil {
		return err
	}
	var iv [nPipes][]Interval
	for p := range w.pipes {
		w.pipes[p].reset()
	}
	for _, b := range w.parts {
		if err := w.busy(b, sc.matrix); err != nil {
			return err
		}
	}
	w.pipes[pipeVmem].addIntervals(sc.other)
	var l lists
	for p := range w.pipes {
		// The pipes' sorts take turns with one spare buffer.
		w.pipes[p].tmp, w.spare = w.spare, nil
		iv[p] = w.pipes[p].intervals()
		w.spare, w.pipes[p].tmp = w.pipes[p].tmp, nil
		w.lists[p].reset(iv[p])
		l.own[p] = &w.lists[p]
	}
	var math, vector, all []Interval
	math, w.union[0] = unionTo(w.union[0], iv[pipeValu], iv[pipeMatrix])
	vector, w.union[1] = unionTo(w.union[1], math, iv[pipeVmem])
	all, w.union[2] = unionTo(w.union[2], vector, iv[pipeScalar])
	for i, u := range [...][]Interval{math, vector, all} {
		w.lists[nPipes+i].reset(u)
	}
	l.math, l.vector, l.allOf = &w.lists[nPipes], &w.lists[nPipes+1], &w.lists[nPipes+2]
	if n := len(sc.matrix); len(w.sums) < n {
		w.sums = append(w.sums, make([]Latency, n-len(w.sums))...)
	}
	if w.a.opt.ByScope {
		sc.sums = make([]Latency, len(sc.matrix))
	}
	for _, b := range w.parts {
		for len(b) > 0 {
			var begin int64
			var err error
			if begin, w.ins, b, err = decodeWave(b, w.ins, len(sc.matrix)); err != nil {
				return err
			}
			w.walk(begin, w.ins, sc.matrix, &l, sc.sums)
		}
	}
	sc.segs, sc.tail, sc.other, sc.matrix, w.parts = nil, nil, nil, nil, w.parts[:0]
	return nil
}

// read gathers a scope's spooled waves in w.parts: one read of all its
// sections from the spool file (or the sections in memory), then the
// unwritten tail.
func (w *walker) read(sc *scope) error {
	w.parts = w.parts[:0]
	if w.a.opt.InMemory {
		for _, s := range sc.segs {
			w.parts = append(w.parts, s.mem)
		}
	} else if len(sc.segs) > 0 {
		total := 0
		for _, s := range sc.segs {
			total += s.n
		}
		if cap(w.buf) < total {
			w.buf = make([]byte, total)
		}
		w.buf = w.buf[:0]
		for _, s := range sc.segs {
			b := w.buf[len(w.buf) : len(w.buf)+s.n]
			n, err := w.a.file.ReadAt(b, s.off)
			if n < s.n {
				if err == nil || err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				return fmt.Errorf("hidden-latency spool: %w", err)
			}
			w.buf = w.buf[:len(w.buf)+s.n]
		}
		w.parts = append(w.parts, w.buf)
	}
	w.parts = append(w.parts, sc.tail)
	return nil
}

// busy adds the busy intervals of the spooled waves of b to w.pipes (§8.2
// item 1): each instruction's issue window goes to its pipe, a matrix
// instruction's also to VALU for three quarters of its cycles. Coalescing
// each wave's spans first is exact (coalescing is compositional, see
// coalescer) and leaves few intervals to sort.
func (w *walker) busy(b []byte, matrix []bool) error {
	for len(b) > 0 {
		var err error
		if _, w.ins, b, err = decodeWave(b, w.ins, len(matrix)); err != nil {
			return err
		}
		for p := range w.span {
			w.span[p] = w.span[p][:0]
		}
		for _, in := range w.ins {
			s := Span{Start: in.clock + in.stall, Len: in.cycle - in.stall}
			switch cat := in.cat; {
			case matrix[in.id]:
				w.span[pipeMatrix] = append(w.span[pipeMatrix], s)
				w.span[pipeValu] = append(w.span[pipeValu], Span{Start: s.Start, Len: 3 * s.Len / 4})
			case cat == wire.CatVALU:
				w.span[pipeValu] = append(w.span[pipeValu], s)
			case cat == wire.CatVMEM || cat == wire.CatFLAT || cat == wire.CatLDS:
				w.span[pipeVmem] = append(w.span[pipeVmem], s)
			case cat == wire.CatSMEM || cat == wire.CatSALU:
				w.span[pipeScalar] = append(w.span[pipeScalar], s)
			}
		}
		for p := range w.span {
			w.pipes[p].ivs = coalesceTo(w.pipes[p].ivs, w.span[p])
		}
	}
	return nil
}

// walk computes the hidden latency of the instructions of one wave
// (§8.2 item 6).
func (w *walker) walk(begin int64, ins []inst, matrix []bool, l *lists, scopeSums []Latency) {
	last := begin
	for _, in := range ins {
		id, cat := in.id, in.cat
		clock, stall, cycles := in.clock, in.stall, in.cycle
		var h Latency
		switch {
		case matrix[id]:
			v := ownWindow(l.own[pipeValu], last, clock, stall)
			m := ownWindow(l.own[pipeMatrix], last, clock, stall)
			if v.Total() > m.Total() {
				h = v
			} else {
				h = m
			}
		case cat == wire.CatVALU:
			o := ownWindow(l.own[pipeValu], last, clock, stall)
			m := Window(l.own[pipeMatrix], last, clock, stall, cycles)
			if o.Total() > m.Total() {
				h = o
			} else {
				h = m
			}
		case cat == wire.CatVMEM || cat == wire.CatFLAT || cat == wire.CatLDS:
			o := ownWindow(l.own[pipeVmem], last, clock, stall)
			m := Window(l.math, last, clock, stall, cycles)
			if m.Total() > o.Total() {
				h = m
			} else {
				h = o
			}
		case cat == wire.CatSMEM || cat == wire.CatSALU:
			o := ownWindow(l.own[pipeScalar], last, clock, stall)
			v := Window(l.vector, last, clock, stall, cycles)
			if v.Total() > o.Total() {
				h = v
			} else {
				h = o
			}
		default:
			h = Window(l.allOf, last, clock, stall, cycles)
		}
		w.sums[id].Add(h)
		if scopeSums != nil {
			scopeSums[id].Add(h)
		}
		last = clock + cycles
	}
}

// A Capture is the records of one shader engine that the analysis reads.
type Capture struct {
	Waves []wire.Wave
	Other []wire.OtherSIMD
}

// Analyze is analyze_hidden_latency (§8.1) on records held in memory: the
// shader engines keyed by their position in ses, with the per-scope
// results.
func Analyze(ses []Capture, matrix func(wire.PC) bool) (*Result, error) {
	a := New(Options{Matrix: matrix, ByScope: true, InMemory: true})
	defer a.Close()
	for se := range ses {
		a.AddOther(se, ses[se].Other)
		for i := range ses[se].Waves {
			if err := a.AddWave(se, &ses[se].Waves[i]); err != nil {
				return nil, err
			}
		}
		if err := a.EndSE(se); err != nil {
			return nil, err
		}
	}
	return a.Result()
}
