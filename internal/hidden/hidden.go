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
// constant memory per wave in flight. An Analyzer keeps, per (shader
// engine, SIMD) scope and pipe, the coalesced busy intervals (coalesced as
// they come, so an unbroken run of busy cycles costs one interval whatever
// the number of instructions in it), the other-SIMD intervals of each
// shader engine, and one entry per distinct PC. It does not keep records:
// the few numbers the second pass needs of each instruction (PC number,
// category, time, stall, duration: 5 to 10 bytes) go to a spool file, in
// sections of 64 KiB per scope (so each scope holds at most that much
// unwritten), read back once, section by section, when the intervals are
// complete, and removed by Close. The
// second pass takes one scope at a time per CPU, so the unions of the
// pipes' intervals (MATH, VECTOR, ALL, with their prefix sums) exist for
// those scopes only. Each interval costs 16 bytes and each prefix sum 8;
// when nothing overlaps, that is about 16 bytes per traced instruction in
// the first pass (the 100 MB benchmark trace of att-stats: 8 million
// instructions, about 200 MB of heap at the peak).
//
// With more than one CPU, an Analyzer does the first pass's work in a
// goroutine of its own while its caller reads the next records, and the
// second pass on every CPU. Its methods must be called from one goroutine.
package hidden

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"

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
	key   Scope
	pipes [nPipes]coalescer
	segs  []block   // the scope's sections of the spool, in order
	tail  []byte    // the scope's waves not yet in the spool
	sums  []Latency // per PC id, with Options.ByScope
}

// A block is one section of the spool: whole waves of one scope, one
// after another.
type block struct {
	off int64
	n   int
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

	spool    *bufio.Writer
	file     *os.File
	mem      *bytes.Buffer
	spoolOff int64
	window   int // bytes of a scope's waves per spool section (tests make it small)
	waveSpan [nPipes][]Span
	waveIv   []Interval

	// The worker goroutine (AddWave) and its chunks; workErr is the
	// worker's until workDone is closed.
	work     chan *chunk
	free     chan *chunk
	cur      *chunk
	workDone chan struct{}
	workErr  error
	err      error
	done     bool
}

// New returns an empty Analyzer. Call Close when done with it.
func New(opt Options) *Analyzer {
	a := &Analyzer{opt: opt, byPC: map[wire.PC]uint32{}, byScope: map[Scope]int{}, other: map[int]*coalescer{}, window: 64 << 10}
	return a
}

func (a *Analyzer) openSpool() error {
	if a.spool != nil {
		return nil
	}
	if a.opt.InMemory {
		a.mem = &bytes.Buffer{}
		a.spool = bufio.NewWriterSize(a.mem, 64<<10)
		return nil
	}
	f, err := os.CreateTemp(a.opt.SpoolDir, "attkit-hidden-*.spool")
	if err != nil {
		return fmt.Errorf("hidden-latency spool: %w", err)
	}
	a.file = f
	a.spool = bufio.NewWriterSize(f, 256<<10)
	return nil
}

// Close stops the worker and removes the spool file.
func (a *Analyzer) Close() error {
	a.stopWorker()
	if a.file == nil {
		return nil
	}
	name := a.file.Name()
	err := a.file.Close()
	a.file = nil
	return errors.Join(err, os.Remove(name))
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

// AddWave adds a wave of the shader engine keyed se: its busy intervals to
// the scope (se, w.SIMD), its instructions to the spool. It keeps no
// reference to w.
//
// With more than one CPU the work is done by a goroutine of the Analyzer
// while the caller reads on: AddWave copies the instructions into a
// chunk and hands full chunks over.
func (a *Analyzer) AddWave(se int, w *wire.Wave) error {
	if a.err != nil {
		return a.err
	}
	if a.done {
		return errors.New("hidden: AddWave after Result")
	}
	if runtime.GOMAXPROCS(0) == 1 {
		a.err = a.addWave(se, w.SIMD, w.BeginTime, w.Instructions)
		return a.err
	}
	if a.work == nil {
		a.startWorker()
	}
	c := a.cur
	lo := len(c.insts)
	c.insts = append(c.insts, w.Instructions...)
	c.waves = append(c.waves, waveRef{se: se, simd: w.SIMD, begin: w.BeginTime, lo: lo, hi: len(c.insts)})
	if len(c.insts) >= 1<<16 {
		a.work <- c
		a.cur = <-a.free
		a.cur.insts, a.cur.waves = a.cur.insts[:0], a.cur.waves[:0]
	}
	return nil
}

// A chunk carries waves to the worker goroutine.
type chunk struct {
	waves []waveRef
	insts []wire.Instruction
}

type waveRef struct {
	se     int
	simd   uint8
	begin  int64
	lo, hi int
}

func (a *Analyzer) startWorker() {
	a.work = make(chan *chunk, 2)
	a.free = make(chan *chunk, 3)
	a.free <- &chunk{}
	a.free <- &chunk{}
	a.cur = &chunk{}
	a.workDone = make(chan struct{})
	go func() {
		defer close(a.workDone)
		for c := range a.work {
			for _, w := range c.waves {
				if a.workErr == nil {
					a.workErr = a.addWave(w.se, w.simd, w.begin, c.insts[w.lo:w.hi])
				}
			}
			a.free <- c
		}
	}()
}

// stopWorker hands the last chunk over and waits for the worker.
func (a *Analyzer) stopWorker() error {
	if a.work == nil {
		return nil
	}
	a.work <- a.cur
	close(a.work)
	<-a.workDone
	a.work = nil
	return a.workErr
}

func (a *Analyzer) addWave(se int, simd uint8, begin int64, insts []wire.Instruction) error {
	if err := a.openSpool(); err != nil {
		return err
	}
	_, sc := a.scope(Scope{SE: se, SIMD: simd})
	for p := range a.waveSpan {
		a.waveSpan[p] = a.waveSpan[p][:0]
	}
	b := sc.tail
	b = binary.AppendVarint(b, begin)
	b = binary.AppendUvarint(b, uint64(len(insts)))
	prev := begin
	for i := range insts {
		in := &insts[i]
		id := a.pcID(in.PC)
		stall := int64(in.Stall)
		cycles := max(stall, int64(in.Duration))
		b = binary.AppendUvarint(b, uint64(id))
		b = append(b, byte(in.Category))
		b = binary.AppendVarint(b, in.Time-prev)
		b = binary.AppendUvarint(b, uint64(in.Stall))
		b = binary.AppendVarint(b, int64(in.Duration))
		prev = in.Time
		s := Span{Start: in.Time + stall, Len: cycles - stall}
		switch {
		case a.matrix[id]:
			a.waveSpan[pipeMatrix] = append(a.waveSpan[pipeMatrix], s)
			a.waveSpan[pipeValu] = append(a.waveSpan[pipeValu], Span{Start: s.Start, Len: 3 * s.Len / 4})
		case in.Category == wire.CatVALU:
			a.waveSpan[pipeValu] = append(a.waveSpan[pipeValu], s)
		case in.Category == wire.CatVMEM || in.Category == wire.CatFLAT || in.Category == wire.CatLDS:
			a.waveSpan[pipeVmem] = append(a.waveSpan[pipeVmem], s)
		case in.Category == wire.CatSMEM || in.Category == wire.CatSALU:
			a.waveSpan[pipeScalar] = append(a.waveSpan[pipeScalar], s)
		}
	}
	// Coalescing the wave's spans first is exact (coalescing is
	// compositional, see coalescer) and leaves few intervals to merge.
	for p := range a.waveSpan {
		a.waveIv = coalesceTo(a.waveIv[:0], a.waveSpan[p])
		for _, iv := range a.waveIv {
			sc.pipes[p].add(Span{Start: iv.Start(), Len: iv.Len})
		}
	}
	// A scope's waves go to the spool in sections of their own, so the
	// second pass reads the spool once, a section at a time.
	sc.tail = b
	if len(b) >= a.window {
		if _, err := a.spool.Write(b); err != nil {
			return fmt.Errorf("hidden-latency spool: %w", err)
		}
		sc.segs = append(sc.segs, block{a.spoolOff, len(b)})
		a.spoolOff += int64(len(b))
		sc.tail = b[:0]
	}
	return nil
}

// AddOther adds other-SIMD records of the shader engine keyed se: each
// with positive cycles is busy vector-memory time on every SIMD of that
// shader engine (§8.2 item 1).
func (a *Analyzer) AddOther(se int, recs []wire.OtherSIMD) {
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

// Result computes the hidden latency of everything added. It reads the
// spool back one scope at a time, so that only one scope's unions exist
// at once; the Analyzer takes no more input afterwards.
func (a *Analyzer) Result() (*Result, error) {
	if a.err != nil {
		return nil, a.err
	}
	if a.done {
		return nil, errors.New("hidden: Result called twice")
	}
	a.done = true
	if a.err = a.stopWorker(); a.err != nil {
		return nil, a.err
	}
	if a.spool != nil {
		if err := a.spool.Flush(); err != nil {
			return nil, fmt.Errorf("hidden-latency spool: %w", err)
		}
	}
	// Scopes are independent: walk them on every CPU, each worker with
	// its own sums, one scope's unions per worker at a time.
	workers := max(1, min(runtime.GOMAXPROCS(0), len(a.scopes)))
	type part struct {
		sums    []Latency
		touched []bool
		err     error
	}
	parts := make([]part, workers)
	next := make(chan *scope)
	var wg sync.WaitGroup
	for w := range parts {
		p := &parts[w]
		p.sums, p.touched = make([]Latency, len(a.pcs)), make([]bool, len(a.pcs))
		wg.Add(1)
		go func() {
			defer wg.Done()
			rd := spoolReader{a: a}
			for sc := range next {
				if p.err == nil {
					p.err = a.walkScope(sc, &rd, p.sums, p.touched)
				}
			}
		}()
	}
	for _, sc := range a.scopes {
		if o := a.other[sc.key.SE]; o != nil {
			sc.pipes[pipeVmem].addAll(o)
		}
		next <- sc
	}
	close(next)
	wg.Wait()
	sums, touched := parts[0].sums, parts[0].touched
	for _, p := range parts {
		if p.err != nil {
			return nil, p.err
		}
	}
	for _, p := range parts[1:] {
		for id := range sums {
			sums[id].Add(p.sums[id])
			touched[id] = touched[id] || p.touched[id]
		}
	}
	res := &Result{ByPC: map[wire.PC]Latency{}}
	for id, pc := range a.pcs {
		if touched[id] && pc != (wire.PC{}) {
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
			for id, pc := range a.pcs {
				if sc.sums[id] != (Latency{}) && pc != (wire.PC{}) {
					m[pc] = sc.sums[id]
				}
			}
			res.ByScope[sc.key] = m
		}
	}
	return res, nil
}

// walkScope builds a scope's interval lists and walks its waves.
func (a *Analyzer) walkScope(sc *scope, rd *spoolReader, sums []Latency, touched []bool) error {
	var l lists
	var iv [nPipes][]Interval
	for p := range sc.pipes {
		iv[p] = sc.pipes[p].intervals()
		sc.pipes[p] = coalescer{}
		l.own[p] = NewList(iv[p])
	}
	math := Union(iv[pipeValu], iv[pipeMatrix])
	vector := Union(math, iv[pipeVmem])
	l.math = NewList(math)
	l.vector = NewList(vector)
	l.allOf = NewList(Union(vector, iv[pipeScalar]))
	if a.opt.ByScope {
		sc.sums = make([]Latency, len(a.pcs))
	}
	for _, seg := range sc.segs {
		b, err := rd.read(seg)
		if err != nil {
			return err
		}
		if err := a.walkAll(b, &l, sums, sc.sums, touched); err != nil {
			return err
		}
	}
	err := a.walkAll(sc.tail, &l, sums, sc.sums, touched)
	sc.segs, sc.tail = nil, nil
	return err
}

// walkAll walks the spooled waves of b, one after another.
func (a *Analyzer) walkAll(b []byte, l *lists, sums, scopeSums []Latency, touched []bool) error {
	d := dec{b: b}
	for len(d.b) > 0 {
		if err := a.walk(&d, l, sums, scopeSums, touched); err != nil {
			return err
		}
	}
	return nil
}

var errSpool = errors.New("hidden-latency spool: corrupt block")

// spoolReader reads sections of the spool back.
type spoolReader struct {
	a   *Analyzer
	buf []byte
}

func (r *spoolReader) read(b block) ([]byte, error) {
	if r.a.mem != nil {
		m := r.a.mem.Bytes()
		if b.off+int64(b.n) > int64(len(m)) {
			return nil, errSpool
		}
		return m[b.off : b.off+int64(b.n)], nil
	}
	if cap(r.buf) < b.n {
		r.buf = make([]byte, b.n)
	}
	r.buf = r.buf[:b.n]
	n, err := r.a.file.ReadAt(r.buf, b.off)
	if n < b.n {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("hidden-latency spool: %w", err)
	}
	return r.buf, nil
}

// walk computes the spooled wave at the start of d (§8.2 item 6) and
// consumes it.
func (a *Analyzer) walk(d *dec, l *lists, sums, scopeSums []Latency, touched []bool) error {
	begin := d.varint()
	n := d.uvarint()
	if d.bad {
		return errSpool
	}
	last := begin
	t := begin
	for range n {
		id := d.uvarint()
		cat := wire.InstCategory(d.byte())
		t += d.varint()
		stall := int64(d.uvarint())
		dur := d.varint()
		if d.bad || id >= uint64(len(a.pcs)) {
			return errSpool
		}
		clock := t
		cycles := max(stall, dur)
		var h Latency
		switch {
		case a.matrix[id]:
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
		sums[id].Add(h)
		touched[id] = true
		if scopeSums != nil {
			scopeSums[id].Add(h)
		}
		last = clock + cycles
	}
	if d.bad {
		return errSpool
	}
	return nil
}

// dec decodes a spool block.
type dec struct {
	b   []byte
	bad bool
}

func (d *dec) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.bad = true
		d.b = nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.bad = true
		d.b = nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) byte() byte {
	if len(d.b) == 0 {
		d.bad = true
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
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
	}
	return a.Result()
}
