package sqtt

import (
	"sort"

	"github.com/attkit/attkit/internal/wire"
)

// Compute register indices (offsets from COMPUTE_DISPATCH_INITIATOR, 2.1.1).
const (
	regDispatchInitiator = 0x00
	regNumThreadX        = 0x07
	regNumThreadY        = 0x08
	regNumThreadZ        = 0x09
	regPgmLo             = 0x0C
	regPgmHi             = 0x0D
	regPktLo             = 0x0E
	regPktHi             = 0x0F
	regRsrc1             = 0x12
	regRsrc2             = 0x13
	regRsrc3             = 0x2D
	regNowhere           = 0x7F
	csPartialFlush       = 7

	regUserData2 = 0xC342
	regUserData3 = 0xC343
	rocMagic     = 0x434F5200 // bytes 00 'R' 'O' 'C'
)

// Instrumentation opcodes and types (2.1.2).
const (
	opCodeObj       = 4
	opRTTimestamp   = 5
	opAgentInfo     = 6
	opRTTimestampLo = 7

	coTail   = 0
	coSizeLo = 1
	coAddrLo = 2
	coAddrHi = 3
	coSizeHi = 4
	coIDLo   = 5
	coIDHi   = 6

	stateInactive   = -2
	stateWaitHeader = -1
)

// codeRange is a loaded code object: [base, base+size) is code object id.
type codeRange struct{ base, size, id uint64 }

// addrTable maps addresses to code objects; ranges never overlap.
type addrTable struct{ r []codeRange } // sorted by base

func (t *addrTable) insert(c codeRange) {
	if c.size == 0 {
		return
	}
	keep := t.r[:0]
	for _, r := range t.r {
		if r.base < c.base+c.size && c.base < r.base+r.size {
			continue // evicted
		}
		keep = append(keep, r)
	}
	t.r = append(keep, c)
	sort.Slice(t.r, func(a, b int) bool { return t.r[a].base < t.r[b].base })
}

func (t *addrTable) remove(id uint64) {
	keep := t.r[:0]
	for _, r := range t.r {
		if r.id != id {
			keep = append(keep, r)
		}
	}
	t.r = keep
}

func (t *addrTable) find(addr uint64) (codeRange, bool) {
	// The last range whose base is addr or below (a binary search, as
	// sort.Search's with the test written in).
	lo, hi := 0, len(t.r)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if t.r[m].base > addr {
			hi = m
		} else {
			lo = m + 1
		}
	}
	if i := lo - 1; i >= 0 && addr-t.r[i].base < t.r[i].size {
		return t.r[i], true
	}
	return codeRange{}, false
}

// codeTables is the code-object state of one buffer: the active list, the
// address table and the "from start" table (2.1.2, 2.1.3).
type codeTables struct {
	active    []uint64
	addr      addrTable
	fromStart addrTable
}

// translate turns a virtual address into a PC (2.1.3).
func (t *codeTables) translate(addr uint64) wire.PC {
	if r, ok := t.addr.find(addr); ok {
		return wire.PC{Address: addr - r.base, CodeObjectID: r.id}
	}
	return wire.PC{Address: addr}
}

// late re-translates an unattributed PC through the "from start" table.
func (t *codeTables) late(pc wire.PC) wire.PC {
	if pc.CodeObjectID != 0 || pc.Address == 0 {
		return pc
	}
	if r, ok := t.fromStart.find(pc.Address); ok {
		return wire.PC{Address: pc.Address - r.base, CodeObjectID: r.id}
	}
	return pc
}

func (t *codeTables) isActive(id uint64) int {
	for i, a := range t.active {
		if a == id {
			return i
		}
	}
	return -1
}

// pipeRegs are the registers latched per (me&1, pipe).
type pipeRegs struct {
	pgm, pkt           uint64
	coAddr, coSize, co uint64 // code-object packet latches
}

// regState is the compute-register and instrumentation state (2.1).
type regState struct {
	pipes        [2][4]pipeRegs
	numThread    [3]uint32
	rsrc1, rsrc2 uint32
	rsrc3        uint32
	ud2          int // stateInactive, stateWaitHeader or the CODEOBJ payload type
	rtFreq       uint64
	perfInterval int64
	code         codeTables
}

func newRegState() regState { return regState{ud2: stateInactive} }

func setLo(v *uint64, lo uint32) { *v = *v&^0xFFFFFFFF | uint64(lo) }
func setHi(v *uint64, hi uint32) { *v = *v&0xFFFFFFFF | uint64(hi)<<32 }

// startPC is the translated wave start address for (me, pipe).
func (s *regState) startPC(me, pipe uint8) wire.PC {
	return s.code.translate((s.pipes[me&1][pipe&3].pgm << 8) & (1<<48 - 1))
}

// csWrite applies a compute-register write. It returns a dispatch when the
// write starts one and whether it is a CS_PARTIAL_FLUSH event.
func (s *regState) csWrite(reg uint32, data uint32, me, pipe uint8, ttVersion int) (disp *wire.Dispatch, flush bool) {
	p := &s.pipes[me&1][pipe&3]
	switch reg {
	case regDispatchInitiator:
		if data&1 != 0 {
			d := s.dispatch(me, pipe, ttVersion)
			return &d, false
		}
	case regNumThreadX, regNumThreadY, regNumThreadZ:
		s.numThread[reg-regNumThreadX] = data
	case regPgmLo:
		setLo(&p.pgm, data)
	case regPgmHi:
		setHi(&p.pgm, data)
	case regPktLo:
		setLo(&p.pkt, data)
	case regPktHi:
		setHi(&p.pkt, data)
	case regRsrc1:
		s.rsrc1 = data
	case regRsrc2:
		s.rsrc2 = data
	case regRsrc3:
		s.rsrc3 = data
	case regNowhere:
		return nil, data == csPartialFlush
	}
	return nil, false
}

// dispatch builds a DISPATCH record from the latched state (2.1.5).
func (s *regState) dispatch(me, pipe uint8, ttVersion int) wire.Dispatch {
	lds := ((s.rsrc2 >> 15) & 0x1FF) * 512
	vgprs := (s.rsrc1&0x3F)*8 + 8
	sgprs := uint32(128)
	switch {
	case ttVersion == 1:
		lds = lds * 10 / 4
	case ttVersion >= 5:
		lds *= 2
		vgprs *= 2
	}
	if ttVersion <= 1 {
		sgprs = ((s.rsrc1>>7)&7)*16 + 16
	}
	var flags int32
	if s.rsrc1&(1<<10) != 0 {
		flags |= 0x1
	}
	if s.rsrc1&(1<<11) != 0 {
		flags |= 0x2
	}
	if s.rsrc1&(1<<14) != 0 {
		flags |= 0x4
	}
	if s.rsrc2&1 != 0 {
		flags |= 0x8
	}
	return wire.Dispatch{
		MEID: me, PipeID: pipe,
		UserSGPRs:       uint16((s.rsrc2 >> 1) & 0x1F),
		Flags:           flags,
		VGPRs:           vgprs,
		SGPRs:           sgprs,
		LDSSize:         lds,
		ThreadDim:       s.numThread,
		DispatchPktAddr: s.pipes[me&1][pipe&3].pkt,
		EntryPoint:      s.startPC(me, pipe),
	}
}

// coEvent is a code-object load or unload the USERDATA2 protocol produced.
type coEvent struct {
	typ wire.EventType
	id  uint64
}

// userData2 runs the instrumentation state machine for one USERDATA2
// write (2.1.2). It returns a code-object event, if any, and whether the
// perf-counter interval was announced for the first time.
func (s *regState) userData2(data uint32, me, pipe uint8) (ev *coEvent, intervalChanged bool) {
	switch s.ud2 {
	case stateInactive:
		if data == rocMagic {
			s.ud2 = stateWaitHeader
		}
		return nil, false
	case stateWaitHeader:
		op, typ, d20 := data&0xFF, int(data>>8)&0xF, data>>12
		switch {
		case op == opAgentInfo && typ == 0:
			s.rtFreq = uint64(d20) * 1000
		case op == opAgentInfo && typ == 1:
			// Only the first announcement re-processes pooled records:
			// re-processing on every change could double them each time.
			first := s.perfInterval == 0 && d20 != 0
			s.perfInterval = int64(d20)
			return nil, first
		case op == opCodeObj && d20 == 0:
			s.ud2 = typ
		}
		return nil, false
	}
	typ := s.ud2
	s.ud2 = stateWaitHeader
	p := &s.pipes[me&1][pipe&3]
	switch typ {
	case coSizeLo:
		setLo(&p.coSize, data)
	case coSizeHi:
		setHi(&p.coSize, data)
	case coAddrLo:
		setLo(&p.coAddr, data)
	case coAddrHi:
		setHi(&p.coAddr, data)
	case coIDLo:
		setLo(&p.co, data)
	case coIDHi:
		setHi(&p.co, data)
	case coTail:
		unload, fromStart := data&1 != 0, data&2 != 0
		id := uint64(data >> 2)
		if id == 0 {
			id = p.co
		}
		t := &s.code
		i := t.isActive(id)
		switch {
		case !unload && i < 0:
			t.active = append(t.active, id)
			r := codeRange{base: p.coAddr, size: p.coSize, id: id}
			t.addr.insert(r)
			if fromStart {
				t.fromStart.insert(r)
			}
			return &coEvent{wire.EventCodeObjectLoad, id}, false
		case unload && i >= 0:
			t.active = append(t.active[:i], t.active[i+1:]...)
			t.addr.remove(id)
			return &coEvent{wire.EventCodeObjectUnload, id}, false
		}
	}
	return nil, false
}
