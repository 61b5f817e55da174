package sqttgen

import (
	"strings"

	"github.com/attkit/attkit/internal/wire"
)

// isaLine is a cached ISA line of a model's stitcher (spec §3.1).
type isaLine struct {
	text    string
	cls     lineClass
	pc      wire.PC
	next    wire.PC
	target  wire.PC // of a branch
	matched bool    // RDNA: matched once (spec §3.5 step 11)
}

// isaLines is the ISA as the gfx9 and RDNA stitchers see it: isa answers
// their questions, classify gives a line's class, lines caches the answers.
type isaLines struct {
	isa      func(wire.PC) (string, uint64, bool)
	classify func(text string) lineClass
	lines    map[wire.PC]*isaLine
}

func (c *isaLines) line(pc wire.PC) *isaLine {
	if l, ok := c.lines[pc]; ok {
		return l
	}
	var l *isaLine
	if c.isa != nil {
		if text, size, ok := c.isa(pc); ok {
			size = max(size, 4)
			l = &isaLine{text: text, cls: c.classify(text), pc: pc,
				next: wire.PC{Address: pc.Address + size, CodeObjectID: pc.CodeObjectID}}
			if l.cls == clsBranch {
				l.target = wire.PC{Address: uint64(int64(pc.Address) + 4 + 4*branchOffset(text)), CodeObjectID: pc.CodeObjectID}
			}
		}
	}
	if c.lines == nil {
		c.lines = map[wire.PC]*isaLine{}
	}
	c.lines[pc] = l
	return l
}

// after is the line after l when it produced an instruction of category
// cat: a taken branch's target, else the next line.
func (c *isaLines) after(l *isaLine, cat wire.InstCategory) *isaLine {
	if l.cls == clsBranch && cat == wire.CatJump {
		return c.line(l.target)
	}
	return c.line(l.next)
}

// anchor applies the anchors infos[k:] that are at or before instruction i
// (spec §3.5 step 1): instruction i takes the PC of its anchor when the ISA
// has that line, else the stitcher goes on at the next anchor's
// instruction. It returns the new i and k; i >= len(ins) ends the wave.
func (c *isaLines) anchor(ins []wire.Instruction, infos []pcInfo, i, k int) (int, int) {
	for k < len(infos) && infos[k].idx <= i {
		if infos[k].idx == i {
			if infos[k].pc != (wire.PC{}) && c.line(infos[k].pc) != nil {
				ins[i].PC = infos[k].pc
			} else if k+1 < len(infos) {
				i = infos[k+1].idx
				if i >= len(ins) {
					return i, k
				}
			}
		}
		k++
	}
	return i, k
}

// known is the line of an instruction I with a PC, moved past SKIP lines
// (spec §3.5 step 2); nil when the ISA has no such line.
func (c *isaLines) known(I *wire.Instruction) *isaLine {
	line := c.line(I.PC)
	if line == nil {
		return nil
	}
	for line.cls == clsSkip {
		line = c.line(line.next)
		if line == nil {
			return nil
		}
		I.PC = line.pc
	}
	return line
}

// trivial is the stitcher's trivial match of a traced category with a line
// category (spec §3.4).
func trivial(c wire.InstCategory, l lineClass) bool {
	return uint8(c) == uint8(l) || l == clsBranch && c == wire.CatNext ||
		c == wire.CatMessage && l == clsImmed || c == wire.CatFLAT && l == clsVMEM
}

// stitch assigns PCs to a gfx9 wave's instructions as spec §3.5 says and
// returns the number of instructions consumed.
func (m *model) stitch(w *modelWave) int {
	ins := w.rec.Instructions
	infos := w.pcInfos
	i, k, fails := 0, 0, 0
	var next *isaLine
	for i < len(ins) && fails < 1000 {
		if i, k = m.anchor(ins, infos, i, k); i >= len(ins) {
			return i
		}
		I := &ins[i]
		if I.Category == wire.CatContext {
			i++
			continue
		}
		if I.PC != (wire.PC{}) {
			i++
			line := m.known(I)
			if line == nil {
				return 0
			}
			if line.cls == clsGFX9Barrier && i < len(ins) && !m.v016 {
				ins[i].PC = I.PC
				i++
			}
			next = m.after(line, I.Category)
			continue
		}
		line := next
		next = nil
		if line == nil || line.text == "" || I.Category == catPlaceholder {
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
		case line.cls == clsMFMAScale && I.Category == wire.CatVALU:
			m.mfmaScale(w, i)
			matched = true
		case line.cls == clsGFX9Barrier:
			if I.Category == wire.CatMessage {
				i++
				if i < len(ins) && ins[i].Category == wire.CatImmed {
					ins[i].PC = line.pc
				}
				matched = true
			} else {
				matched = I.Category == wire.CatImmed
			}
		default:
			if i+1 < len(ins) && uint8(ins[i+1].Category) == uint8(line.cls) && next != nil &&
				uint8(I.Category) == uint8(next.cls) {
				ins[i], ins[i+1] = ins[i+1], ins[i]
				next = line
				fails++
				continue
			}
			if strings.HasPrefix(line.text, "s_waitcnt") ||
				strings.Contains(line.text, "_load_") && !strings.Contains(line.text, "scratch_") {
				return i
			}
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

// mfmaScale applies the gfx9 MFMA_SCALE rule of spec §3.5 step 10 to
// instruction i.
func (m *model) mfmaScale(w *modelWave, i int) {
	ins := w.rec.Instructions
	I := &ins[i]
	I.Duration += 4
	prevEnd := w.rec.BeginTime
	if i > 0 {
		prevEnd = iend(&ins[i-1])
	}
	nextT := w.rec.EndTime
	if i+1 < len(ins) {
		nextT = ins[i+1].Time
	}
	if I.Time > prevEnd {
		I.Time -= 4
		if iend(I) < nextT {
			I.Duration += 4
		}
	} else if iend(I) > nextT {
		I.Duration -= 4
	}
}
