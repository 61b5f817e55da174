package sqtt

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/attkit/attkit/internal/backend"
	"github.com/attkit/attkit/internal/exitcode"
	"github.com/attkit/attkit/internal/isa"
	"github.com/attkit/attkit/internal/version"
	"github.com/attkit/attkit/internal/wire"
)

// Version is the native decoder's version as recorded in stream headers'
// backend_version: "attkit-native" and the attkit version (module version
// and VCS revision) it was built from. Which library revision its records
// follow is the compat mode's, not this string's; see the package comment.
func Version() string { return "attkit-native " + version.Module() }

// DefaultPoolLimit is the default of Decoder.PoolLimit: the size of the
// batches the library itself delivers early in double-buffered captures.
// The library pools a whole buffer's occupancy otherwise; holding 2^16
// records at most keeps memory independent of the trace length.
const DefaultPoolLimit = 1 << 16

// Decoder is the native decoder. The zero value is ready to use; a Decoder
// holds no state between calls to Decode and may be used by several
// goroutines at once.
type Decoder struct {
	// PoolLimit bounds the occupancy, perf-counter and realtime records
	// pooled until the end of a buffer; 0 means DefaultPoolLimit, a
	// negative value no limit (the library's batching, with memory that
	// grows with the trace). Shader data is flushed every 65536 records as
	// the library does.
	PoolLimit int
	// Compat Lib016 makes the records those of AMD's 0.1.6 library (the
	// build ROCm 7.x ships) instead of the newest behaviour (Newest): the
	// differences of sqtt-format.md A.3 and §4.6 (no EVENT or DISPATCH
	// records, no wave or occupancy fields beyond the 0.1.6 layout, no
	// RT_TIMESTAMP_LO32; gfx9 waves end at the WAVE_END time with an IDLE
	// last segment, OTHER_MSG is dropped unless a wave ends with it; RDNA
	// waves are emitted at their WAVE_END) and those observed with that
	// library: a dropped OTHER_MSG keeps its place (and time) until the
	// wave is emitted, waves finished at a WAVE_END are not attributed
	// late, unresolved placeholders read NONE, shader data comes in
	// batches of 65537. The real traces of ../shared/real decode to the
	// library's records exactly with it (real_test.go). Each difference is
	// a named rule of compat.go's table (rules), citing its spec item.
	Compat Compat
	// Ended, when not nil, is called once a Decode has read the whole
	// trace without an error, with how the trace ended: its length,
	// whether it ends inside a token, how many waves were still running
	// (sqtt-format.md 1.7). Set it on a Decoder of one Decode at a time.
	Ended func(Ending)
	// Split decodes on two goroutines: the front reads the tokens and
	// keeps the waves' state, the back stitches each finished wave,
	// builds the records and calls emit (split.go), so that a decode
	// keeps two cores busy. The records and their order are the same as
	// without it; emit is called on the back's goroutine, one call at a
	// time.
	Split bool
	// SplitChunk and SplitBig bound a split decode's memory (0: the
	// defaults): the front hands its items over in chunks of SplitChunk
	// elements, 4 at most in flight, and a batch larger than SplitBig
	// without a copy, waiting until the back emitted it (a negative
	// SplitBig: every batch). Tests make them small.
	SplitChunk, SplitBig int

	// noScan, for tests, takes every token through the readers' general
	// path: the RDNA reader's read and deliver instead of scan and
	// deliverBlock, gfx9's read and deliver instead of buffered (whose
	// ISSUE and INST cases are issue and inst inlined by hand).
	noScan bool
	// backScans, for tests, has a split RDNA decode's back do all the
	// token scan (rdnaScanner): the front waits for each block instead of
	// scanning it itself.
	backScans bool
}

// New returns a native decoder.
func New() *Decoder { return &Decoder{} }

// Name implements backend.Decoder: "native".
func (d *Decoder) Name() string { return "native" }

// Version implements backend.Decoder.
func (d *Decoder) Version() string { return Version() }

var _ backend.Decoder = (*Decoder)(nil)

// Arch is the architecture a trace header announces.
type Arch struct {
	GFXIP    int    // GFXIP major the decoder reports: 9, 10, 11, 12 (12 for MI400 too); 0 unknown
	Name     string // "gfx9, header version 5", "gfx11 (RDNA3)", "MI400 (gfx12.5)", ...
	Version2 int    // gfx9 software header version2 (4, 5, 6); RDNA header version
}

// Supported reports whether the native decoder decodes this architecture:
// gfx9 and the RDNA generations gfx10, gfx11 and gfx12 (not MI400).
func (a Arch) Supported() bool { return a.GFXIP == 9 || a.GFXIP >= 10 && a.Version2 <= 4 }

// An ArchError reports a trace the native decoder does not decode: not a
// trace at all, an unknown architecture, or one it does not support yet.
// Its exit code is 3.
type ArchError struct {
	Arch   Arch
	Header uint64 // the first 8 bytes, little-endian
	Msg    string
}

func (e *ArchError) Error() string { return e.Msg }

// ExitCode implements exitcode.Coder.
func (e *ArchError) ExitCode() int { return exitcode.Format }

// A DataError reports malformed trace data (the library's
// INVALID_SHADER_DATA status) at a byte offset of the file. Its exit code
// is 1.
type DataError struct {
	Offset int64
	Msg    string
}

func (e *DataError) Error() string {
	return fmt.Sprintf("invalid shader data at byte %d: %s", e.Offset, e.Msg)
}

// ExitCode implements exitcode.Coder.
func (e *DataError) ExitCode() int { return exitcode.Failed }

// Decode implements backend.Decoder: it decodes the trace read from r,
// asking p for instruction text (p may be nil: no instruction then gets a
// PC), and calls emit for every batch in the library's callback order. The
// batch passed to emit is reused: emit must copy what it keeps. An empty
// input decodes to nothing, as the library does for a buffer of size 0.
func (d *Decoder) Decode(ctx context.Context, r io.Reader, p isa.Provider, emit backend.Emit) error {
	return d.decode(ctx, r, p, emit, d.Compat.rules())
}

// decode is Decode following rs, the rules of the records it gives.
func (d *Decoder) decode(ctx context.Context, r io.Reader, p isa.Provider, emit backend.Emit, rs rules) error {
	var cr *byteCounter
	if d.Ended != nil {
		cr = &byteCounter{r: r}
		r = cr
	}
	br := bufio.NewReaderSize(r, 256<<10)
	head, err := br.Peek(8)
	if len(head) == 0 && errors.Is(err, io.EOF) {
		if d.Ended != nil {
			d.Ended(Ending{})
		}
		return nil
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	arch, err := Detect(head)
	if err != nil {
		return err
	}
	h := binary.LittleEndian.Uint64(head)
	if !arch.Supported() {
		return unsupported(arch, h)
	}
	ps := &parseState{
		em:        emitter{emit: emit},
		cache:     newISACache(p, arch.GFXIP),
		limit:     d.PoolLimit,
		rules:     rs,
		noScan:    d.noScan,
		backScans: d.backScans,
	}
	ps.em.rules = ps.rules
	ps.cache.classify016 = ps.rules.classify016
	switch {
	case ps.limit == 0:
		ps.limit = DefaultPoolLimit
	case ps.limit < 0:
		ps.limit = math.MaxInt
	}
	var bk *back
	if d.Split {
		bk = startBack(ps, emit, d.SplitChunk, d.SplitBig)
	}
	if arch.GFXIP != 9 {
		err = newRDNA(ctx, ps, br, arch).run() // the HEADER token is part of the stream
	} else {
		br.Discard(8)
		err = newGFX9(ctx, ps, br, h).run()
	}
	if bk != nil {
		if berr := bk.finish(); berr != nil {
			err = berr
		}
		ps.em.watch = bk.ps.em.watch
	}
	if err == nil && d.Ended != nil {
		d.Ended(Ending{Bytes: cr.n, InToken: ps.cutBits > 0, MissingBits: ps.cutBits, OpenWaves: ps.em.watch.Open()})
	}
	return err
}

// byteCounter counts the bytes read through it.
type byteCounter struct {
	r io.Reader
	n int64
}

func (c *byteCounter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// parseState is what one parse call shares across its buffers (5.1): the
// instruction cache, GFXIP and the once-only records.
type parseState struct {
	em             emitter
	cache          *isaCache
	limit          int
	sentGFXIP      bool
	sentIncomplete bool // INFO WAVE_INCOMPLETE
	sentStitch     bool // INFO STITCH_INCOMPLETE
	sentRTFreq     bool
	rules          rules // Decoder.Compat's rules
	cutBits        int   // bits of the last token beyond the end of the buffer (1.7)
	// back, in a split decode (Decoder.Split), stitches and emits what
	// this parseState, the front, finished.
	back      *back
	noScan    bool // Decoder.noScan
	backScans bool // Decoder.backScans
}

// gfxipOnce delivers the GFXIP record, once per parse call.
func (ps *parseState) gfxipOnce(v int) error {
	if ps.sentGFXIP {
		return nil
	}
	ps.sentGFXIP = true
	return ps.em.gfxip(v)
}

// lostAndFreq delivers what closes a buffer's records on every
// generation: INFO DATA_LOST when a packet was lost, and the realtime
// frequency once per parse call when the trace announced one.
func (ps *parseState) lostAndFreq(packetLost bool, rtFreq uint64) error {
	if packetLost {
		if err := ps.em.infoRec(wire.InfoDataLost); err != nil {
			return err
		}
	}
	if rtFreq != 0 && !ps.sentRTFreq {
		ps.sentRTFreq = true
		return ps.em.rtFrequency(rtFreq)
	}
	return nil
}

// emitter delivers records through the Emit callback, one wire.Batch per
// library callback, reusing the batch.
type emitter struct {
	emit  backend.Emit
	b     wire.Batch
	wave  [1]wire.Wave
	event [1]wire.Event
	disp  [1]wire.Dispatch
	info  [1]wire.Info
	err   error
	rules rules    // the Compat's record rules (§4.6)
	watch EndWatch // waves still running (Decoder.Ended)
	split bool     // the front of a split decode: the back keeps watch
	// own, in a split decode, hands occupancy records over without a
	// copy and returns an array for the next (back.occupancy).
	own func([]wire.Occupancy) ([]wire.Occupancy, error)
}

// batch delivers b, a batch of n records; an empty one is not delivered.
func (e *emitter) batch(n int, b wire.Batch) error {
	if n == 0 {
		return e.err
	}
	e.b = b
	return e.send()
}

func (e *emitter) send() error {
	if e.err != nil {
		return e.err
	}
	e.err = e.emit(&e.b)
	return e.err
}

func (e *emitter) gfxip(v int) error {
	e.b = wire.Batch{Type: wire.TypeGFXIP, GFXIP: uint64(v)}
	return e.send()
}

func (e *emitter) rtFrequency(hz uint64) error {
	e.b = wire.Batch{Type: wire.TypeRTFrequency, RTFrequency: hz}
	return e.send()
}

func (e *emitter) infoRec(v wire.Info) error {
	e.info[0] = v
	e.b = wire.Batch{Type: wire.TypeInfo, Info: e.info[:]}
	return e.send()
}

func (e *emitter) eventRec(typ wire.EventType, t int64, me, pipe uint8, flags uint16, payload uint64) error {
	if e.rules.noEventRecords {
		return e.err
	}
	e.event[0] = wire.Event{Size: 40, Time: t, Type: typ, MEID: me, PipeID: pipe, Flags: flags, Payload: payload}
	e.b = wire.Batch{Type: wire.TypeEvent, Events: e.event[:]}
	return e.send()
}

func (e *emitter) dispatchRec(d wire.Dispatch) error {
	if e.rules.noDispatchRecords {
		return e.err
	}
	d.Size = 80
	e.disp[0] = d
	e.b = wire.Batch{Type: wire.TypeDispatch, Dispatches: e.disp[:]}
	return e.send()
}

func (e *emitter) waveRec(w wire.Wave) error {
	if e.rules.waveLayout016 {
		w.Dispatcher, w.WorkgroupID, w.ClusterID, w.Size = 0, 0, 0, 0
	}
	e.wave[0] = w
	e.b = wire.Batch{Type: wire.TypeWave, Waves: e.wave[:]}
	return e.send()
}

func (e *emitter) occupancy(o []wire.Occupancy) error {
	if !e.split {
		e.watch.occupancy(o) // else the back does (back.do)
	}
	e.layout016(o)
	return e.batch(len(o), wire.Batch{Type: wire.TypeOccupancy, Occupancy: o})
}

// layout016 clears what 0.1.6's occupancy layout lacks, under its rule.
func (e *emitter) layout016(o []wire.Occupancy) {
	if e.rules.occupancyLayout016 {
		for i := range o {
			o[i].SetWord(o[i].Word() & 1)
		}
	}
}

// ownOccupancy is occupancy in a split decode for the pool's own records
// (not empty): it hands o over without a copy and returns an empty array
// for the pool's next records.
func (e *emitter) ownOccupancy(o []wire.Occupancy) ([]wire.Occupancy, error) {
	if e.err != nil {
		return o[:0], e.err
	}
	e.layout016(o)
	next, err := e.own(o)
	e.err = err
	return next[:0], err
}

func (e *emitter) perf(p []wire.PerfEvent) error {
	return e.batch(len(p), wire.Batch{Type: wire.TypePerfEvent, PerfEvents: p})
}

func (e *emitter) shaderData(s []wire.ShaderData) error {
	return e.batch(len(s), wire.Batch{Type: wire.TypeShaderData, ShaderData: s})
}

func (e *emitter) realtime(r []wire.Realtime) error {
	return e.batch(len(r), wire.Batch{Type: wire.TypeRealtime, Realtime: r})
}

// occPool holds the occupancy records pending until a flush, as both the
// gfx9 and the RDNA decoders pool them.
type occPool struct {
	occ      []wire.Occupancy
	occFront []wire.Occupancy // synthetic starts, to go before occ, latest first
	occBatch []wire.Occupancy
}

// add pends o. A full pool doubles: append grows a slice this large by a
// quarter at a time, which copied the pending records several times over
// on their way to PoolLimit.
func (p *occPool) add(o wire.Occupancy) {
	if len(p.occ) == cap(p.occ) {
		p.occ = slices.Grow(p.occ, max(len(p.occ), 256))
	}
	p.occ = append(p.occ, o)
}

// due reports whether the pending records are to be flushed: in a
// double-buffered capture at the generation's flush point (trigger) once
// occupancyDBFlush are pending, otherwise once limit (PoolLimit) are.
func (p *occPool) due(doubleBuffer, trigger bool, limit int) bool {
	n := len(p.occ) + len(p.occFront)
	return doubleBuffer && trigger && n >= occupancyDBFlush || !doubleBuffer && n >= limit
}

// flush delivers the pending records, the synthetic starts first.
func (p *occPool) flush(em *emitter, code *codeTables) error {
	batch := p.occ
	if len(p.occFront) > 0 {
		batch = p.occBatch[:0]
		for i := len(p.occFront) - 1; i >= 0; i-- {
			batch = append(batch, p.occFront[i])
		}
		batch = append(batch, p.occ...)
		p.occBatch = batch
	}
	// Delayed attribution (2.1.3) of every record still unattributed, ends
	// included (an occupancy-only wave may end before a late load), as
	// AMD's library does.
	for i := range batch {
		batch[i].PC = code.late(batch[i].PC)
	}
	var err error
	if em.own != nil && len(p.occFront) == 0 && len(batch) > 0 {
		// A split decode takes the records as they are; the pool gets
		// another array.
		p.occ, err = em.ownOccupancy(batch)
	} else {
		err = em.occupancy(batch)
		p.occ = p.occ[:0]
	}
	p.occFront = p.occFront[:0]
	return err
}
