package main

import (
	"fmt"
	"strconv"
	"strings"
)

// The harness frames traces into tokens with its own tables, written from
// docs/spec/sqtt-format.md (§2.2.2 and §2.2.4 for gfx9, §2.3.2 and §2.3.4 for
// RDNA) and independent of internal/sqtt's, so that a framing mistake in the
// decoder is not copied into the mutations that are meant to find it.
//
// A token is kept as its nibbles (4-bit groups, stream order), which fits both
// families: gfx9 tokens are 2, 4, 6 or 8 bytes (little-endian, so the low
// nibble of each byte first) and RDNA tokens are 4 to 72 bits on nibble
// boundaries. Bit i of a token is bit i%4 of nibble i/4.

// A field is a named bit range [lo, hi] of a token (inclusive, as the
// specification writes them).
type field struct {
	name   string
	lo, hi int
}

// A kind is one token type of a generation's table.
type kind struct {
	name   string
	bits   int // length in bits (a gfx12 WAVE_START_EXT grows by its extension bytes)
	pbits  int // bits that identify the kind (RDNA pattern, gfx9 type nibble)
	tb, te int // time-delta field [tb, te]; te < tb when there is none
	fields []field
}

func (k *kind) hasTime() bool { return k.te >= k.tb }

// A gen is the framing of one architecture generation: gfx9, or an RDNA
// header version.
type gen struct {
	name    string // "gfx9", "gfx10", "gfx11", "gfx12"
	rdna    bool
	kinds   []kind
	lookup  [256]uint8 // RDNA: the kind of the next 8 stream bits; gfx9: of the type nibble
	header  uint8      // kind of the header token (gfx9: the 8-byte software header)
	tail    uint8      // kind of a partial token cut by the end of the buffer
	ext     int        // gfx12: kind whose token is followed by extension bytes; -1 none
	byName  map[string][]uint8
	nopKind int // RDNA NOP, -1 for gfx9
}

func (g *gen) kindName(k uint8) string { return g.kinds[k].name }

// tokenName names a token's kind; a partial token is named by the kind it
// begins ("partial WAVE_START").
func (g *gen) tokenName(t *token) string {
	if t.kind != g.tail || len(t.nib) == 0 {
		return g.kindName(t.kind)
	}
	var k uint8
	if g.rdna {
		k = g.lookup[t.low8()]
	} else {
		k = g.lookup[t.nib[0]]
	}
	return "partial " + g.kindName(k)
}

// A token is one framed token.
type token struct {
	kind uint8
	nib  []uint8
}

// bits returns the token's bits lo..hi (inclusive); bits past its end read 0.
func (t *token) bits(lo, hi int) uint64 {
	var v uint64
	for i := hi; i >= lo; i-- {
		v <<= 1
		if i/4 < len(t.nib) {
			v |= uint64(t.nib[i/4]>>(i%4)) & 1
		}
	}
	return v
}

// withBits returns a copy of t whose bits lo..hi hold v. The nibbles are
// copied: tokens share their nibbles with the seed traces.
func (t token) withBits(lo, hi int, v uint64) token {
	nib := append([]uint8(nil), t.nib...)
	for i := lo; i <= hi && i/4 < len(nib); i++ {
		b := uint8(v>>(i-lo)) & 1
		nib[i/4] = nib[i/4]&^(1<<(i%4)) | b<<(i%4)
	}
	t.nib = nib
	return t
}

// low8 is the lookup index of an RDNA token: its first 8 stream bits.
func (t *token) low8() uint8 { return uint8(t.bits(0, 7)) }

// nibbles returns the stream of data as nibbles, low nibble of each byte first.
func nibbles(data []byte) []uint8 {
	n := make([]uint8, 2*len(data))
	for i, b := range data {
		n[2*i], n[2*i+1] = b&0xF, b>>4
	}
	return n
}

// frame splits a trace into tokens and the count of zero bytes that end it
// (the padding real buffers end with; its NOP or zero MISC tokens are not
// listed). assemble(frame(data)) == data.
func (g *gen) frame(data []byte) ([]token, int, error) {
	nib := nibbles(data)
	last := -1 // last non-zero nibble
	for i := len(nib) - 1; i >= 0; i-- {
		if nib[i] != 0 {
			last = i
			break
		}
	}
	var toks []token
	p := 0
	if !g.rdna {
		if len(data) < 8 {
			return nil, 0, fmt.Errorf("%d bytes: no gfx9 header", len(data))
		}
		toks = append(toks, token{kind: g.header, nib: nib[:16]})
		p = 16
	}
	for p < len(nib) && p <= last {
		var k uint8
		if g.rdna {
			idx := nib[p]
			if p+1 < len(nib) {
				idx |= nib[p+1] << 4
			}
			k = g.lookup[idx]
		} else {
			k = g.lookup[nib[p]]
		}
		n := g.kinds[k].bits / 4
		if int(k) == g.ext {
			for p+n+1 < len(nib) && nib[p+n]&1 == 1 {
				n += 2 // an extension byte follows while the next bit is 1
			}
		}
		if p+n > len(nib) {
			toks = append(toks, token{kind: g.tail, nib: nib[p:]})
			p = len(nib)
			break
		}
		toks = append(toks, token{kind: k, nib: nib[p : p+n]})
		p += n
	}
	if g.rdna && (len(toks) == 0 || toks[0].kind != g.header) {
		return nil, 0, fmt.Errorf("the stream does not begin with a HEADER token")
	}
	p += p & 1
	return toks, (len(nib) - p) / 2, nil
}

// assemble writes tokens back into a trace, with pad zero bytes at the end
// (a zero nibble first when the tokens end inside a byte).
func assemble(toks []token, pad int) []byte {
	n := 0
	for i := range toks {
		n += len(toks[i].nib)
	}
	out := make([]byte, (n+1)/2+pad)
	p := 0
	for i := range toks {
		for _, v := range toks[i].nib {
			out[p/2] |= v << (4 * (p & 1))
			p++
		}
	}
	return out
}

// offsets returns each token's nibble offset in the assembled trace.
func offsets(toks []token) []int {
	off := make([]int, len(toks))
	p := 0
	for i := range toks {
		off[i] = p
		p += len(toks[i].nib)
	}
	return off
}

// describe formats a token: kind, time delta and fields.
func (g *gen) describe(t *token) string {
	k := &g.kinds[t.kind]
	var b strings.Builder
	b.WriteString(g.tokenName(t))
	if k.hasTime() {
		fmt.Fprintf(&b, " delta=%d", t.bits(k.tb, k.te))
	}
	for _, f := range k.fields {
		fmt.Fprintf(&b, " %s=%#x", f.name, t.bits(f.lo, f.hi))
	}
	var hex strings.Builder
	for i := len(t.nib) - 1; i >= 0; i-- {
		hex.WriteString(strconv.FormatUint(uint64(t.nib[i]), 16))
	}
	fmt.Fprintf(&b, " (%d bits, value 0x%s)", 4*len(t.nib), hex.String())
	return b.String()
}

// gfx9 token types (§2.2.2) and layouts (§2.2.4).
func gfx9Gen() *gen {
	group := []field{{"sh", 5, 5}, {"cu", 6, 9}, {"wave", 10, 13}, {"simd", 14, 15}}
	types := []kind{
		{name: "MISC", bits: 16, tb: 4, te: 11, fields: []field{{"sh", 12, 12}, {"misc_type", 13, 15}}},
		{name: "TIME", bits: 64, tb: 4, te: 4, fields: []field{{"time", 16, 63}}},
		{name: "REG", bits: 64, tb: 4, te: 4, fields: []field{{"pipe", 5, 6}, {"me_raw", 7, 8}, {"reg_type", 10, 12},
			{"enable", 15, 15}, {"regaddr", 16, 31}, {"regdata", 32, 63}}},
		{name: "WAVE_START", bits: 32, tb: 4, te: 4, fields: append(group[:4:4],
			field{"pipe", 16, 17}, field{"me", 18, 19}, field{"count", 22, 28}, field{"tg_id", 29, 31})},
		{name: "WAVE_ALLOC", bits: 16, tb: 4, te: 4, fields: group},
		{name: "REG_CS", bits: 48, tb: 4, te: 4, fields: []field{{"pipe", 5, 6}, {"me_raw", 7, 8}, {"regaddr", 9, 15}, {"regdata", 16, 47}}},
		{name: "WAVE_END", bits: 16, tb: 4, te: 4, fields: group},
		{name: "EVENT", bits: 16, tb: 4, te: 4, fields: []field{{"bits", 5, 15}}},
		{name: "EVENT_CS", bits: 16, tb: 4, te: 4, fields: []field{{"bits", 5, 15}}},
		{name: "EVENT_GFX1", bits: 16, tb: 4, te: 4, fields: []field{{"bits", 5, 15}}},
		{name: "INST", bits: 16, tb: 4, te: 4, fields: []field{{"wave", 5, 8}, {"simd", 9, 10}, {"inst_type", 11, 15}}},
		{name: "INST_PC", bits: 64, tb: 4, te: 4, fields: []field{{"wave", 5, 8}, {"simd", 9, 10}, {"err", 15, 15}, {"pc", 16, 63}}},
		{name: "SHADERDATA", bits: 48, tb: 4, te: 4, fields: append(group[:4:4], field{"data", 16, 47})},
		{name: "ISSUE", bits: 32, tb: 4, te: 4, fields: []field{{"simd", 5, 6},
			{"wave0", 8, 9}, {"wave1", 10, 11}, {"wave2", 12, 13}, {"wave3", 14, 15}, {"wave4", 16, 17},
			{"wave5", 18, 19}, {"wave6", 20, 21}, {"wave7", 22, 23}, {"wave8", 24, 25}, {"wave9", 26, 27}}},
		{name: "PERF", bits: 64, tb: 4, te: 4, fields: []field{{"sh", 5, 5}, {"cu", 6, 9}, {"bank", 10, 11},
			{"counter0", 12, 24}, {"counter1", 25, 37}, {"counter2", 38, 50}, {"counter3", 51, 63}}},
		{name: "REG_CS_PRIV", bits: 48, tb: 4, te: 4, fields: []field{{"pipe", 5, 6}, {"me_raw", 7, 8}, {"regaddr", 9, 15}, {"regdata", 16, 47}}},
	}
	g := &gen{name: "gfx9", kinds: types, ext: -1, nopKind: -1}
	for i := range g.kinds {
		g.kinds[i].pbits = 4
		g.lookup[i] = uint8(i)
	}
	g.header = uint8(len(g.kinds))
	g.kinds = append(g.kinds, kind{name: "HEADER", bits: 64, tb: 1, te: 0})
	g.tail = uint8(len(g.kinds))
	g.kinds = append(g.kinds, kind{name: "TAIL", tb: 1, te: 0})
	g.index()
	return g
}

// enc is one row of an RDNA encoding table (§2.3.2): pattern as the
// specification writes it (a binary number whose least significant bit is
// the first stream bit), length, and time field (tb > te: none).
type enc struct {
	name    string
	pattern string
	bits    int
	tb, te  int
}

var rdnaBase = []enc{
	{"INST", "010", 20, 4, 6},
	{"VALU_INST", "011", 12, 3, 5},
	{"IMM_ONE", "1101", 12, 4, 6},
	{"IMMEDIATE", "00100", 24, 5, 7},
	{"WAVE_READY", "10100", 24, 5, 7},
	{"NEW_PC", "0100001", 64, 8, 10},
	{"WAVE_START", "01100", 32, 5, 6},
	{"WAVE_START_EXT", "11100", 48, 5, 6},
	{"WAVE_ALLOC", "00101", 20, 5, 7},
	{"WAVE_END", "10101", 20, 5, 7},
	{"SHADER_DATA", "00110", 52, 5, 7},
	{"SHADER_DATA_SHORT", "10110", 28, 5, 7},
	{"UTIL_COUNTER", "0110001", 64, 7, 8},
	{"TIME", "1000", 8, 4, 7},
	{"NOP", "0000", 4, 1, 0},
	{"MISC", "1010001", 24, 7, 15},
	{"EVENT", "01100001", 24, 8, 10},
	{"EVENT_SYNC", "11100001", 32, 8, 10},
	{"REG", "1001", 64, 4, 6},
	{"REG_INIT", "1110001", 64, 7, 9},
	{"TIMESTAMP", "0000001", 64, 1, 0},
	{"HEADER", "0010001", 64, 1, 0},
	{"ALU_EXEC", "1110", 8, 4, 5},
	{"VMEM_EXEC", "1111", 8, 4, 5},
}

var rdnaGfx11 = []enc{
	{"UTIL_COUNTER", "0110001", 48, 7, 8},
	{"TIMESTAMP", "0000001", 48, 1, 0},
}

var rdnaGfx12 = []enc{
	{"INST", "010", 20, 3, 5},
	{"SHADER_DATA", "0000110", 56, 7, 9},
	{"SHADER_DATA_SHORT", "1000110", 32, 7, 9},
	{"EXEC_POPCOUNT1", "1100110", 24, 7, 9},
	{"EXEC_POPCOUNT3", "010110", 48, 6, 8},
	{"NEW_PC", "0100001", 72, 8, 10},
	{"WAVE_START_EXT", "11100", 40, 5, 6},
	{"WAVE_ALLOC", "00101", 24, 5, 7},
	{"TIMESTAMP", "0000001", 64, 1, 0},
}

// rdnaFields are the token layouts of §2.3.4 (gfx10/gfx11 column, then the
// gfx12 ones that differ), bit positions within the token.
var rdnaFields = map[string][]field{
	"WAVE_START": {{"sa", 7, 7}, {"simd", 8, 9}, {"wgp", 10, 12}, {"wid", 13, 17}, {"queue", 18, 20},
		{"pipe", 21, 22}, {"me", 23, 23}, {"dispatcher", 24, 24}, {"count", 25, 31}},
	"WAVE_END":          {{"sa", 8, 8}, {"simd", 9, 10}, {"wgp", 11, 13}, {"wid", 15, 19}},
	"INST":              {{"w64", 7, 7}, {"wid", 8, 12}, {"inst", 13, 19}},
	"VALU_INST":         {{"w64", 6, 6}, {"wid", 7, 11}},
	"IMM_ONE":           {{"wid", 7, 11}},
	"IMMEDIATE":         {{"waves", 8, 23}},
	"WAVE_READY":        {{"waves", 8, 23}},
	"NEW_PC":            {{"wave", 11, 15}, {"pc", 16, 61}, {"err", 62, 62}},
	"SHADER_DATA":       {{"sa", 8, 8}, {"simd", 9, 10}, {"wgp", 11, 13}, {"exec", 14, 14}, {"wave", 15, 19}, {"data", 20, 51}},
	"SHADER_DATA_SHORT": {{"sa", 8, 8}, {"simd", 9, 10}, {"wgp", 11, 13}, {"exec", 14, 14}, {"wave", 15, 19}, {"data", 20, 27}},
	"REG": {{"pipe", 7, 8}, {"me", 9, 10}, {"rdp", 11, 11}, {"context", 12, 14}, {"cs", 15, 15},
		{"regaddr", 16, 31}, {"regdata", 32, 63}},
	"REG_INIT": {{"vmid", 10, 13}, {"pipe", 14, 15}, {"me", 16, 17}, {"type", 18, 19}, {"data", 20, 51}, {"sync_id", 52, 61}},
	"EVENT":    {{"bop", 11, 11}, {"evtype", 12, 13}, {"me", 14, 15}, {"pipe", 16, 17}, {"id", 18, 23}},
	"MISC": {{"spm_or_pl", 16, 16}, {"gc_rinse", 17, 17}, {"reserved", 18, 18}, {"save_context", 19, 19},
		{"tt_stall_start", 20, 20}, {"tt_stall_end", 21, 21}, {"didt_stall_start", 22, 22}, {"didt_stall_end", 23, 23}},
	"TIMESTAMP":      {{"pl", 8, 8}, {"rt", 9, 9}, {"value", 12, 47}},
	"ALU_EXEC":       {{"source", 6, 7}},
	"VMEM_EXEC":      {{"source", 6, 7}},
	"UTIL_COUNTER":   {{"counters", 9, 47}},
	"EVENT_SYNC":     {{"bits", 11, 31}},
	"WAVE_ALLOC":     {{"bits", 8, 19}},
	"WAVE_START_EXT": nil, // as WAVE_START, filled in below
}

var rdnaFields12 = map[string][]field{
	"WAVE_START": {{"sa", 7, 7}, {"simd", 8, 9}, {"wgp", 10, 13}, {"wid", 15, 19}, {"pipe", 20, 21},
		{"me", 22, 22}, {"count", 25, 31}},
	"WAVE_START_EXT": {{"sa", 7, 7}, {"simd", 8, 9}, {"wgp", 10, 13}, {"wid", 15, 19}, {"pipe", 20, 21},
		{"me", 22, 22}, {"count", 25, 31}, {"extlds", 32, 32}, {"wgid", 33, 37}, {"last", 38, 38}, {"dvg", 39, 39}},
	"WAVE_END":          {{"sa", 8, 8}, {"simd", 9, 10}, {"wgp", 11, 14}, {"wid", 15, 19}},
	"INST":              {{"w64", 6, 6}, {"wid", 7, 11}, {"inst", 12, 19}},
	"NEW_PC":            {{"wave", 11, 15}, {"pc", 16, 70}, {"err", 71, 71}},
	"SHADER_DATA":       {{"sa", 10, 10}, {"simd", 11, 12}, {"wgp", 13, 16}, {"wave", 17, 21}, {"data", 22, 53}, {"sdt", 54, 55}},
	"SHADER_DATA_SHORT": {{"sa", 10, 10}, {"simd", 11, 12}, {"wgp", 13, 16}, {"wave", 17, 21}, {"data", 22, 29}, {"sdt", 30, 31}},
	"TIMESTAMP":         {{"rt", 7, 7}, {"pl", 8, 8}, {"tl", 9, 9}, {"value", 12, 63}},
	"WAVE_ALLOC":        {{"bits", 8, 23}},
	"EXEC_POPCOUNT1":    {{"bits", 10, 23}},
	"EXEC_POPCOUNT3":    {{"bits", 9, 47}},
}

// rdnaGen builds the table of an RDNA header version (1, 2: gfx10; 3:
// gfx11; 4: gfx12), as §2.3.1 describes: each pattern fills every index
// whose low bits equal it, later rows overwriting earlier ones; slots no
// pattern covers are 4-bit UNKNOWN tokens.
func rdnaGen(version int) *gen {
	rows := append([]enc(nil), rdnaBase...)
	name := "gfx10"
	if version >= 3 {
		rows, name = append(rows, rdnaGfx11...), "gfx11"
	}
	if version >= 4 {
		rows, name = append(rows, rdnaGfx12...), "gfx12"
	}
	g := &gen{name: name, rdna: true, ext: -1, nopKind: -1}
	g.kinds = append(g.kinds, kind{name: "UNKNOWN", bits: 4, pbits: 8, tb: 1, te: 0})
	var slot [256]int // row index + 1 filling each index
	for i, r := range rows {
		p, err := strconv.ParseUint(r.pattern, 2, 8)
		if err != nil {
			panic(err)
		}
		n := len(r.pattern)
		for idx := range 256 {
			if idx&(1<<n-1) == int(p) {
				slot[idx] = i + 1
			}
		}
	}
	kindOf := map[int]uint8{}
	for idx := range 256 {
		ri := slot[idx] - 1
		if ri < 0 {
			continue // UNKNOWN
		}
		k, ok := kindOf[ri]
		if !ok {
			r := rows[ri]
			fs := rdnaFields[r.name]
			if r.name == "WAVE_START_EXT" {
				fs = rdnaFields["WAVE_START"]
			}
			if f12, ok := rdnaFields12[r.name]; ok && version >= 4 {
				fs = f12
			}
			if r.name == "TIMESTAMP" && version <= 2 {
				fs = []field{{"type", 14, 15}, {"value", 16, 63}}
			}
			if ri < len(rdnaBase) && strings.HasPrefix(r.name, "SHADER_DATA") {
				// gfx12 keeps the gfx10 rows at the indices its own
				// 7-bit patterns leave (0100110, 110110).
				fs = rdnaFields[r.name]
			}
			k = uint8(len(g.kinds))
			kindOf[ri] = k
			g.kinds = append(g.kinds, kind{name: r.name, bits: r.bits, pbits: len(r.pattern), tb: r.tb, te: r.te, fields: fs})
			switch {
			case r.name == "HEADER":
				g.header = k
			case r.name == "NOP":
				g.nopKind = int(k)
			case r.name == "WAVE_START_EXT" && version >= 4:
				g.ext = int(k)
			}
		}
		g.lookup[idx] = k
	}
	g.tail = uint8(len(g.kinds))
	g.kinds = append(g.kinds, kind{name: "TAIL", tb: 1, te: 0})
	g.index()
	return g
}

func (g *gen) index() {
	g.byName = map[string][]uint8{}
	for i, k := range g.kinds {
		g.byName[k.name] = append(g.byName[k.name], uint8(i))
	}
}

// sameKind reports whether t, after a change, still frames as kind k.
func (g *gen) sameKind(t *token, k uint8) bool {
	if !g.rdna {
		return g.lookup[t.nib[0]] == k || k == g.header
	}
	return g.lookup[t.low8()] == k
}

// mutable reports whether a token may be changed or moved: not the
// header and not a partial token.
func (g *gen) mutable(t *token) bool { return t.kind != g.header && t.kind != g.tail }
