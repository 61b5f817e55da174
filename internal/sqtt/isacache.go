package sqtt

import (
	"strings"

	"github.com/attkit/attkit/internal/isa"
	"github.com/attkit/attkit/internal/wire"
)

// Line categories of the stitcher (3.2). The ones shared with the trace
// side (SMEM..VALU, IMMED, BVH) have the public instruction category's
// number, so the two compare directly.
const (
	lcSkip        = 0
	lcSMEM        = 1
	lcSALU        = 2
	lcVMEM        = 3
	lcFLAT        = 4
	lcLDS         = 5
	lcVALU        = 6
	lcImmed       = 9
	lcBVH         = 12
	lcDontKnow    = 15
	lcBranch      = 16
	lcBarrierExcl = 17
	lcMFMAScale   = 18
	lcGFX9Barrier = 19
	lcVMovB64     = 20
	lcNone        = 255 // no category yet (trie nodes)
	catUnfinished = uint8(wire.CatUnresolved)
	// cat016Unfinished is the category 0.1.6 reports for an unfinished
	// entry that has a PC (A.4 item 8.2); no wire category has the value.
	cat016Unfinished = wire.InstCategory(16)
	catContext       = uint8(wire.CatContext)
	catMessage       = uint8(wire.CatMessage)
	catJump          = uint8(wire.CatJump)
	catNext          = uint8(wire.CatNext)
	catImmed         = uint8(wire.CatImmed)
	catVALU          = uint8(wire.CatVALU)
	catFLAT          = uint8(wire.CatFLAT)
	maxStitchFails   = 1000
)

// line is one cached answer of the ISA provider (3.1). The fields the
// stitcher's usual step reads (pc, cat, nextOK, usual, run, targOK,
// matched, next, target) come first, in as few cache lines as can be: a walk goes from
// line to line through next, a cache miss each when they are spread out.
type line struct {
	pc     wire.PC
	cat    uint8
	nextOK bool
	// usual has bit c set when an instruction of category c takes this
	// line in the stitcher's usual step (trivial); 0 for a line without a
	// token (no text, DONT_KNOW, SKIP).
	usual uint16
	// run is usual once next is resolved to a line (0 before, and when
	// there is none): usualRun's one test for a step it takes.
	run     uint16
	targOK  bool
	matched bool
	// pass says the line has no token but has text (DONT_KNOW, SKIP)
	// and its next line is a line: the walk passes it (step 8).
	pass   bool
	next   *line // resolved lazily; nil with nextOK set means "no line"
	target *line
	text   string
	nextPC wire.PC
}

// isaCache asks the provider once per PC for the whole parse call.
type isaCache struct {
	p           isa.Provider
	gfxip       int
	classify016 bool              // rules.classify016: no gfx12 v_mov_b64 or ds_bvh rule
	m           map[wire.PC]*line // nil value: the provider does not know the PC
	// last and lastPC are the line lookup returned last and its PC
	// (lastOK: there is one): the stitch looks a wave's first PC up two
	// or three times, and the waves of a kernel start at one PC.
	last   *line
	lastPC wire.PC
	lastOK bool
}

func newISACache(p isa.Provider, gfxip int) *isaCache {
	return &isaCache{p: p, gfxip: gfxip, m: make(map[wire.PC]*line)}
}

// lookup returns the line at pc, nil when the provider does not know it.
func (c *isaCache) lookup(pc wire.PC) *line {
	if c.lastOK && pc == c.lastPC {
		return c.last
	}
	l := c.find(pc)
	c.last, c.lastPC, c.lastOK = l, pc, true
	return l
}

// find is lookup without its one-line cache.
func (c *isaCache) find(pc wire.PC) *line {
	if l, ok := c.m[pc]; ok {
		return l
	}
	var l *line
	if c.p != nil {
		if text, size, ok := c.p.ISA(pc); ok {
			if size < 4 {
				size = 4
			}
			l = &line{pc: pc, text: text, cat: classify(text, c.gfxip),
				nextPC: wire.PC{Address: pc.Address + size, CodeObjectID: pc.CodeObjectID}}
			if c.classify016 {
				l.cat = classify016(l.cat, text)
			}
			l.usual = usualMask(l)
		}
	}
	c.m[pc] = l
	return l
}

// usualMask is line.usual of l.
func usualMask(l *line) (m uint16) {
	if l.text == "" || l.cat == lcDontKnow || l.cat == lcSkip {
		return 0
	}
	for ic := range uint8(16) {
		if trivial(ic, l.cat) {
			m |= 1 << ic
		}
	}
	return m
}

// next returns the line after l.
func (c *isaCache) next(l *line) *line {
	if !l.nextOK {
		l.next, l.nextOK = c.lookup(l.nextPC), true
		if l.next != nil {
			l.run = l.usual
			l.pass = l.text != "" && (l.cat == lcDontKnow || l.cat == lcSkip)
		}
	}
	return l.next
}

// target returns the line a taken branch at l jumps to (3.3).
func (c *isaCache) target(l *line) *line {
	if !l.targOK {
		off := branchOffset(l.text)
		pc := wire.PC{Address: l.pc.Address + 4 + uint64(4*off), CodeObjectID: l.pc.CodeObjectID}
		l.target, l.targOK = c.lookup(pc), true
	}
	return l.target
}

// branchOffset parses the last whitespace-separated word of a branch as a
// signed decimal (parsing stops at the first non-digit, no digits give 0)
// and reads values of 32768 and above as negative 16-bit numbers.
func branchOffset(text string) int64 {
	text = strings.TrimRight(text, " \t\n\r\v\f")
	i := strings.LastIndexAny(text, " \t\n\r\v\f")
	w := text[i+1:]
	neg := false
	if len(w) > 0 && (w[0] == '-' || w[0] == '+') {
		neg = w[0] == '-'
		w = w[1:]
	}
	var v int64
	for j := 0; j < len(w) && w[j] >= '0' && w[j] <= '9'; j++ {
		if v < 1<<40 {
			v = v*10 + int64(w[j]-'0')
		}
	}
	if neg {
		v = -v
	}
	if v >= 32768 {
		v -= 65536
	}
	return v
}

// trieNode is a node of the classifier's character trie.
type trieNode struct {
	next map[byte]*trieNode
	cat  uint8
}

var classTrie = buildTrie()

func buildTrie() *trieNode {
	root := &trieNode{cat: lcNone}
	add := func(cat uint8, prefixes ...string) {
		for _, p := range prefixes {
			n := root
			for i := 0; i < len(p); i++ {
				c := n.next[p[i]]
				if c == nil {
					c = &trieNode{cat: lcNone}
					if n.next == nil {
						n.next = map[byte]*trieNode{}
					}
					n.next[p[i]] = c
				}
				n = c
			}
			if n.cat == lcNone {
				n.cat = cat
			}
		}
	}
	add(lcImmed, "s_waitcnt", "s_wait_idle", "s_wait_kmcnt", "s_wait_loadcnt", "s_wait_storecnt",
		"s_wait_bvhcnt", "s_wait_expcnt", "s_wait_dscnt", "s_wait_samplecnt", "s_wait_event",
		"s_wait_xcnt", "s_wait_tensor", "s_wait_async", "s_nop", "s_sleep", "s_wakeup",
		"s_sendmsg", "s_setprio ", "s_set_inst", "s_inst_prefetch", "s_setkill", "s_version",
		"s_trap", "s_barrie", "s_endpgm", "s_icache_inv", "s_dcache_inv", "s_incperflvl",
		"s_sethalt", "s_decperflvl", "s_setvskip", "s_ttrace", "s_clause", "s_monitor")
	add(lcSkip, "s_wait_dep", "s_wait_alu", "buffer_nop", "s_set_vgpr", "s_delay")
	add(lcSALU, "s_setprio_inc", "s_call", "s_cvt", "s_getreg", "s_setreg", "s_add", "s_sub",
		"s_and", "s_or", "s_pack", "s_round", "s_denorm", "s_ctz", "s_cls", "s_cmp", "s_bit",
		"s_mov", "s_mul", "s_ash", "s_bf", "s_lsh", "s_min", "s_max", "s_abs", "s_cmov",
		"s_not", "s_nor", "s_wqm", "s_quadmask", "s_brev", "s_bcnt", "s_f", "s_sext",
		"s_cselect", "s_xor", "s_xnor", "s_nand", "s_getpc", "s_setpc", "s_swappc",
		"s_get_pc", "s_set_pc", "s_swap_pc")
	add(lcSMEM, "s_load", "s_buffer", "s_atomic", "s_atc", "s_scratch", "s_store", "s_dcache",
		"s_memrealtime", "s_prefetch")
	add(lcVMEM, "buffer_l", "buffer_s", "buffer_a", "buffer_g", "buffer_i", "buffer_w",
		"buffer_p", "buffer_d", "tbuffer_", "global_", "scratch_", "cluster_", "tensor_",
		"dds_", "image_l", "image_s", "image_a", "image_m", "image_g")
	add(lcFLAT, "flat_")
	add(lcLDS, "ds_", "lds_")
	add(lcBVH, "image_bvh")
	return root
}

// classify016 undoes the gfx12 rules AMD's 0.1.6 library does not have:
// v_mov_b64 is a plain VALU and ds_bvh stays LDS (observed with that
// library on generated gfx12 traces).
func classify016(cat uint8, text string) uint8 {
	switch {
	case cat == lcVMovB64:
		return lcVALU
	case cat == lcBVH && strings.HasPrefix(text, "ds_bvh"):
		return lcLDS
	}
	return cat
}

// classify gives an instruction text its stitcher category (3.2): the
// character walk skips characters without a child node and stops at the
// first node that carries a category.
func classify(text string, gfxip int) uint8 {
	if strings.Contains(text, "branch") {
		return lcBranch
	}
	if strings.HasPrefix(text, "v_") {
		switch {
		case gfxip == 9 && strings.HasPrefix(text, "v_mfma_scale_"):
			return lcMFMAScale
		case gfxip == 12 && strings.HasPrefix(text, "v_mov_b64"):
			return lcVMovB64
		}
		return lcVALU
	}
	cat := uint8(lcNone)
	n := classTrie
	for i := 0; i < len(text); i++ {
		if c := n.next[text[i]]; c != nil {
			n = c
		}
		if n.cat != lcNone {
			cat = n.cat
			break
		}
	}
	if cat == lcNone {
		if strings.HasPrefix(text, "s_") {
			cat = lcSALU
		} else {
			cat = lcDontKnow
		}
	}
	switch {
	case gfxip == 9 && cat == lcImmed && strings.HasPrefix(text, "s_barrier"):
		cat = lcGFX9Barrier
	case gfxip == 12 && cat == lcLDS && strings.HasPrefix(text, "ds_bvh"):
		cat = lcBVH
	}
	return cat
}
