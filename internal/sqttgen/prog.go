package sqttgen

import (
	"errors"
	"fmt"
	"strings"

	"github.com/attkit/attkit/internal/isa"
	"github.com/attkit/attkit/internal/wire"
)

// Line kinds: what an instruction does to the walk and which tokens it
// produces.
const (
	kindPlain      = iota // one ISSUE INST + INST token
	kindNoToken           // SKIP or DONT_KNOW line: no token, the walk goes on
	kindImmed             // one ISSUE IMMED
	kindBarrier           // ISSUE IMMED, or OTHER_MSG INST + ISSUE IMMED
	kindTTrace            // ISSUE IMMED + SHADERDATA
	kindEndpgm            // ISSUE IMMED, then the wave ends
	kindBranchCond        // JUMP or NEXT
	kindBranch            // unconditional: JUMP
	kindSetPC             // INST type PC + INST_PC: return or jump
	kindSwapPC            // INST type PC + INST_PC: call
)

type line struct {
	pc     wire.PC
	size   uint64
	text   string
	cls    lineClass
	kind   uint8
	typ    uint8 // INST type for kindPlain
	alt    uint8 // alternative INST type (FLAT for a VMEM line), 0xFF if none
	next   int32 // fall-through line, -1 when not in the program
	target int32 // branch target line, -1 when none or not in the program
	dist   int32 // fewest lines to an s_endpgm, -1 when none is reachable
}

// program is the part of a code object reachable from the kernel entries.
type program struct {
	lines []line
	at    map[wire.PC]int32
	funcs []int32 // function entries (callee candidates for s_swappc)
	end   uint64  // highest end address seen (per the code object of the entries)
}

const maxProgramLines = 1 << 20

func lineKind(text string, cls lineClass) (kind, typ, alt uint8) {
	alt = 0xFF
	has := func(s string) bool { return strings.Contains(text, s) }
	switch cls {
	case clsSkip, clsDontKnow, clsBVH:
		return kindNoToken, 0, alt
	case clsBranch:
		if strings.HasPrefix(text, "s_branch") {
			return kindBranch, instJump, alt
		}
		return kindBranchCond, instJump, alt
	case clsGFX9Barrier:
		return kindBarrier, 0, alt
	case clsImmed:
		switch {
		case strings.HasPrefix(text, "s_endpgm"):
			return kindEndpgm, 0, alt
		case strings.HasPrefix(text, "s_ttracedata"):
			return kindTTrace, 0, alt
		}
		return kindImmed, 0, alt
	case clsSMEM:
		if has("store") || has("atomic") {
			return kindPlain, instSMEMWr, alt
		}
		return kindPlain, instSMEMRd, alt
	case clsSALU:
		switch {
		case strings.HasPrefix(text, "s_setpc") || strings.HasPrefix(text, "s_set_pc"):
			return kindSetPC, instPC, alt
		case strings.HasPrefix(text, "s_swappc") || strings.HasPrefix(text, "s_swap_pc"):
			return kindSwapPC, instPC, alt
		case has("64"):
			return kindPlain, instSALU64, alt
		}
		return kindPlain, instSALU32, alt
	case clsVMEM:
		st := has("store") || has("atomic")
		if strings.HasPrefix(text, "global_") || strings.HasPrefix(text, "scratch_") {
			if st {
				alt = instFLATWr
			} else {
				alt = instFLATRd
			}
		}
		if st {
			return kindPlain, instVMEMWr, alt
		}
		return kindPlain, instVMEMRd, alt
	case clsFLAT:
		if has("store") || has("atomic") {
			return kindPlain, instFLATWr, alt
		}
		return kindPlain, instFLATRd, alt
	case clsLDS:
		return kindPlain, instLDS, alt
	case clsVALU, clsMFMAScale:
		switch {
		case strings.HasPrefix(text, "v_mfma") || strings.HasPrefix(text, "v_smfma"):
			return kindPlain, instVALUMAI, alt
		case has("f64") || has("b64") || has("u64") || has("i64"):
			return kindPlain, instVALU64, alt
		}
		return kindPlain, instVALU32, alt
	}
	return kindNoToken, 0, alt
}

// loadProgram discovers the lines reachable from the entries by asking p,
// following fall-through and branch targets.
func loadProgram(p isa.Provider, entries []wire.PC, funcs []wire.PC) (*program, error) {
	pr := &program{at: map[wire.PC]int32{}}
	var queue []wire.PC
	add := func(pc wire.PC) int32 {
		if i, ok := pr.at[pc]; ok {
			return i
		}
		text, size, ok := p.ISA(pc)
		if !ok {
			return -1
		}
		if len(pr.lines) >= maxProgramLines {
			return -1
		}
		size = max(size, 4)
		cls := classify(text)
		k, typ, alt := lineKind(text, cls)
		i := int32(len(pr.lines))
		pr.lines = append(pr.lines, line{pc: pc, size: size, text: text, cls: cls, kind: k, typ: typ,
			alt: alt, next: -1, target: -1, dist: -1})
		pr.at[pc] = i
		pr.end = max(pr.end, pc.Address+size)
		queue = append(queue, pc)
		return i
	}
	for _, e := range entries {
		if add(e) < 0 {
			return nil, fmt.Errorf("kernel entry %#x (code object %d) is not in the ISA", e.Address, e.CodeObjectID)
		}
	}
	for _, f := range funcs {
		if i := add(f); i >= 0 {
			pr.funcs = append(pr.funcs, i)
		}
	}
	for len(queue) > 0 {
		pc := queue[0]
		queue = queue[1:]
		i := pr.at[pc]
		l := pr.lines[i]
		if l.text == "" {
			continue
		}
		var nx, tg int32 = -1, -1
		if l.kind != kindEndpgm && l.kind != kindBranch {
			nx = add(wire.PC{Address: pc.Address + l.size, CodeObjectID: pc.CodeObjectID})
		}
		if l.kind == kindBranch || l.kind == kindBranchCond {
			t := int64(pc.Address) + 4 + 4*branchOffset(l.text)
			if t >= 0 {
				tg = add(wire.PC{Address: uint64(t), CodeObjectID: pc.CodeObjectID})
			}
		}
		pr.lines[i].next, pr.lines[i].target = nx, tg
	}
	pr.distances()
	return pr, nil
}

// distances computes, for every line, the fewest lines to an s_endpgm (or
// to a return, s_setpc) along the control flow, by relaxation.
// skipNoToken returns the first line from cur on, following fall-through,
// that produces a token; what a line is, the generator tells (noToken,
// and skip for the lines the stitcher skips). A wave at a stitch anchor
// (anchor) may pass only such skipped lines.
func (pr *program) skipNoToken(cur int32, anchor bool, kind func(i int32) (noToken, skip bool)) (int32, error) {
	for hops := 0; ; hops++ {
		if cur < 0 {
			return cur, errors.New("the simulated wave left the indexed program")
		}
		l := &pr.lines[cur]
		if l.text == "" {
			return cur, fmt.Errorf("instruction at %#x has no text", l.pc.Address)
		}
		if hops > len(pr.lines)+16 {
			return cur, fmt.Errorf("no instruction producing a token after %#x", l.pc.Address)
		}
		noToken, skip := kind(cur)
		if !noToken {
			return cur, nil
		}
		if anchor && !skip {
			return cur, fmt.Errorf("%#x: %q starts a stitch anchor but produces no token", l.pc.Address, l.text)
		}
		cur = l.next
	}
}

func (pr *program) distances() {
	ls := pr.lines
	for i := range ls {
		if ls[i].kind == kindEndpgm || ls[i].kind == kindSetPC {
			ls[i].dist = 0
		}
	}
	for changed := true; changed; {
		changed = false
		for i := len(ls) - 1; i >= 0; i-- {
			l := &ls[i]
			if l.dist == 0 || l.text == "" {
				continue
			}
			best := int32(-1)
			for _, s := range [2]int32{l.next, l.target} {
				if s >= 0 && ls[s].dist >= 0 && ls[s].text != "" && (best < 0 || ls[s].dist+1 < best) {
					best = ls[s].dist + 1
				}
			}
			if l.kind == kindBranch {
				best = -1
				if l.target >= 0 && ls[l.target].dist >= 0 {
					best = ls[l.target].dist + 1
				}
			}
			if best >= 0 && (l.dist < 0 || best < l.dist) {
				l.dist = best
				changed = true
			}
		}
	}
}

// kernelSet is what kernelProgram chose: the program, the kernels run and
// their entry PCs (in the same order), and the ISA provider behind them.
type kernelSet struct {
	prog    *program
	kernels []Kernel
	entries []wire.PC
	isa     isa.Provider
}

// kernelProgram picks the kernels a generated trace runs (the config's, or
// every kernel of the index; at most eight, chosen by r, for the eight
// (me, pipe) register sets) and loads their program, with the index's other
// functions as call targets. It stores the kernel list in cfg.Kernels.
func kernelProgram(cfg *Config, r *rng) (kernelSet, error) {
	p := cfg.ISA
	var funcs []wire.PC
	if cfg.Index != nil {
		p = isa.NewTable(cfg.Index)
		if len(cfg.Kernels) == 0 {
			cfg.Kernels = kernelsOf(cfg.Index)
		}
		kset := map[wire.PC]bool{}
		for _, k := range cfg.Kernels {
			kset[wire.PC{Address: k.Entry, CodeObjectID: k.CodeObjectID}] = true
		}
		for _, row := range cfg.Index.Rows {
			if row.Kind == wire.RowFunction && !kset[row.PC()] {
				funcs = append(funcs, row.PC())
			}
		}
	}
	ks := cfg.Kernels
	if len(ks) == 0 {
		return kernelSet{}, errors.New("no kernel to run: the index has no kernels and none was given")
	}
	for len(ks) > 8 {
		i := r.intn(len(ks))
		ks = append(ks[:i:i], ks[i+1:]...)
	}
	var entries []wire.PC
	for _, k := range ks {
		if k.Entry%256 != 0 {
			return kernelSet{}, fmt.Errorf("kernel entry %#x is not 256-byte aligned", k.Entry)
		}
		if k.CodeObjectID != 0 && !cfg.Instrument {
			return kernelSet{}, fmt.Errorf("kernel in code object %d needs Instrument (code-object load packets) to be attributed", k.CodeObjectID)
		}
		entries = append(entries, wire.PC{Address: k.Entry, CodeObjectID: k.CodeObjectID})
	}
	prog, err := loadProgram(p, entries, funcs)
	return kernelSet{prog: prog, kernels: ks, entries: entries, isa: p}, err
}

// coInfo is a code object of a generated trace: its id, load address and
// size.
type coInfo struct {
	id, base, size uint64
}

// coLayout is the code objects of a generated trace, in the order the
// kernels first name them.
type coLayout []coInfo

// layoutCodeObjects places the code objects of the kernels ks: with
// Instrument, the i-th at cfg.LoadAddress + i<<32 (else at 0), each as large
// as the program's lines and the index's ranges in it, rounded up to 4 KiB.
func layoutCodeObjects(cfg *Config, ks []Kernel, prog *program) coLayout {
	var cos coLayout
	for _, k := range ks {
		if cos.find(k.CodeObjectID) < 0 {
			cos = append(cos, coInfo{id: k.CodeObjectID})
		}
	}
	for i := range cos {
		c := &cos[i]
		if cfg.Instrument {
			c.base = cfg.LoadAddress + uint64(i)<<32
		}
		for _, l := range prog.lines {
			if l.pc.CodeObjectID == c.id {
				c.size = max(c.size, l.pc.Address+l.size)
			}
		}
		if cfg.Index != nil {
			for _, o := range cfg.Index.Objects {
				if o.ID == c.id {
					for _, r := range o.Ranges {
						c.size = max(c.size, r.End)
					}
				}
			}
		}
		c.size = (c.size + 4095) &^ 4095
	}
	return cos
}

func (cos coLayout) find(id uint64) int {
	for i, c := range cos {
		if c.id == id {
			return i
		}
	}
	return -1
}

// base is the load address of code object id (0 for an unknown one).
func (cos coLayout) base(id uint64) uint64 {
	if i := cos.find(id); i >= 0 {
		return cos[i].base
	}
	return 0
}
