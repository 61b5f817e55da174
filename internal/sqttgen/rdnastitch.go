package sqttgen

import (
	"strings"

	"github.com/attkit/attkit/internal/wire"
)

// rline is a cached ISA line of the RDNA model's stitcher (spec §3.1).
type rline struct {
	text   string
	cls    lineClass
	pc     wire.PC
	next   wire.PC
	target wire.PC
}

func (m *rmodel) line(pc wire.PC) *rline {
	if l, ok := m.lines[pc]; ok {
		return l
	}
	var l *rline
	if m.isa != nil {
		if text, size, ok := m.isa(pc); ok {
			size = max(size, 4)
			l = &rline{text: text, cls: rdClassify(text, m.gen), pc: pc,
				next: wire.PC{Address: pc.Address + size, CodeObjectID: pc.CodeObjectID}}
			if l.cls == clsBranch {
				l.target = wire.PC{Address: uint64(int64(pc.Address) + 4 + 4*branchOffset(text)), CodeObjectID: pc.CodeObjectID}
			}
		}
	}
	if m.lines == nil {
		m.lines = map[wire.PC]*rline{}
	}
	m.lines[pc] = l
	return l
}

// skippable is spec §3.4: a line category that may have produced no token
// (SKIP, SMEM, VMEM, FLAT, LDS, VALU, IMMED).
func skippable(c lineClass) bool { return c != clsSALU && c <= clsImmed }

// rstitch assigns PCs to an RDNA wave's instructions as spec §3.5 says
// (the non-gfx9 branches; gfx12 V_MOV_B64) and returns the number of
// instructions consumed. The gfx12 excluded barrier waits (step 9) are not
// modelled: the generator never sets the header bit.
func (m *rmodel) rstitch(w *rwave) int {
	ins := w.rec.Instructions
	infos := w.pcInfos
	i, k, fails, skipped := 0, 0, 0, 0
	var next *rline
	for i < len(ins) && fails < 1000 {
		for k < len(infos) && infos[k].idx <= i {
			if infos[k].idx == i {
				if infos[k].pc != (wire.PC{}) && m.line(infos[k].pc) != nil {
					ins[i].PC = infos[k].pc
				} else if k+1 < len(infos) {
					i = infos[k+1].idx
					if i >= len(ins) {
						return i
					}
				}
			}
			k++
		}
		I := &ins[i]
		if I.Category == wire.CatContext {
			i++
			continue
		}
		if I.PC != (wire.PC{}) {
			i++
			line := m.line(I.PC)
			if line == nil {
				return 0
			}
			for line.cls == clsSkip {
				line = m.line(line.next)
				if line == nil {
					return 0
				}
				I.PC = line.pc
			}
			if line.cls == clsBranch && I.Category == wire.CatJump {
				next = m.line(line.target)
			} else {
				next = m.line(line.next)
			}
			continue
		}
		if m.gen >= 12 && i == 0 {
			if l := m.line(wire.PC{}); l == nil || l.text == "" {
				return 0
			}
		}
		line := next
		next = nil
		if line == nil || line.text == "" {
			return i
		}
		next = m.line(line.next)
		if line.cls == clsDontKnow || line.cls == clsSkip {
			continue
		}
		matched := false
		switch {
		case trivial(I.Category, line.cls):
			matched = true
		case line.cls == clsBranch:
			if I.Category != wire.CatJump {
				return i
			}
			next = m.line(line.target)
			matched = true
		case m.gen >= 12 && line.cls == clsVMovB64 && I.Category == wire.CatVALU:
			I.Duration = max(I.Duration, int32(I.Stall)+2)
			matched = true
		case I.Category == wire.CatImmed && skippable(line.cls):
			matched = true
			skipped++
		case strings.HasPrefix(line.text, "s_waitcnt") && skipped > 0:
			matched = true
			skipped--
		case strings.HasPrefix(line.text, "s_waitcnt") ||
			strings.Contains(line.text, "_load_") && !strings.Contains(line.text, "scratch_"):
			return i
		}
		if matched {
			I.PC = line.pc
			i++
			fails = 0
		} else {
			fails++
		}
	}
	return i
}
