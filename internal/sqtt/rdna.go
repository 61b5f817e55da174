package sqtt

// The RDNA decoder (gfx10, gfx11, gfx12) follows sqtt-format.md 1.2, 1.3,
// 2.1, 2.3, 2.4, 3 and 4 (newest behaviour; the w64 bit is ignored). Under
// Compat Lib016 it gives AMD's 0.1.6 records instead (A.3, A.4 R6, W2 and item
// 7: waves emitted at their WAVE_END, wave64 cycles doubled, DPRate 0 read
// as rate 0, gfx11 codes 10 and 15 unscaled, WAVE_START_EXT a time delta,
// no CONTEXT instructions, no barrier extension, the reorder step of the
// reader's tail; rdna_lib_test.go, TestLibrary016 and the real traces
// check them). Choices where both are
// silent: waves still held at the end of a buffer are emitted slot by
// slot, oldest first; TIMESTAMP realtime samples are appended, never
// averaged; MISC flags raise their events in bit order.

import (
	"bufio"
	"context"
	"encoding/binary"
	"math/bits"
	"slices"

	"github.com/attkit/attkit/internal/wire"
)

const (
	rHandled        = 0xFF // a token of scan's block handled early (deliverBlock)
	rdnaSlots       = 32
	otherSIMDFlush  = 65536
	realtimeFlush   = 65536
	rdnaQueueTokens = 1024 // reorder queue bound (it stays tiny on real data)
	rdnaCarry       = 64   // longest open group carried in scan's block
)

// rdnaTok is a delivered RDNA token: the 64-bit window at its start (for a
// gfx12 72-bit NEW_PC, x holds the window 8 bits later) and its time.
type rdnaTok struct {
	v, x uint64
	t    int64
	typ  uint8
}

// rwave is a traced RDNA wave: the shared wave state plus the RDNA model's
// flag (2.3.6). The model's xnack flag and last_xnack time are not kept:
// only the XNACK rewind (MI400's replay code, 2.3.6) sets them, and this
// decoder has no rewind, so xnack stays false and last_xnack -1.
type rwave struct {
	wave
	barrierExt bool
}

// occTable is the running-wave table of one CU (WGP), indexed by
// simd<<5 | wave.
type occTable [128]occSlot

// rdna decodes one gfx10, gfx11 or gfx12 buffer (2.3).
type rdna struct {
	ctx context.Context
	ps  *parseState
	em  *emitter

	// token reader
	br      *bufio.Reader
	buf     []byte
	bufOff  int64 // file offset of buf[0]
	eof     bool
	pos     int64 // bit position of the next token in the file
	prevPos int64 // bit position of the previous token
	clock   int64
	table   *[256]rdnaEntry
	packed  scanTable    // the token table for scan (pack)
	toks    [256]rdnaTok // scan's block of tokens
	gen     int          // 10, 11, 12: the reader and layout generation
	extSkip bool
	plFlag  bool // packet-loss flag raised by a TIMESTAMP
	q       []rdnaTok
	qh      int
	inTail  bool // a token of the reader's tail was delivered (Lib016)
	ntoken  int
	rtLimit int // realtime pairs held at most: max(PoolLimit, realtimeFlush)

	w64Double bool   // ps.rules.wave64Double
	w64Shift  uint64 // 1 when w64Double, else 0: a wave64 INST's cycles are shifted left by it

	// HEADER (2.3.5)
	version      int
	target       uint8 // (DSA << 7) + DWGP
	targetSIMD   uint8
	dprate       int64
	derate       int64
	exclBarrier  bool
	doubleBuffer bool
	insts        *instTable
	scaled       [257]rdnaScaled // insts scaled by the rates, then VALU_INST (scale)
	instAt       uint64          // an INST's fields lie instAt bits further than gfx12's (setLayout)
	codeMask     uint64          // an INST's code's mask (setLayout)

	regs       regState
	slots      [rdnaSlots][]*rwave
	tops       [rdnaSlots]*rwave // each slot's top wave, nil when it is empty (setTop)
	free       []*rwave
	running    [256]*occTable
	saved      map[int]wire.PC
	sd         []wire.ShaderData
	realtime   []wire.Realtime
	other      []wire.OtherSIMD
	packetLost bool

	occPool // occupancy records pending until a flush
}

func newRDNA(ctx context.Context, ps *parseState, br *bufio.Reader, a Arch) *rdna {
	r := &rdna{ctx: ctx, ps: ps, em: &ps.em, br: br, regs: newRegState(), version: a.Version2,
		dprate: 1, derate: 1, prevPos: -1 << 40, rtLimit: max(ps.limit, realtimeFlush),
		w64Double: ps.rules.wave64Double}
	if r.w64Double {
		r.w64Shift = 1
	}
	switch a.GFXIP {
	case 10:
		r.gen, r.table = 10, pick(ps.rules.nibble0111Token, gfx10Table016, gfx10Table)
	case 11:
		r.gen, r.table = 11, pick(ps.rules.nibble0111Token, gfx11Table016, gfx11Table)
	default:
		r.gen, r.table = 12, pick(ps.rules.nibble0111Token, gfx12Table016, gfx12Table)
	}
	r.pack()
	r.setInsts()
	r.setLayout()
	r.scale()
	return r
}

// scanTable is scan's token table, indexed by a token's first 8 bits,
// one array per field so that scanRun's loop reads each field with one
// instruction (an array of structs of more than 4 fields was copied to the
// stack per token). A token is rare, handed to scanBlock's rare step, when
// it is longer than 52 bits (scanRun's window, 60 bits at least, may then
// lack its last bits or the next token's first 8, which scanRun takes from
// it), when it is a TIMESTAMP or, on gfx12, a WAVE_START_EXT, when its
// time field reaches past its first 8 bits (MISC, EVENT, the gfx12
// SHADER_DATA tokens, ...), and when it is delivered and shorter than
// scanStep (an UNKNOWN nibble). So the time a usual token adds to the clock is known
// from the index alone.
type scanTable struct {
	adv     [256]int64 // the length in bits, plus scanRare for a rare token
	delta   [256]int64 // the time field and 4 for a TIME token; 0 for a rare token
	deliver [256]int   // 1 when scan delivers the token, else 0
	typ     [256]uint8
}

// scanRare marks a rare token in scanTable.adv: it takes p past any limit,
// so that scanRun's loop, which tests p alone, ends after the token, and
// scanRun takes it off again. Bit positions in a buffer stay far below it.
const scanRare = 1 << 40

// scanSpan is how many bytes scanRun reads tokens from, from its first
// token's byte on: it reads them from an array of scanSpan+8 bytes (the
// last token's window past them), indexed without bounds checks by a
// byte index masked to scanSpan-1 (a power of 2).
const scanSpan = 2048

// scanStep is the fewest bits of a token scanRun delivers (a shorter one
// is rare): as each token delivered moves p on by scanStep bits at least,
// a limit on p bounds the tokens delivered, and scanRun's inner loop tests
// p alone. It is a constant so that the loop keeps its values in
// registers (as an argument, one was reloaded from the stack per token).
const scanStep = 8

// pack fills r.packed from r.table, the generation and the rules.
func (r *rdna) pack() {
	t := &r.packed
	for i, e := range r.table {
		t.typ[i], t.adv[i], t.deliver[i] = e.typ, int64(e.bits), 1
		t.delta[i] = int64(i >> e.tb & (1<<e.tw - 1))
		rare := e.bits > 52 || int(e.tb)+int(e.tw) > 8
		switch e.typ {
		case rNop:
			t.deliver[i] = 0
		case rTime:
			t.deliver[i] = 0
			t.delta[i] += 4
		case rTimestamp:
			t.deliver[i], rare = 0, true
		case rWaveStartExt:
			if r.ps.rules.waveStartExtDelta {
				t.deliver[i] = 0 // 0.1.6 reads it as a time delta only (2.3.4)
			}
			if r.gen >= 12 {
				rare = true // the extension bytes that follow are skipped
			}
		}
		if t.deliver[i] != 0 && e.bits < scanStep {
			rare = true // scanRun's limit counts scanStep bits a token
		}
		if rare {
			t.adv[i] += scanRare
			t.delta[i] = 0
		}
	}
}

// pick is old016 when rule holds, else newest.
func pick[T any](rule bool, old016, newest T) T {
	if rule {
		return old016
	}
	return newest
}

func (r *rdna) setInsts() {
	switch {
	case r.version <= 2:
		r.insts = gfx10Insts
	case r.version == 3 && r.ps.rules.instTables016:
		r.insts = gfx11Insts016
	case r.version == 3:
		r.insts = gfx11Insts
	case r.ps.rules.instTables016:
		r.insts = gfx12Insts016
	default:
		r.insts = gfx12Insts
	}
}

// run decodes the buffer and delivers its records.
func (r *rdna) run() error {
	if err := r.ps.gfxipOnce(r.gen); err != nil {
		return err
	}
	if err := r.read(); err != nil {
		return err
	}
	if err := r.release(); err != nil {
		return err
	}
	return r.endOfBuffer()
}

// refill drops the bytes before the current token and makes at least 32
// bytes from it available, or all that remain.
func (r *rdna) refill() error {
	if i := int(r.pos>>3 - r.bufOff); i > 0 {
		r.br.Discard(i)
		r.bufOff += int64(i)
	}
	buf, eof, err := peekAll(r.br, 32)
	if err != nil {
		return err
	}
	r.buf, r.eof = buf, r.eof || eof
	return nil
}

// window returns the 64 stream bits from bit p (bytes past the end read as
// zero); p must lie at or after the start of buf.
func (r *rdna) window(p int64) uint64 {
	i := int(p>>3 - r.bufOff)
	sh := uint(p & 7)
	if b := r.buf; uint(i)+9 <= uint(len(b)) {
		b = b[i : i+9]
		return binary.LittleEndian.Uint64(b)>>sh | uint64(b[8])<<(64-sh)
	}
	return r.windowEnd(i, sh)
}

// windowEnd is window for the last bytes: those past the end read as zero.
func (r *rdna) windowEnd(i int, sh uint) uint64 {
	b := r.buf
	var tmp [9]byte
	if i < len(b) {
		copy(tmp[:], b[i:])
	}
	return binary.LittleEndian.Uint64(tmp[:])>>sh | uint64(tmp[8])<<(64-sh)
}

// fastEnd is the bit position before which the reader needs no refill
// and no end-of-trace rule: 18 bytes before the end of the buffered bytes
// and, once they are the last, 256 bits before the end (the tail test,
// q + 128 >= total; 0.1.6's end padding, total - pos < 136; the gfx12 end,
// pos + 64 > total).
func (r *rdna) fastEnd() int64 {
	end := (r.bufOff + int64(len(r.buf))) * 8
	if r.eof {
		return end - 256
	}
	return end - 18*8
}

// read runs the token reader over the whole buffer (2.3.1), handing
// delivered tokens to the parser (through the reorder queue on gfx10 and
// gfx11).
func (r *rdna) read() error {
	if err := r.refill(); err != nil {
		return err
	}
	fast := r.fastEnd()
	table := r.table
	for {
		if r.pos < fast && !r.ps.noScan {
			if err := r.scan(fast); err != nil {
				return err
			}
			if r.pos < fast {
				continue // a context check
			}
		}
		if r.ntoken++; r.ntoken&0xFFFF == 0 {
			if err := r.ctx.Err(); err != nil {
				return err
			}
		}
		// q: where the previous token (NOP, TIME, skipped byte or other)
		// started. The library's tail loop, as observed with 0.1.6,
		// reads the tokens whose previous token started 128 bits or
		// less before the end (TIMESTAMP averaging, 2.3.3; the 0.1.6
		// reorder step, A.4 item 7.13).
		q := r.prevPos
		r.prevPos = r.pos
		tail := false
		if r.pos >= fast {
			// Near the end of the buffered bytes: refill, and near the
			// end of the trace the end and tail rules. Before fast none
			// of them can hold, and a token's 128 bits are buffered.
			// 18 bytes: enough to tell whether the TIMESTAMP tail test
			// (q + 128 >= total) can hold.
			if len(r.buf)-int(r.pos>>3-r.bufOff) < 18 && !r.eof {
				if err := r.refill(); err != nil {
					return err
				}
			}
			total := (r.bufOff + int64(len(r.buf))) * 8 // meaningful once eof
			if r.eof {
				// 0.1.6 reads gfx12 to the end too, bits past it as
				// zero (A.4 item 7.10).
				if r.gen >= 12 && !r.ps.rules.gfx12ReadToEnd && r.pos+64 > total || r.pos >= total {
					r.tailCut(total, q)
					return nil
				}
			}
			tail = r.eof && q+128 >= total
			fast = r.fastEnd()
		}
		var w uint64 // r.window(r.pos), its usual case inlined
		if i := int(r.pos>>3 - r.bufOff); uint(i)+9 <= uint(len(r.buf)) {
			b, sh := r.buf[i:i+9], uint(r.pos&7)
			w = binary.LittleEndian.Uint64(b)>>sh | uint64(b[8])<<(64-sh)
		} else {
			w = r.window(r.pos)
		}
		if r.extSkip {
			if w&1 != 0 {
				r.pos += 8
				continue
			}
			r.extSkip = false
		}
		e := table[w&0xFF]
		if e.typ == rNop {
			if w == 0 && r.ps.rules.zeroRunEnd && r.gen <= 11 && r.eof && r.pos%8 == 0 && (r.bufOff+int64(len(r.buf)))*8-r.pos < 64+72 {
				// 0.1.6 takes 64 zero bits at a byte boundary
				// followed by fewer than 9 bytes as the end padding
				// (A.4 item 7.11).
				return nil
			}
			r.pos += 4
			continue
		}
		// (A width of 0 adds 0; the shift counts are below 64.)
		r.clock += int64(w >> (e.tb & 63) & (1<<(e.tw&63) - 1))
		switch e.typ {
		case rTime:
			r.clock += 4
		case rTimestamp:
			r.timestamp(w, tail)
		default:
			t := rdnaTok{v: w, t: r.clock, typ: e.typ}
			if e.bits > 64 {
				t.x = r.window(r.pos + 8)
			}
			if e.typ == rWaveStartExt && r.gen >= 12 {
				r.extSkip = true
			}
			if e.typ == rWaveStartExt && r.ps.rules.waveStartExtDelta {
				// 0.1.6 reads the pattern as a time delta only (2.3.4).
				break
			}
			if err := r.deliver(t, tail); err != nil {
				return err
			}
		}
		r.pos += int64(e.bits)
	}
}

// scan is read's usual case: it reads the tokens that start before fast
// (see fastEnd: no refill, no end rule, no tail), at most 2^20 bits of
// them, then returns for a context check. It reads a block of tokens into
// r.toks in a loop without calls, then delivers them; a TIMESTAMP ends a
// block and is applied after it, so that its packet-loss flag and realtime
// sample come between the same deliveries as in read. scanRun reads the
// usual tokens; scanBlock reads the rare ones (see scanTable) again.
func (r *rdna) scan(fast int64) error {
	if r.ps.back != nil {
		return r.scanSplit(fast)
	}
	buf := r.buf
	base := r.bufOff * 8
	p := r.pos - base
	end := min(fast-base, p+1<<20)
	start := r.prevPos - base
	clock := r.clock
	toks := &r.toks
	ext := r.extSkip
	if ext {
		start, p, ext = skipExt(buf, start, p, end)
	}
	carry := 0 // the open group kept at the front of the block (deliverBlock)
	for p < end {
		var stamp uint64 // the TIMESTAMP ending the block, if any (never 0)
		var n int
		p, start, n, clock, stamp, ext = r.scanBlock(buf, toks, p, end, start, carry, clock, ext)
		var err error
		if carry, err = r.deliverBlock(toks[:n], carry); err != nil {
			return err
		}
		if stamp != 0 {
			r.clock = clock
			r.timestamp(stamp, false)
			clock = r.clock
		}
	}
	r.q = append(r.q, toks[:carry]...)
	r.pos, r.prevPos, r.clock, r.extSkip = p+base, start+base, clock, ext
	return r.ctx.Err()
}

// scanBlock is scan's block: it reads tokens from bit p of buf into toks
// from n on (start: where the previous token started; clock: the clock
// there; ext: a gfx12 WAVE_START_EXT's skip goes on) while p < end and
// the block is not full, and stops after a TIMESTAMP, which it returns as
// stamp (else 0) without applying it. It returns the position after the
// last token read, that token's start, the tokens in the block, the clock
// and the skip. It reads the tokens alone, no decoder state: a split
// decode runs it ahead of the handlers (scanSplit).
func (r *rdna) scanBlock(buf []byte, toks *[256]rdnaTok, p, end, start int64, n int, clock int64, ext bool) (int64, int64, int, int64, uint64, bool) {
	table := &r.packed
	for p < end && n < len(toks) {
		// scanRun reads a window of buf from the byte at p on (near
		// buf's end, a copy of its last bytes), and the tokens that
		// start in its first scanSpan bytes.
		b0 := p >> 3 << 3
		lim := min(end, b0+scanSpan*8)
		var win *[scanSpan + 8]byte
		if rest := buf[b0>>3:]; len(rest) >= len(win) {
			win = (*[scanSpan + 8]byte)(rest)
		} else {
			var tmp [scanSpan + 8]byte
			copy(tmp[:], rest)
			win = &tmp
		}
		var w uint64
		p, n, clock, w = scanRun(win, table, clock, toks, p-b0, lim-b0, n)
		p += b0
		start = p - table.adv[uint8(w)] // (with scanRare in both for a rare token)
		if p < scanRare {
			continue
		}
		p -= scanRare
		// A rare token at start, written to toks[n-1] when delivered:
		// its whole window, and its time with its time field, which
		// scanRun left out.
		sh := uint(start & 7)
		w = binary.LittleEndian.Uint64(buf[start>>3:])>>sh | uint64(buf[start>>3+8])<<1<<(63-sh)
		e := r.table[uint8(w)]
		clock += int64(w >> (e.tb & 63) & (1<<(e.tw&63) - 1))
		if e.typ == rTimestamp {
			return p, start, n, clock, w, ext
		}
		if table.deliver[uint8(w)] != 0 {
			toks[n-1].v, toks[n-1].t = w, clock
		}
		if e.typ == rNewPC && r.gen >= 12 {
			// The 72-bit gfx12 NEW_PC: the window 8 bits on.
			b := buf[(start+8)>>3 : (start+8)>>3+9]
			toks[n-1].x = binary.LittleEndian.Uint64(b)>>sh | uint64(b[8])<<1<<(63-sh)
		}
		if e.typ != rWaveStartExt || r.gen < 12 {
			continue
		}
		// A gfx12 WAVE_START_EXT: the bytes after it whose first bit
		// is set are skipped.
		start, p, ext = skipExt(buf, start, p, end)
	}
	return p, start, n, clock, 0, ext
}

// scanRun is scan's loop: it reads tokens from bit p of win into toks
// from n on, the clock at clock, while p < lim and the block has room,
// and returns the position after the last token read, the tokens in the
// block, the clock and the last token's window; p < lim <= scanSpan*8 and
// n < len(toks) on entry. A rare token (see scanTable) ends it: its length
// takes p past lim, and the position it returns is scanRare on. The usual
// token takes no branch on its type: it is written to the block whatever
// it is, and the block grows by its deliver field. p is a multiple of 4,
// as every token length is (TestRDNATokenNibbles), so the window is the 8
// bytes at p>>3 or, at an odd nibble, those 4 bits on: 60 bits at least,
// which hold every token but the rare ones (scanBlock reads those again).
//
// The next token's first 8 bits, its table index k, are taken from the
// window in hand shifted by the token's length (at most 52 bits for a
// usual token, so they are in the window's 60), not from the window at
// the next position: the loop's chain from one token to the next is the
// table's length, a shift and a zero extension. The next window, which
// the token after that needs, is loaded meanwhile. Read from the window
// at p, k was a chain of two loads and a shift a token (p to the window
// to the length to p), and the loop took 8% more of a one-core decode's
// time.
//
// It is kept out of line: inlined in scanBlock, the loop reloaded
// scanBlock's values from the stack per token.
//
//go:noinline
func scanRun(win *[scanSpan + 8]byte, table *scanTable, clock int64, toks *[256]rdnaTok, p, lim int64, n int) (int64, int, int64, uint64) {
	_, _, _ = win[0], table.typ[0], toks[0] // nil checks before the loop, not in it
	i := uint(p>>3) & (scanSpan - 1)
	w := binary.LittleEndian.Uint64(win[i:i+8]) >> (p & 4)
	k := uint8(w)
	var last uint64
	for {
		// Each token delivered moves p on by scanStep bits at least,
		// so n stays under len(toks) while p < l.
		l := min(lim, p+scanStep*int64(len(toks)-n))
		if p >= l {
			return p, n, clock, last
		}
		for p < l {
			a := table.adv[k]
			clock += table.delta[k]
			t := &toks[uint8(n)]
			t.v, t.t, t.typ = w, clock, table.typ[k]
			n += table.deliver[k]
			last = w
			k = uint8(w >> (a & 63))
			p += a
			i := uint(p>>3) & (scanSpan - 1)
			w = binary.LittleEndian.Uint64(win[i:i+8]) >> (p & 4)
		}
	}
}

// skipExt skips, from bit p of buf, the bytes whose first bit is set
// after a gfx12 WAVE_START_EXT (2.3.1), while p < end. It returns the
// start of the last byte skipped (else start), the next position, and
// whether the skip goes on at end.
func skipExt(buf []byte, start, p, end int64) (int64, int64, bool) {
	for ; p < end; p += 8 {
		if buf[p>>3]>>(p&7)&1 == 0 {
			return start, p, false
		}
		start = p
	}
	return start, p, true
}

// deliverBlock delivers scan's tokens (deliver outside the reader's
// tail), toks[:carried] being the open group carried from the previous
// block, and returns how many tokens it carries to the next one: they are
// then at the front of toks (whose capacity is a whole block). On gfx10
// and gfx11 the reorder queue stays in the block while it can: the queued
// group is toks[g:i] less the tokens handled early (an earlier WAVE_READY,
// marked rHandled), all of time T, closed once a later token comes; the
// closed groups are applied together (applyGroup, in order) before a
// token handled early and at the end of the block, which is the order of
// handling each group as it closes, with a call per run of groups instead
// of per group (a group is 1.4 tokens on average); the group still open
// at the end of the block is carried, or moved to r.q when it is long
// (more than rdnaCarry tokens; a group in the block is then shorter than
// rdnaQueueTokens). While r.q holds tokens, and when a token's handle
// takes its preamble (the first after a TIMESTAMP raising the packet-loss
// flag or too many realtime pairs), deliverQueued delivers the block
// instead. Otherwise no token takes the preamble, and applyGroup applies
// the tokens without handle's test.
func (r *rdna) deliverBlock(toks []rdnaTok, carried int) (int, error) {
	if r.plFlag || len(r.realtime) >= r.rtLimit || len(r.q) > r.qh {
		r.q = append(r.q, toks[:carried]...)
		if err := r.deliverQueued(toks[carried:]); err != nil {
			return 0, err
		}
		// The group left in r.q (all of one time) is carried instead.
		k := len(r.q) - r.qh
		if k > rdnaCarry {
			return 0, nil
		}
		copy(toks[:k], r.q[r.qh:])
		r.q, r.qh = r.q[:0], 0
		return k, nil
	}
	if r.gen >= 12 {
		return 0, r.applyGroup(toks)
	}
	if len(toks) == 0 {
		return 0, nil
	}
	i := carried
	if carried == 0 {
		if toks[0].typ == rWaveReady {
			toks[0].t--
		}
		i = 1
	}
	// toks[a:g] are the closed groups not applied yet: they are applied
	// together, when a token comes before the open group (handled early)
	// and at the end of the block.
	a, g, T := 0, 0, toks[0].t
	for {
		i0, T0 := i, T
		i, T = groupScan(toks, i, T, &readyLate)
		if T != T0 {
			// The times groupScan passed do not decrease, so the open
			// group is the run of tokens of time T that ends at i: its
			// start is found going back from there, not kept per token.
			for g = i - 1; g > i0 && toks[g-1].t == T; g-- {
			}
		}
		if i == len(toks) {
			break
		}
		if err := r.applyGroup(toks[a:g]); err != nil {
			return 0, err
		}
		a = g
		t := &toks[i]
		if err := r.apply(t, false); err != nil {
			return 0, err
		}
		t.typ = rHandled
		i++
	}
	if err := r.applyGroup(toks[a:g]); err != nil {
		return 0, err
	}
	k := 0
	for j := g; j < len(toks); j++ {
		if toks[j].typ != rHandled {
			toks[k] = toks[j]
			k++
		}
	}
	if k > rdnaCarry {
		r.q = append(r.q, toks[:k]...)
		return 0, nil
	}
	return k, nil
}

// groupScan is deliverBlock's loop, a leaf: from toks[i] on, it moves a
// WAVE_READY's time back by one and keeps T, the time of the open group,
// up to the first token of a time before T (handled early), whose index
// it returns with T (len(toks) when there is none). The times it passes
// do not decrease, so deliverBlock finds the open group's start going
// back from the index returned, instead of it being kept here per token.
// The WAVE_READY's one cycle is taken from late (readyLate) by the
// token's type, a load and a subtraction (a compare and set took four
// instructions); passed as an argument, its address is not formed again
// per token. It is kept out of line: inlined in deliverBlock, whose calls
// make the compiler keep the loop's values on the stack, the scan took a
// third more instructions.
//
//go:noinline
func groupScan(toks []rdnaTok, i int, T int64, late *[256]int64) (int, int64) {
	rest := toks[i:]
	_ = late[0] // its nil check before the loop, not in it
	// Four tokens a turn while all four are in order: the loop's own
	// work is shared by four tokens. Their times are stored only then,
	// so four out of order are passed again one token at a time below.
	for len(rest) >= 4 {
		q := (*[4]rdnaTok)(rest)
		a, b := q[0].t-late[q[0].typ], q[1].t-late[q[1].typ]
		c, d := q[2].t-late[q[2].typ], q[3].t-late[q[3].typ]
		if a < T || b < a || c < b || d < c {
			break
		}
		q[0].t, q[1].t, q[2].t, q[3].t, T = a, b, c, d, d
		rest = rest[4:]
	}
	for j := range rest {
		t := &rest[j]
		tt := t.t - late[t.typ]
		t.t = tt // stored whatever the type, without a branch
		if tt < T {
			return len(toks) - len(rest) + j, T
		}
		T = tt
	}
	return len(toks), T
}

// readyLate is, by token type, the cycles by which a gfx10 or gfx11 token's
// time is moved back before the reorder queue: 1 for a WAVE_READY (see
// deliver), 0 for every other type.
var readyLate = [256]int64{rWaveReady: 1}

// applyGroup applies toks in order with apply, less those marked
// rHandled, for deliverBlock (no token takes handle's preamble). The usual
// INST (rdnaScaled.fast) and VALU_INST, the top wave out of a trap and
// without an armed barrier, are applyInst's and valu's usual case written
// out here, one path for both: the loop keeps its values in registers
// across tokens, which a call per token does not, and takes no branch
// between the two types, which follow each other in no pattern (that
// branch was mispredicted often). IMM_ONE and IMMEDIATE are applied here
// too, on one path: that leaves apply's switch, a jump table whose
// indirect branch missed three times in four, to the rarer types.
func (r *rdna) applyGroup(toks []rdnaTok) error {
	for j := range toks {
		t := &toks[j]
		typ := t.typ
		if typ-rInst < 2 { // INST or VALU_INST
			// An INST on gfx10 and gfx11 has its fields one bit further
			// than on gfx12, where a VALU_INST has its slot and wave64
			// bit on every generation: u, the window shifted by r.instAt
			// for an INST, has them where a gfx12 INST has them. What
			// the code means is in r.scaled, for a VALU_INST at 256. No
			// branch on the type.
			v := t.v
			isInst := uint64(typ & 1) // rInst is odd, rValuInst even
			u := v >> (r.instAt & isInst)
			code := u>>12&(r.codeMask&-isInst) | (isInst^1)<<8
			m := &r.scaled[code]
			w := r.tops[u>>7&31]
			if !m.fast || w == nil {
				goto other
			}
			if w.barrierExt || w.trap != trapRestored {
				goto other
			}
			now := t.t
			// Wave64 under 0.1.6 doubles the cycles, and a stall since
			// the state began is added: both without a branch on the
			// token's data (their tests were mispredicted often).
			stall := stallSince(w, now)
			w.pushInst(now-stall, m.cat, uint32(stall), int32(m.cycles<<(u>>6&r.w64Shift&1))+int32(stall))
			w.setState(wire.StateExec, now)
			continue
		}
		switch typ {
		case rWaveReady:
			r.ready(t.v, t.t)
			continue
		case rImmOne, rImmediate:
			// IMM_ONE's slot as a mask of one, or IMMEDIATE's mask: no
			// branch between the two (rImmOne is odd, rImmediate even).
			v := t.v
			one := uint64(typ & 1)
			m := v>>8&0xFFFF&(one-1) | 1<<(v>>7&31)&-one
			for ; m != 0; m &= m - 1 {
				if w := r.top(uint64(bits.TrailingZeros64(m))); w != nil {
					r.immediate(w, t.t)
				}
			}
			continue
		case rHandled:
			continue
		}
	other:
		var err error
		switch typ {
		case rInst:
			err = r.applyInst(t)
		case rValuInst:
			r.valu(t.v, t.t)
		default:
			err = r.apply(t, false)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// setLayout sets where an INST token's fields lie for the header's
// version (2.3.4): on gfx10 and gfx11 one bit further than on gfx12
// (r.instAt), the code 7 bits wide instead of 8 (r.codeMask).
func (r *rdna) setLayout() {
	r.instAt, r.codeMask = 0, 0xFF
	if r.version <= 3 {
		r.instAt, r.codeMask = 1, 0x7F
	}
}

// deliverQueued is deliverBlock's general case: the tokens go through
// r.q while it holds tokens, and every token through handle.
func (r *rdna) deliverQueued(toks []rdnaTok) error {
	if r.gen >= 12 {
		for i := range toks {
			var err error
			if toks[i].typ == rInst {
				err = r.inst(&toks[i])
			} else {
				err = r.handle(&toks[i])
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	g, T, open := 0, int64(0), false
	for i := range toks {
		t := &toks[i]
		if t.typ == rWaveReady {
			t.t--
		}
		switch {
		case len(r.q) > r.qh:
			if t.t <= r.q[len(r.q)-1].t {
				if err := r.enqueue(*t); err != nil {
					return err
				}
				continue
			}
			if err := r.release(); err != nil {
				return err
			}
			g, T, open = i, t.t, true
		case !open:
			g, T, open = i, t.t, true
		case t.t > T:
			for j := g; j < i; j++ {
				var err error
				switch toks[j].typ {
				case rHandled:
				case rInst:
					err = r.inst(&toks[j])
				default:
					err = r.handle(&toks[j])
				}
				if err != nil {
					return err
				}
			}
			g, T = i, t.t
		case t.t < T:
			if err := r.handle(t); err != nil {
				return err
			}
			t.typ = rHandled
		}
	}
	if open {
		for j := g; j < len(toks); j++ {
			if toks[j].typ != rHandled {
				r.q = append(r.q, toks[j])
			}
		}
	}
	return nil
}

// timestamp applies a TIMESTAMP token (2.3.3).
func (r *rdna) timestamp(w uint64, tail bool) {
	r.clock += stampClock(r.gen, w)
	switch r.gen {
	case 10:
		if w>>14&3 == 2 {
			r.rtSample(w>>16, tail)
		}
		return
	case 11:
		pl, rt := w>>8&1 != 0, w>>9&1 != 0
		if pl && !rt {
			r.plFlag = true
		} else if rt && !pl {
			r.rtSample(w>>12&(1<<36-1), tail)
		}
	default:
		rt, pl := w>>7&1 != 0, w>>8&1 != 0
		if pl && !rt {
			r.plFlag = true
		} else if rt && !pl {
			r.rtSample(w>>12, tail)
		}
	}
}

// stampClock is what a TIMESTAMP token w adds to the clock on generation
// gen (2.3.3): the token alone decides it, so a split decode's scan
// (scanSplit) keeps the clock without the handlers' state.
func stampClock(gen int, w uint64) int64 {
	switch gen {
	case 10:
		if w>>14&3 == 1 {
			return int64(w >> 16)
		}
	case 11:
		if w>>9&1 == 0 {
			return int64(w >> 12 & (1<<36 - 1))
		}
	default:
		if w>>7&1 == 0 {
			return int64(w >> 12)
		}
	}
	return 0
}

// rtSample records a realtime sample. As AMD's 0.1.6 library does (the
// spec calls it an upstream inconsistency, 2.3.3), a sample that is not
// newer than the previous pair in both clocks is averaged into it: on
// gfx12 outside the reader's tail, on gfx10 and gfx11 only in the tail (see
// read).
//
// Under Compat Lib016 a gfx11 or gfx12 sample of value 0 is ignored, as 0.1.6
// does (A.4 item 7.8).
func (r *rdna) rtSample(v uint64, tail bool) {
	if v == 0 && r.ps.rules.dropZeroRealtime && r.gen >= 11 {
		return
	}
	if n := len(r.realtime); n > 0 && (r.gen >= 12) != tail {
		p := &r.realtime[n-1]
		if !(r.clock > p.ShaderClock && v > p.RealtimeClock) {
			p.ShaderClock = (p.ShaderClock + r.clock) / 2
			p.RealtimeClock = (p.RealtimeClock + v) / 2
			return
		}
	}
	r.realtime = append(r.realtime, wire.Realtime{ShaderClock: r.clock, RealtimeClock: v})
}

// deliver hands a token to the parser: directly on gfx12, through the
// reorder queue on gfx10 and gfx11 (2.3.1). tail: the token lies in the
// reader's tail (see read).
func (r *rdna) deliver(t rdnaTok, tail bool) error {
	if r.gen >= 12 {
		return r.handle(&t)
	}
	if t.typ == rWaveReady {
		t.t--
	}
	if tail && r.ps.rules.tailReorder016 {
		return r.deliverTail016(t)
	}
	return r.enqueue(t)
}

// enqueue is deliver on gfx10 and gfx11 outside 0.1.6's tail, t's time
// set.
func (r *rdna) enqueue(t rdnaTok) error {
	if n := len(r.q); n > r.qh {
		// The queued tokens all have the time of the last one: they are
		// held only while no later time has been seen.
		last := r.q[n-1].t
		if t.t > last && n-r.qh == 1 {
			// The common case: one token queued, and a later one.
			prev := r.q[r.qh]
			r.q, r.qh = append(r.q[:0], t), 0
			return r.handle(&prev)
		}
		switch {
		case t.t < last:
			// It goes to the front, and the front is released at once.
			return r.handle(&t)
		case t.t > last:
			if err := r.release(); err != nil {
				return err
			}
		case n-r.qh >= rdnaQueueTokens:
			if err := r.handle(&r.q[r.qh]); err != nil {
				return err
			}
			if r.qh++; r.qh >= rdnaQueueTokens {
				n := copy(r.q, r.q[r.qh:])
				r.q, r.qh = r.q[:n], 0
			}
		}
	}
	r.q = append(r.q, t)
	return nil
}

// deliverTail016 is 0.1.6's reorder step in the reader's tail (A.4 item
// 7.13). The first token of the tail releases the queue. Then a token is
// queued only when the queue is empty or the token has the queued time;
// otherwise it is handled at once together with the queued ones: before
// them when it is earlier (a WAVE_READY), after them when it is later. So
// a WAVE_READY one cycle before the token it follows comes before that
// token only when that token was queued.
func (r *rdna) deliverTail016(t rdnaTok) error {
	if !r.inTail {
		r.inTail = true
		if err := r.release(); err != nil {
			return err
		}
	}
	if n := len(r.q); n > r.qh {
		switch last := r.q[n-1].t; {
		case t.t < last:
			if err := r.handle(&t); err != nil {
				return err
			}
			return r.release()
		case t.t > last:
			if err := r.release(); err != nil {
				return err
			}
			return r.handle(&t)
		}
	}
	r.q = append(r.q, t)
	return nil
}

// release hands every queued token to the parser, oldest first.
func (r *rdna) release() error {
	for ; r.qh < len(r.q); r.qh++ {
		if err := r.handle(&r.q[r.qh]); err != nil {
			return err
		}
	}
	r.q, r.qh = r.q[:0], 0
	return nil
}

// lossAt consumes the reader's packet-loss flag before a token at time t
// (2.3.6) and reports whether there was one.
func (r *rdna) lossAt(t int64) (bool, error) {
	if !r.plFlag {
		return false, nil
	}
	r.plFlag = false
	return true, r.packetLoss(t)
}

func (r *rdna) packetLoss(t int64) error {
	r.packetLost = true
	return r.em.eventRec(wire.EventPacketLoss, t, 0, 0, 0, 0)
}

// handle is the parser: it applies one delivered token (2.3.6), its rare
// preamble first (see apply).
func (r *rdna) handle(t *rdnaTok) error {
	lost := false
	if r.plFlag || len(r.realtime) >= r.rtLimit {
		var err error
		if lost, err = r.preamble(t.t); err != nil {
			return err
		}
	}
	return r.apply(t, lost)
}

// apply is handle after its preamble (lost: the preamble consumed a
// packet-loss flag).
func (r *rdna) apply(t *rdnaTok, lost bool) error {
	v := t.v
	switch t.typ {
	case rInst:
		return r.applyInst(t)
	case rValuInst:
		r.valu(v, t.t)
	case rImmOne:
		if w := r.top(v >> 7 & 31); w != nil {
			r.immediate(w, t.t)
		}
	case rImmediate:
		for m := v >> 8 & 0xFFFF; m != 0; m &= m - 1 {
			if w := r.top(uint64(bits.TrailingZeros64(m))); w != nil {
				r.immediate(w, t.t)
			}
		}
	case rWaveReady:
		r.ready(v, t.t)
	case rNewPC:
		var pc uint64
		if r.gen >= 12 {
			pc = t.x >> 8 & (1<<55 - 1)
		} else {
			pc = v >> 16 & (1<<46 - 1)
		}
		if w := r.top(v >> 11 & 31); w != nil {
			r.newPC(w, t.t, pc*4)
		}
	case rWaveStart, rWaveStartExt:
		return r.waveStart(*t, lost)
	case rWaveEnd:
		return r.waveEnd(*t)
	case rHeader:
		r.header(v)
	case rMisc:
		return r.misc(*t)
	case rReg:
		return r.reg(*t)
	case rRegInit:
		if v>>18&3 == 2 && v>>20&1 != 0 {
			me, pipe := uint8(v>>16&3), uint8(v>>14&3)
			d := r.regs.dispatch(me, pipe, r.version)
			d.Time = t.t
			return r.em.dispatchRec(d)
		}
	case rEvent:
		return r.eventTok(*t)
	case rShaderData, rShaderDataShort:
		return r.shaderData(*t)
	default:
		if len(r.realtime) >= realtimeFlush {
			return r.flushRealtime()
		}
	}
	return nil
}

// valu applies a VALU_INST token, v its window, at time now.
func (r *rdna) valu(v uint64, now int64) {
	w := r.tops[v>>7&31]
	if w == nil {
		return
	}
	w.bx(now)
	if w.trap != trapRestored {
		return
	}
	// A wave64 instruction takes two passes under 0.1.6.
	stall := stallSince(w, now)
	w.pushInst(now-stall, wire.CatVALU, uint32(stall), int32(1<<(v>>6&r.w64Shift&1))+int32(stall))
	w.setState(wire.StateExec, now)
}

// ready applies a WAVE_READY token, v its window, at time t.
func (r *rdna) ready(v uint64, t int64) {
	for m := v >> 8 & 0xFFFF; m != 0; m &= m - 1 {
		w := r.tops[bits.TrailingZeros64(m)&31]
		if w == nil {
			continue
		}
		w.bx(t - 1)
		if t > -1 { // last_xnack < t, last_xnack being -1 (see rwave)
			w.setState(wire.StateStall, t)
		}
	}
}

// preamble is handle's rare first step: the reader's packet-loss flag
// consumed before a token at time t (it reports whether there was one),
// and the realtime pairs flushed when too many are held.
func (r *rdna) preamble(t int64) (bool, error) {
	lost, err := r.lossAt(t)
	if err != nil {
		return lost, err
	}
	if len(r.realtime) >= r.rtLimit {
		// Only "other" tokens flush realtime pairs (handle's default
		// case); bound them in streams without any.
		return lost, r.flushRealtime()
	}
	return lost, nil
}

// header applies a HEADER token (2.3.5).
func (r *rdna) header(v uint64) {
	r.version = int(v >> 7 & 0x3F)
	r.setInsts()
	r.target = uint8(v>>19&1)<<7 + uint8(v>>15&7)
	r.targetSIMD = uint8(v >> 13 & 3)
	dpr := v >> 28 & 0xF
	if r.version >= 3 {
		dpr &= 7
	}
	r.dprate = 1
	if dpr != 0 {
		r.dprate = 1 << (dpr - 1)
	}
	if r.ps.rules.dpRateZero && dpr == 0 {
		r.dprate = 0 // 0.1.6 reads a DPRate of 0 as rate 0
	}
	r.derate = 1 << (v >> 33 & 7)
	if r.version >= 4 {
		r.doubleBuffer = v>>43&1 != 0
	}
	r.exclBarrier = r.version == 4 && v>>59&1 != 0
	r.setLayout()
	r.scale()
}

// top returns the top wave of a target slot, nil when the slot is empty.
func (r *rdna) top(slot uint64) *rwave {
	return r.tops[slot&31]
}

// setTop sets r.tops[slot] after a change to r.slots[slot]: the tokens
// read a slot's top wave from r.tops in one load, where the slot's stack
// takes a load of its length, a test and a load of its array.
func (r *rdna) setTop(slot uint8) {
	s := r.slots[slot&31]
	r.tops[slot&31] = nil
	if len(s) > 0 {
		r.tops[slot&31] = s[len(s)-1]
	}
}

// stallSince is the stall an instruction of w at time now takes: the
// time since its STALL state began, 0 when it is in another state or the
// state began at now. It takes no branch (conditional moves).
func stallSince(w *rwave, now int64) int64 {
	stall := max(now-w.stateStart, 0)
	if w.curState != wire.StateStall {
		stall = 0
	}
	return stall
}

// setState is the RDNA wave model's set_state (2.3.6).
func (w *rwave) setState(s wire.WaveStateType, t int64) {
	if t > w.stateStart {
		w.mergeTimeline(w.curState, t-w.stateStart)
		w.stateStart = t
	}
	w.curState = s
}

// mergeTimeline is addTimeline for the RDNA waves, without the merge
// branch, which the order of the wave's states makes hard to predict (a
// fifth of the decoder's mispredicted branches). The segment it adds to is
// the last one when w.lastSeg says that one has state s, else a new one:
// lastSeg^(s+1)-1 is negative exactly when they match (the states are
// small non-negative numbers), so its sign bit is the 1 to subtract from
// the index. It appends a segment of state s either way, then ends the
// timeline after the segment chosen, on a copy of the slice stored back
// once (w.timeline resliced in place stored only its length, but the
// compiler loaded the length, capacity and address again after each
// store). Until the stitch, setState is the only writer of an RDNA wave's
// timeline, so lastSeg stays true. It is small enough that setState stays
// inlined (cost 77 of 80; a call there costs more than the branch saves).
func (w *wave) mergeTimeline(s wire.WaveStateType, d int64) {
	m := len(w.timeline) - int(uint32(w.lastSeg^(s+1)-1)>>31)
	w.lastSeg = s + 1
	tl := append(w.timeline, wire.WaveState{Type: s})
	tl[m].Duration += int32(d)
	w.timeline = tl[:m+1]
}

// bx is the gfx10/gfx11 barrier extension check: an armed barrier IMMED
// becomes a MESSAGE lasting up to this token.
func (w *rwave) bx(t int64) {
	if w.barrierExt {
		w.barrierMessage(t)
	}
}

// barrierMessage is bx for an armed barrier.
func (w *rwave) barrierMessage(t int64) {
	w.barrierExt = false
	if n := len(w.insts); n > 0 && w.insts[n-1].Category == wire.CatImmed {
		last := &w.insts[n-1]
		w.setState(wire.StateWait, end(last))
		w.setState(wire.StateExec, t+1)
		last.Duration = int32(max(0, t-last.Time))
		last.Category = wire.CatMessage
	}
}

func (r *rdna) immediate(w *rwave, t int64) {
	w.bx(t)
	if w.trap != trapRestored {
		return
	}
	ti := t
	if n := len(w.insts); n > 0 {
		ti = min(t, end(&w.insts[n-1]))
	}
	stall := t - ti
	w.pushInst(ti, wire.CatImmed, uint32(stall), int32(stall+1))
	w.setState(wire.StateWait, ti)
	w.setState(wire.StateExec, t+1)
}

// otherInst records an INST token of an instruction that ran on the other
// SIMD of the WGP.
func (r *rdna) otherInst(t int64, m *rdnaScaled) error {
	// inst_other_simd_t.cycles is 16 bits wide.
	r.other = append(r.other, wire.OtherSIMD{Size: 24, Time: t, Cycles: uint16(m.cycles), WGP: r.target,
		Category: m.cat})
	if len(r.other) >= otherSIMDFlush {
		err := r.em.otherSIMD(r.other)
		r.other = r.other[:0]
		return err
	}
	return nil
}

// inst is handle for an INST token, the most frequent (deliverQueued calls
// it directly): handle's preamble test, then applyInst.
func (r *rdna) inst(t *rdnaTok) error {
	if r.plFlag || len(r.realtime) >= r.rtLimit {
		return r.handle(t) // which comes to applyInst after the preamble
	}
	return r.applyInst(t)
}

// applyInst applies an INST token (apply's case). The usual case is
// written out here (and, without codeJump, in applyGroup), the rest is in
// otherInst and instSpecial.
func (r *rdna) applyInst(t *rdnaTok) error {
	v := t.v
	var slot, code uint64
	var w64 bool
	if r.version <= 3 {
		slot, code, w64 = v>>8&31, v>>13&0x7F, v>>7&1 != 0
	} else {
		slot, code, w64 = v>>7&31, v>>12&0xFF, v>>6&1 != 0
	}
	m := &r.scaled[code&0xFF]
	if m.other {
		return r.otherInst(t.t, m)
	}
	w, now := r.tops[slot&31], t.t
	if w == nil {
		return nil
	}
	w.bx(now)
	if !m.usual || w.trap != trapRestored {
		if r.instSpecial(w, now, code, m) {
			return nil
		}
	}
	cycles := m.cycles
	if w64 && r.ps.rules.wave64Double {
		// Wave64 under 0.1.6: two passes, twice the cycles (other-SIMD
		// records and the trap's CONTEXT are not doubled). The newest
		// source parses the bit and ignores it (2.3.6).
		cycles *= 2
	}
	in := wire.Instruction{Time: now, Category: m.cat, Duration: int32(cycles)}
	if w.curState == wire.StateStall && w.stateStart < now {
		in.Stall = uint32(now - w.stateStart)
		in.Duration += int32(in.Stall)
		in.Time = w.stateStart
	}
	w.insts = append(w.insts, in)
	if code == codeJump {
		w.pcInfos = append(w.pcInfos, pcInfo{len(w.insts), wire.PC{}})
	}
	w.setState(wire.StateExec, now)
	return nil
}

// instSpecial applies the special INST codes and categories to the top
// wave w of the token's slot (applyInst has the usual case: no trap code, no
// IMMED or NONE category, the wave out of a trap) and reports whether that
// was all; if not, the usual case follows.
func (r *rdna) instSpecial(w *rwave, now int64, code uint64, m *rdnaScaled) bool {
	switch code {
	case codeReturnExc:
		w.pcInfos = append(w.pcInfos, pcInfo{len(w.insts), wire.PC{}})
		w.trap = trapRestored
		w.extendContext(now)
		return true
	case codeTrap:
		if !r.ps.rules.noContextInst {
			w.insts = append(w.insts, wire.Instruction{Time: now, Category: wire.CatContext, Duration: 1})
		}
		w.trap = trapStandby
	}
	if w.trap != trapRestored {
		return true
	}
	switch m.cat {
	case wire.CatImmed:
		r.immediate(w, now)
		if r.version <= 3 && !r.ps.rules.noBarrierExt {
			w.barrierExt = true
		}
		return true
	case wire.CatNone:
		if r.ps.rules.endAtNoneInst {
			w.lastNone = now
		}
		return true
	}
	return false
}

// rdnaScaled is what an INST token's code means under the current header:
// the category, the cycles scaled (mapInst), whether the instruction ran on
// the other SIMD, and whether it takes applyInst's usual case (no trap code, no
// IMMED or NONE category).
type rdnaScaled struct {
	cycles int64
	cat    wire.InstCategory
	other  bool
	usual  bool
	fast   bool // usual, not other, not codeJump: applyGroup's usual INST
}

// scale fills r.scaled from the instruction table and the header's rates.
func (r *rdna) scale() {
	for c := range 256 {
		m, cycles := r.mapInst(uint64(c))
		usual := c != codeReturnExc && c != codeTrap && m.cat != wire.CatImmed && m.cat != wire.CatNone
		r.scaled[c] = rdnaScaled{cycles: cycles, cat: m.cat, other: m.other, usual: usual,
			fast: usual && !m.other && c != codeJump}
	}
	// A VALU_INST (applyGroup): one cycle, twice under 0.1.6 for a
	// wave64 (valu).
	r.scaled[256] = rdnaScaled{cycles: 1, cat: wire.CatVALU, usual: true, fast: true}
}

// mapInst maps an instruction code to its category and cycles, scaled by
// the header's dp rate and derate (2.4). The cycles are not truncated: a
// gfx10 DPRate field of 15 makes code 15 last 16 << 14 cycles.
func (r *rdna) mapInst(code uint64) (rdnaInst, int64) {
	m := r.insts[code&0xFF]
	c := int64(m.cycles)
	if m.dp {
		c *= r.dprate
	}
	if m.de {
		c *= r.derate
	}
	return m, c
}

// extendContext extends a trailing CONTEXT instruction to t+1.
func (w *rwave) extendContext(t int64) {
	if n := len(w.insts); n > 0 && w.insts[n-1].Category == wire.CatContext {
		last := &w.insts[n-1]
		last.Duration = int32(max(int64(last.Duration), t+1-last.Time))
	}
}

func (r *rdna) newPC(w *rwave, t int64, addr uint64) {
	w.bx(t)
	if len(w.pcInfos) == 0 || w.trap != trapRestored {
		return
	}
	w.setPC(r.regs.code.translate(addr))
}

// complete ends a wave at token time t (2.3.6). The closing MESSAGE, from
// the end of the last instruction to t, needs the wave out of a trap or
// context save, unless closeInTrap (A.4 item 7.12).
func (w *rwave) complete(t int64, closeInTrap bool) {
	w.setState(wire.StateEmpty, t)
	w.end, w.ended = t, true
	if n := len(w.insts); n > 0 && (w.trap == trapRestored || closeInTrap) {
		if e := end(&w.insts[n-1]); e < t {
			w.insts = append(w.insts, wire.Instruction{Time: e, Category: wire.CatMessage, Duration: int32(t - e)})
		}
	}
}

// reset prepares w (possibly recycled) for a new wave, keeping capacity.
func (w *rwave) reset() {
	w.wave.reset()
	w.barrierExt = false
}

func (r *rdna) newWave(t int64, slot uint8, pc wire.PC, me, pipe, wg uint8) *rwave {
	var w *rwave
	if len(r.free) == 0 && r.ps.back != nil {
		r.free = r.ps.back.takeRWaves(r.free)
	}
	if n := len(r.free); n > 0 {
		w = r.free[n-1]
		r.free = r.free[:n-1]
		if r.ps.back == nil {
			w.reset() // the back reset the waves it gave back
		}
	} else {
		w = &rwave{}
	}
	w.begin, w.stateStart, w.curState = t, t, wire.StateIdle
	w.cu, w.simd, w.id, w.me, w.pipe, w.wg = r.target, r.targetSIMD, slot, me, pipe, wg
	w.exclBarrier = r.exclBarrier
	if pc != (wire.PC{}) {
		w.pcInfos = append(w.pcInfos, pcInfo{0, pc})
	}
	r.slots[slot] = append(r.slots[slot], w)
	r.setTop(slot)
	return w
}

// emitWave stitches and emits a wave, then recycles it; in a split
// decode the back does that.
func (r *rdna) emitWave(w *rwave) error {
	if r.ps.back != nil {
		return r.ps.back.rwave(w)
	}
	err := r.ps.finishWave(&w.wave, r.ps.stitchRDNA(&w.wave))
	r.free = append(r.free, w)
	return err
}

func (r *rdna) occSlot(key int) *occSlot {
	t := r.running[key>>7&0xFF]
	if t == nil {
		t = new(occTable)
		r.running[key>>7&0xFF] = t
	}
	return &t[key&0x7F]
}

// Context save/restore markers in the WAVE_START count field (2.3.6).
func cwsr(count int) (save, restore bool) {
	if count < 66 || count > 89 {
		return false, false
	}
	switch count - 66 {
	case 0, 1, 4, 5:
		return true, false
	case 2, 3, 6, 7, 8, 9:
		return false, true
	}
	return false, false
}

func (r *rdna) waveStart(t rdnaTok, lost bool) error {
	v, now := t.v, t.t
	var sa, simd, wgp, slot, pipe, me, wg uint8
	var isExt bool
	count := int(v >> 25 & 0x7F)
	if r.version <= 3 {
		sa, simd, wgp, slot = uint8(v>>7&1), uint8(v>>8&3), uint8(v>>10&7), uint8(v>>13&31)
		pipe, me = uint8(v>>21&3), uint8(v>>23&1)
	} else {
		sa, simd, wgp, slot = uint8(v>>7&1), uint8(v>>8&3), uint8(v>>10&15), uint8(v>>15&31)
		pipe, me = uint8(v>>20&3), uint8(v>>22&1)
		if t.typ == rWaveStartExt && v>>4&1 != 0 && v>>32&1 == 0 {
			isExt, wg = true, uint8(v>>33&31)
		}
	}
	cu := sa<<7 + wgp
	pc := r.regs.startPC(me, pipe)
	target := cu == r.target && simd == r.targetSIMD
	key := int(cu)<<7 | int(simd)<<5 | int(slot)
	if save, restore := cwsr(count); save || restore {
		s := &r.slots[slot]
		if target && save && len(*s) > 0 {
			w := (*s)[len(*s)-1]
			w.trap = trapStandby
			if w.contexts < 255 {
				w.contexts++
			}
			if !r.ps.rules.noContextInst {
				w.insts = append(w.insts, wire.Instruction{Time: now, Category: wire.CatContext, Duration: 1})
			}
		}
		if target && restore {
			if len(*s) == 0 || (*s)[len(*s)-1].ended {
				r.newWave(now, slot, wire.PC{}, me, pipe, wg)
			}
			w := (*s)[len(*s)-1]
			w.extendContext(now)
			w.trap = trapStandby
			if w.contexts < 255 {
				w.contexts++
			}
		}
		o := r.occSlot(key)
		occ := wire.Occupancy{Time: uint64(now), CU: cu, SIMD: simd, WaveID: slot, MEID: me, PipeID: pipe,
			IsExt: isExt, WorkgroupID: wg}
		if save {
			if o.running {
				occ.PC = o.pc
				r.occ = append(r.occ, occ)
				if r.saved == nil {
					r.saved = map[int]wire.PC{}
				}
				r.saved[key] = o.pc
			}
		} else {
			occ.PC = r.saved[key]
			delete(r.saved, key)
			o.running, o.pc = true, occ.PC
			occ.Start = true
			r.occ = append(r.occ, occ)
		}
		return r.occFull(false)
	}
	o := r.occSlot(key)
	if lost && o.running && !r.ps.rules.noLostEnd {
		r.occ = append(r.occ, wire.Occupancy{Time: uint64(now - 1), CU: cu, SIMD: simd, WaveID: slot})
	}
	o.running, o.pc = true, pc
	r.occ = append(doubled(r.occ), wire.Occupancy{PC: pc, Time: uint64(now), CU: cu, SIMD: simd, WaveID: slot,
		Start: true, MEID: me, PipeID: pipe, IsExt: isExt, WorkgroupID: wg})
	if err := r.occFull(true); err != nil {
		return err
	}
	if target {
		s := &r.slots[slot]
		for n := len(*s); n > 0 && (*s)[n-1].ended; n = len(*s) {
			w := (*s)[n-1]
			*s = (*s)[:n-1]
			r.setTop(slot)
			if err := r.emitWave(w); err != nil {
				return err
			}
		}
		r.newWave(now, slot, pc, me, pipe, wg)
	}
	return nil
}

// doubled returns s with room for one more element: when it is full, with
// twice the capacity (at least 256 more, and no more than enough for 2^16
// records while it holds fewer). append grows a large slice by a quarter
// at a time, so that the occupancy pool, filled to 2^16 records once per
// decode, was copied and cleared about five times its size.
func doubled[T any](s []T) []T {
	if len(s) < cap(s) {
		return s
	}
	n := max(len(s), 256)
	if len(s) < 1<<16 {
		n = min(n, 1<<16-len(s))
	}
	return slices.Grow(s, n)
}

// occFull flushes pending occupancy records: in a double-buffered capture
// as the library does, after a wave start once 65536 are pending (2.3.6
// step 5); otherwise when PoolLimit is reached.
func (r *rdna) occFull(start bool) error {
	if r.due(r.doubleBuffer, start, r.ps.limit) {
		return r.flushOcc()
	}
	return nil
}

func (r *rdna) flushOcc() error { return r.occPool.flush(r.em, &r.regs.code) }

func (r *rdna) waveEnd(t rdnaTok) error {
	v, now := t.v, t.t
	sa, simd, slot := uint8(v>>8&1), uint8(v>>9&3), uint8(v>>15&31)
	var wgp uint8
	if r.version <= 3 {
		wgp = uint8(v >> 11 & 7)
	} else {
		wgp = uint8(v >> 11 & 15)
	}
	cu := sa<<7 + wgp
	if cu == r.target && simd == r.targetSIMD {
		if r.ps.rules.noEmptySlotEnd && len(r.slots[slot]) == 0 {
			// 0.1.6, as on gfx9 (2.2.6): a target wave end with an empty
			// slot leaves no occupancy either.
			return nil
		}
		if w := r.top(uint64(slot)); w != nil {
			w.complete(now, r.ps.rules.closeInTrap)
			if r.ps.rules.emitAtWaveEnd {
				// 0.1.6 emits a wave at its WAVE_END (A.3 item 4; real
				// traces gfx1100_gemm_0 and gfx1200_gemm_0, where waves
				// come in the order they end).
				r.slots[slot] = r.slots[slot][:len(r.slots[slot])-1]
				r.setTop(slot)
				if err := r.emitWave(w); err != nil {
					return err
				}
			}
		}
	}
	o := r.occSlot(int(cu)<<7 | int(simd)<<5 | int(slot))
	var pc wire.PC
	if o.running {
		pc, o.running = o.pc, false
	} else {
		r.occFront = append(r.occFront, wire.Occupancy{CU: cu, SIMD: simd, WaveID: slot, Start: true})
	}
	r.occ = append(doubled(r.occ), wire.Occupancy{PC: r.regs.code.late(pc), Time: uint64(now), CU: cu, SIMD: simd,
		WaveID: slot})
	return r.occFull(false)
}

func (r *rdna) misc(t rdnaTok) error {
	f := t.v >> 16 & 0xFF
	ev := func(typ wire.EventType) error { return r.em.eventRec(typ, t.t, 0, 0, 0, 0) }
	if f&1 != 0 {
		if r.version <= 2 {
			if err := r.packetLoss(t.t); err != nil {
				return err
			}
		} else if err := ev(wire.EventSPMSample); err != nil {
			return err
		}
	}
	if f&2 != 0 {
		if err := ev(wire.EventGCRinse); err != nil {
			return err
		}
	}
	if f&8 != 0 {
		for s := range r.slots {
			if w := r.top(uint64(s)); w != nil && w.trap == trapRestored {
				w.trap = trapStandby
			}
		}
		if err := ev(wire.EventSaveContext); err != nil {
			return err
		}
	}
	if f&0x10 != 0 {
		if err := ev(wire.EventTTStallBegin); err != nil {
			return err
		}
	}
	if f&0x20 != 0 {
		if err := ev(wire.EventTTStallEnd); err != nil {
			return err
		}
	}
	if f&0x40 != 0 {
		if err := ev(wire.EventDIDTStallBegin); err != nil {
			return err
		}
	}
	if f&0x80 != 0 {
		return ev(wire.EventDIDTStallEnd)
	}
	return nil
}

func (r *rdna) reg(t rdnaTok) error {
	v := t.v
	pipe, me := uint8(v>>7&3), uint8(v>>9&3)
	cs := v>>15&1 != 0
	addr, data := uint32(v>>16&0xFFFF), uint32(v>>32)
	if cs {
		// Dispatches come from REG_INIT and flush events from EVENT on
		// RDNA: only the latches matter here.
		r.regs.csWrite(addr, data, me, pipe, r.version)
	}
	if (!cs || r.version <= 2) && addr == regUserData2 {
		if ev, _ := r.regs.userData2(data, me, pipe); ev != nil {
			return r.em.eventRec(ev.typ, t.t, me, pipe, 0, uint64(uint32(ev.id)))
		}
	}
	return nil
}

func (r *rdna) eventTok(t rdnaTok) error {
	v := t.v
	var typ wire.EventType
	switch v >> 18 & 0x3F {
	case 7:
		typ = wire.EventCSPartialFlush
	case 4, 6, 0x14, 0x16:
		typ = wire.EventCacheFlush
	case 0x28:
		typ = wire.EventBottomOfPipeTS
	case 0x36:
		typ = wire.EventTTFlush
	default:
		return nil
	}
	flags := uint16(1)
	if v>>11&1 != 0 {
		flags |= 2
	}
	// pipe 14..15, me 16..17 (2.3.4), as in REG_INIT.
	return r.em.eventRec(typ, t.t, uint8(v>>16&1), uint8(v>>14&3), flags, 0)
}

func (r *rdna) shaderData(t rdnaTok) error {
	v := t.v
	s := wire.ShaderData{Time: t.t}
	short := t.typ == rShaderDataShort
	if r.version <= 3 {
		if r.version > 2 && v>>14&1 != 0 {
			return nil
		}
		s.CU = uint8(v>>8&1)<<7 + uint8(v>>11&7)
		s.SIMD, s.WaveID = uint8(v>>9&3), uint8(v>>15&31)
		if short {
			s.Value = v >> 20 & 0xFF
		} else {
			s.Value = v >> 20 & 0xFFFFFFFF
		}
	} else {
		s.CU = uint8(v>>10&1)<<7 + uint8(v>>13&15)
		s.SIMD, s.WaveID = uint8(v>>11&3), uint8(v>>17&31)
		var sdt uint64
		if short {
			s.Value, sdt = v>>22&0xFF, v>>30&3
		} else {
			s.Value, sdt = v>>22&0xFFFFFFFF, v>>54&3
		}
		if sdt != 0 {
			s.Flags |= 1 << wire.ShaderDataPRIV
		}
	}
	if short {
		s.Flags |= 1 << wire.ShaderDataIMM
	}
	r.sd = append(r.sd, s)
	if len(r.sd) >= shaderDataFlush {
		err := r.em.shaderData(r.sd)
		r.sd = r.sd[:0]
		return err
	}
	return nil
}

func (r *rdna) flushRealtime() error {
	err := r.em.realtime(r.realtime)
	r.realtime = r.realtime[:0]
	return err
}

// endOfBuffer delivers what the library delivers at and after the end of
// a buffer (2.3.6, 4.3).
func (r *rdna) endOfBuffer() error {
	if _, err := r.lossAt(r.clock); err != nil {
		return err
	}
	for s := range r.slots {
		for _, w := range r.slots[s] {
			w.retranslate(&r.regs.code)
		}
	}
	if err := r.flushOcc(); err != nil {
		return err
	}
	if err := r.flushRealtime(); err != nil {
		return err
	}
	if err := r.em.shaderData(r.sd); err != nil {
		return err
	}
	if err := r.em.otherSIMD(r.other); err != nil {
		return err
	}
	for s := range r.slots {
		for _, w := range r.slots[s] {
			if err := r.emitWave(w); err != nil {
				return err
			}
		}
		r.slots[s], r.tops[s] = nil, nil
	}
	return r.ps.lostAndFreq(r.packetLost, r.regs.rtFreq)
}

// otherSIMD delivers a batch of INST_OTHER_SIMD records.
func (e *emitter) otherSIMD(o []wire.OtherSIMD) error {
	return e.batch(len(o), wire.Batch{Type: wire.TypeInstOtherSIMD, OtherSIMD: o})
}
