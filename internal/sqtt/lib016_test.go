package sqtt

import (
	"bytes"
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attkit/attkit/internal/backend"
	"github.com/attkit/attkit/internal/cdec"
	"github.com/attkit/attkit/internal/isa"
	"github.com/attkit/attkit/internal/testutil"
	"github.com/attkit/attkit/internal/wire"
)

// The cases below are divergences between the native decoder and AMD's
// 0.1.6 library found by scripts/difffuzz, each reproduced with a trace
// this test writes itself (hand-built tokens). Their expected records,
// testdata/lib016/NAME.jsonl, are what the 0.1.6 library decoded from
// exactly these bytes (att-decode's JSON projection), so the test needs no
// library in CI. With ROCPROF_TRACE_DECODER_LIB set the test also decodes
// every case with the library and requires the committed records, and
// -update-lib016 rewrites them from the library.

var updateLib016 = flag.Bool("update-lib016", false, "rewrite testdata/lib016 from AMD's library (needs "+cdec.EnvLib+")")

type libCase struct {
	name string
	data []byte
	isa  isa.Provider // nil: no instructions are looked up
}

func libCases016() []libCase {
	cs := []libCase{
		// sqtt-format.md 2.2.3: a TIME_RESET met while the previous one
		// looks for its TIME token is consumed without its delta.
		{name: "gfx9-time-reset-stops-search", data: newTB(4, 0, false).
			misc(255, miscTimeReset).put(tWaveStart|1<<4|group(0, 0, 0, 2)|0x10<<22, 4).
			misc(255, miscTimeReset).put(tWaveEnd|1<<4|group(0, 0, 0, 2), 2).bytes()},
		// ... and a TIME token after it is not applied: no search is open.
		{name: "gfx9-time-reset-then-time", data: newTB(4, 0, false).
			misc(255, miscTimeReset).put(tWaveStart|1<<4|group(0, 0, 0, 2)|0x10<<22, 4).
			misc(255, miscTimeReset).timeTok(50000).misc(10, miscTTStallBegin).
			put(tWaveEnd|1<<4|group(0, 0, 0, 2), 2).bytes()},
		// A TIME found by the search rebases the clock; a later TIME_RESET
		// opens a search of its own.
		{name: "gfx9-time-reset-each-finds-time", data: newTB(4, 0, false).
			misc(10, miscTimeReset).timeTok(50000).put(tWaveStart|1<<4|group(0, 0, 0, 2)|0x10<<22, 4).
			misc(255, miscTimeReset).misc(10, miscTTStallBegin).timeTok(60000).
			put(tWaveEnd|1<<4|group(0, 0, 0, 2), 2).bytes()},
	}
	// A.4 item 8.5: TIME values, base and clock in 46-bit two's complement.
	for _, c := range []struct {
		name   string
		t1, t2 uint64
	}{
		{"gfx9-time46-negative-base", 0x2000_0010_0000, 0x10_0000},
		{"gfx9-time46-wrapped-clock", 0x3000_0010_0000, 0x10_0000},
		{"gfx9-time46-bit46-ignored", 0x4000_0010_0000, 0x10_0000},
		{"gfx9-time46-bit47-ignored", 0xa000_0010_0000, 0x10_0000},
		{"gfx9-time46-smaller-time", 0x0800_0010_0000, 0x10_0000},
		{"gfx9-time46-second-has-bit46", 100, 0x4000_0000_0100},
	} {
		cs = append(cs, libCase{name: c.name, data: newTB(4, 0, false).
			misc(10, miscTimeReset).timeTok(c.t1).put(tWaveStart|1<<4|group(0, 0, 0, 2)|0x10<<22, 4).
			misc(10, miscTimeReset).timeTok(c.t2).put(tWaveStart|group(0, 0, 1, 2)|0x10<<22, 4).bytes()})
	}
	// A.4 item 8.7: a buffer of only the software header fails without
	// records.
	cs = append(cs, libCase{name: "gfx9-header-only", data: newTB(4, 0, false).bytes()})
	// A.4 item 8.6: a token cut by the end of an unpadded buffer is
	// decoded with the missing bytes as zero (cdec hands the library
	// zeros past the end).
	ws := newTB(4, 0, false).at(8).waveStart(4, 2, 0, 0, 0, 1, 0).bytes()
	cs = append(cs,
		libCase{name: "gfx9-cut-wave-start", data: ws[:len(ws)-2]},
		libCase{name: "gfx9-cut-wave-start-3", data: ws[:len(ws)-1]},
		libCase{name: "gfx9-cut-wave-end", data: newTB(4, 0, false).at(8).waveStart(4, 2, 0, 0, 0, 1, 0).
			at(16).put(tWaveEnd|group(0, 4, 0, 2), 1).bytes()},
	)
	// 2.2.4 "OTHER_MSG on real hardware": 0.1.6 keeps a wave's closing
	// OTHER_MSG (s_endpgm on gfx950) as a MESSAGE placed like an IMMED
	// only when it issued later than the instruction before it.
	isa3 := newTable(0, "0x1000 4 s_mov_b32 s0, 0", "0x1004 4 s_mov_b32 s1, 0", "0x1008 4 s_endpgm")
	for _, v := range []struct {
		name                   string
		msgIssue, msgInst, end int64
	}{
		{"gfx9-endpgm-issued-with-prev", 120, 124, 124}, {"gfx9-endpgm-at-prev-end", 124, 124, 124}, {"gfx9-endpgm-late", 128, 128, 128}, {"gfx9-endpgm-issued-with-prev-late-end", 120, 124, 140},
		{"gfx9-endpgm-idle-after", 132, 132, 140}, {"gfx9-endpgm-inst-later", 124, 128, 128}, {"gfx9-endpgm-issued-with-prev-inst-later", 120, 128, 128},
	} {
		b := newTB(4, 0, false).pgm(1, 0, 0x1000).at(100).waveStart(0, 0, 0, 1, 0, 1, 0).
			at(120).issue1(isInst)
		if v.msgIssue == 120 {
			b.issue1(isInst)
		}
		b.at(124).inst(0, 0, instSALU32)
		if v.msgIssue > 120 {
			b.at(v.msgIssue).issue1(isInst)
		}
		b.at(v.msgInst).inst(0, 0, instOtherMsg).at(v.end).waveEnd(0, 0, 0)
		cs = append(cs, libCase{name: v.name, data: b.bytes(), isa: isa3})
	}
	cs = append(cs,
		libCase{name: "gfx9-endpgm-only", isa: isa3, data: newTB(4, 0, false).pgm(1, 0, 0x1000).at(100).waveStart(0, 0, 0, 1, 0, 1, 0).
			at(120).issue1(isInst).at(124).inst(0, 0, instOtherMsg).at(128).waveEnd(0, 0, 0).bytes()},
		libCase{name: "gfx9-endpgm-only-at-start", isa: isa3, data: newTB(4, 0, false).pgm(1, 0, 0x1000).at(100).waveStart(0, 0, 0, 1, 0, 1, 0).
			issue1(isInst).at(104).inst(0, 0, instOtherMsg).at(108).waveEnd(0, 0, 0).bytes()},
		libCase{name: "gfx9-endpgm-after-smem", isa: isa3, data: newTB(4, 0, false).pgm(1, 0, 0x1000).at(100).waveStart(0, 0, 0, 1, 0, 1, 0).
			at(120).issue1(isInst).at(124).inst(0, 0, instSMEMRd).at(128).issue1(isInst).at(132).inst(0, 0, instOtherMsg).at(160).waveEnd(0, 0, 0).bytes()},
		libCase{name: "gfx9-endpgm-issued-with-second", isa: isa3, data: newTB(4, 0, false).pgm(1, 0, 0x1000).at(100).waveStart(0, 0, 0, 1, 0, 1, 0).
			at(116).issue1(isInst).at(120).inst(0, 0, instSALU32).issue1(isInst).issue1(isInst).at(124).inst(0, 0, instSALU32).inst(0, 0, instOtherMsg).at(160).waveEnd(0, 0, 0).bytes()},
	)
	for _, gen := range []int{11, 12} {
		ver := map[int]int{11: 3, 12: 4}[gen]
		type smp struct {
			at int64
			v  uint64
		}
		// 2.3.3: on gfx12 (not in the tail) a sample not newer than the
		// previous pair is averaged into it, gfx11 appends it; a sample
		// of value 0 is ignored (A.4 item 7.8).
		labels := []string{"newer", "older-realtime", "same-clock", "zero", "zero-later", "equal-realtime",
			"older-then-newer", "older-twice"}
		for i, ss := range [][]smp{
			{{0, 1000}, {100, 2000}}, {{0, 1000}, {100, 500}}, {{0, 1000}, {0, 2000}}, {{0, 0}}, {{100, 0}},
			{{100, 1000}, {200, 1000}}, {{100, 1000}, {200, 500}, {300, 3000}}, {{100, 1000}, {200, 500}, {300, 700}},
		} {
			r := newRB(gen).header(ver, 0, 0, 0, 0, 0, 0)
			for _, x := range ss {
				r.at(x.at).timestamp(x.v, true, false)
			}
			cs = append(cs, libCase{name: sprintf("rdna-realtime-gfx%d-%s", gen, labels[i]), data: r.nop().pad()})
		}
	}
	// 3.5 step 10: an IMMED meeting a line it may skip (A.4 item 7.9:
	// not SMEM on 0.1.6, where s_load then stops the stitch).
	for _, v := range []struct {
		name string
		line string
	}{
		{"rdna-immed-vs-global-store", "0x2004 8 global_store_b32 v0, v1, off"},
		{"rdna-immed-vs-global-load", "0x2004 8 global_load_b32 v0, v[0:1], off"},
		{"rdna-immed-vs-s-load", "0x2004 8 s_load_b32 s0, s[0:1], 0x0"},
		{"rdna-immed-salu-then-global-store", "0x2004 4 s_mov_b32 s0, 0|0x2008 4 global_store_b32 v0, v1, off"},
		{"rdna-immed-salu-then-s-load", "0x2004 4 s_mov_b32 s0, 0|0x2008 4 s_load_b32 s0, s[0:1], 0x0"},
		{"rdna-immed-salu-then-ds-load", "0x2004 4 s_mov_b32 s0, 0|0x2008 4 ds_load_b32 v0, v1"},
		{"rdna-immed-salu-then-ds-store", "0x2004 4 s_mov_b32 s0, 0|0x2008 4 ds_store_b32 v0, v1"},
	} {
		rows := append([]string{"0x2000 4 v_add_f32_e32 v1, v0, v0"}, strings.Split(v.line, "|")...)
		rows = append(rows, "0x2010 4 v_add_f32_e32 v1, v0, v0", "0x2014 4 s_endpgm")
		for _, gen := range []int{11, 12} {
			r := newRB(gen).header(map[int]int{11: 3, 12: 4}[gen], 0, 0, 0, 0, 0, 0).pgm(0, 0, 0x2000).
				at(100).waveStart(0, 0, 0, 0, 0, 0, 1).at(104).valu(0).at(110).immOne(0).at(116).valu(0).at(130).waveEnd(0, 0, 0, 0)
			cs = append(cs, libCase{name: sprintf("%s-gfx%d", v.name, gen), data: r.nop().pad(), isa: newTable(0, rows...)})
		}
	}
	// 2.3.1 "End of buffer" and A.4 item 7.10: 0.1.6 decodes the last
	// tokens of an unpadded gfx12 buffer.
	for _, pad := range []int{0, 1, 3, 4, 5, 8} {
		r := newRB(12).header(4, 0, 0, 0, 0, 0, 0).pgm(0, 0, 0x2000).
			at(100).waveStart(0, 0, 0, 0, 0, 0, 1).at(104).valu(0).at(116).valu(0).at(130).waveEnd(0, 0, 0, 0)
		if r.nbits%8 != 0 {
			r.nop()
		}
		b := append(r.bytes(), make([]byte, pad)...)
		cs = append(cs, libCase{name: sprintf("rdna-gfx12-end-pad%d", pad), data: b,
			isa: newTable(0, "0x2000 4 v_add_f32_e32 v1, v0, v0", "0x2004 4 v_add_f32_e32 v1, v0, v0", "0x2008 4 s_endpgm")})
	}
	// A.4 item 7.11: on gfx10 and gfx11, 64 zero bits at a byte boundary
	// followed by fewer than 9 bytes end the buffer (lead: NOP nibbles
	// before a WAVE_START that ends the buffer; pad: zero bytes after it).
	for _, gen := range []int{10, 11, 12} {
		for _, c := range [][2]int{{15, 0}, {16, 0}, {16, 4}, {16, 5}, {17, 4}, {18, 4}, {19, 4}, {24, 4}, {24, 5}} {
			lead, pad := c[0], c[1]
			r := newRB(gen).header(map[int]int{10: 2, 11: 3, 12: 4}[gen], 0, 0, 0, 0, 0, 0)
			for i := 0; i < lead; i++ {
				r.nop()
			}
			r.waveStart(0, 0, 0, 4, 1, 0, 1)
			if r.nbits%8 != 0 {
				r.nop()
			}
			b := append(r.bytes(), make([]byte, pad)...)
			cs = append(cs, libCase{name: sprintf("rdna-gfx%d-zero-run-lead%d-pad%d", gen, lead, pad), data: b})
		}
	}
	// 2.3.6 wave end and A.4 item 7.12: 0.1.6 closes a wave with a MESSAGE
	// from its last instruction's end whatever its trap state.
	for _, gen := range []int{11, 12} {
		h := func() *rb {
			return newRB(gen).header(map[int]int{11: 3, 12: 4}[gen], 0, 0, 0, 0, 0, 0).pgm(0, 0, 0x2000).
				at(100).waveStart(0, 0, 0, 0, 0, 0, 1)
		}
		for name, r := range map[string]*rb{
			"trap-open":                    h().at(104).valu(0).at(110).inst(0, codeTrap).at(130).waveEnd(0, 0, 0, 0),
			"trap-returned-without-new-pc": h().at(104).valu(0).at(110).inst(0, codeTrap).at(115).valu(0).at(120).inst(0, codeReturnExc).at(125).valu(0).at(130).waveEnd(0, 0, 0, 0),
			"trap-only":                    h().at(104).inst(0, codeTrap).at(130).waveEnd(0, 0, 0, 0),
			"save-context-open":            h().at(104).valu(0).at(120).misc(0x08).at(125).valu(0).at(130).waveEnd(0, 0, 0, 0),
			"trap-again":                   h().at(104).valu(0).at(110).inst(0, codeTrap).at(120).inst(0, codeReturnExc).at(125).inst(0, codeTrap).at(130).waveEnd(0, 0, 0, 0),
			"trap-after-smem":              h().at(104).inst(0, 1).at(110).inst(0, codeTrap).at(130).waveEnd(0, 0, 0, 0),
			"no-instructions":              h().at(130).waveEnd(0, 0, 0, 0),
			"trap-returned":                h().at(104).valu(0).at(110).inst(0, codeTrap).at(120).inst(0, codeReturnExc).at(121).newPC(0, 0x2004).at(125).valu(0).at(130).waveEnd(0, 0, 0, 0),
			"save-context-returned":        h().at(104).valu(0).at(120).misc(0x08).at(122).inst(0, codeReturnExc).at(123).newPC(0, 0x2004).at(125).valu(0).at(130).waveEnd(0, 0, 0, 0),
			"trap-returned-late-new-pc":    h().at(104).valu(0).at(110).inst(0, codeTrap).at(120).inst(0, codeReturnExc).at(125).valu(0).at(127).newPC(0, 0x2004).at(130).waveEnd(0, 0, 0, 0),
			"new-pc-in-trap":               h().at(104).valu(0).at(110).inst(0, codeTrap).at(121).newPC(0, 0x2004).at(125).valu(0).at(130).waveEnd(0, 0, 0, 0),
			"trap-twice":                   h().at(104).valu(0).at(110).inst(0, codeTrap).at(112).inst(0, codeTrap).at(130).waveEnd(0, 0, 0, 0),
		} {
			cs = append(cs, libCase{name: sprintf("rdna-gfx%d-closing-message-%s", gen, name), data: r.nop().pad()})
		}
	}
	cs = append(cs, libCase{name: "rdna-gfx12-context-restore", data: scenarioContext(), isa: newTable(0, "0x3000 8 s_load_b32 s0, s[0:1], 0x0", "0x3008 4 s_nop 0",
		"0x3010 4 v_add_f32_e32 v1, v0, v0", "0x3014 4 s_endpgm")})
	// 3.6 and A.4 R7: a gfx12 excluded barrier wait splits its timeline
	// segment whatever its duration, also 0 or negative (the next
	// instruction starting before the end of the one before the wait).
	{
		rows := newTable(0, "0x4000 4 s_barrier_signal -1", "0x4004 4 s_barrier_wait 0xffff",
			"0x4008 4 v_add_f32_e32 v1, v0, v0", "0x400c 4 v_add_f32_e32 v1, v0, v0", "0x4010 4 s_endpgm")
		h := func() *rb {
			return newRB(12).header(4, 0, 0, 0, 0, 0, 1<<59).pgm(0, 0, 0x4000).at(100).waveStart(0, 0, 0, 0, 0, 0, 1).at(104).inst(0, 122)
		}
		for name, r := range map[string]*rb{
			"negative":     h().valu(0).at(125).waveEnd(0, 0, 0, 0),
			"negative-two": h().valu(0).at(110).valu(0).at(125).waveEnd(0, 0, 0, 0),
			"zero":         h().at(105).valu(0).at(125).waveEnd(0, 0, 0, 0),
			"positive":     h().at(110).valu(0).at(125).waveEnd(0, 0, 0, 0),
		} {
			cs = append(cs, libCase{name: "rdna-gfx12-barrier-wait-" + name, data: r.pad(), isa: rows})
		}
	}
	// A.4 item 8.2: an ISSUE never matched by an INST stays a placeholder,
	// reported as category 16 when the stitcher gave it a PC, else NONE.
	isaP := newTable(0, "0x1000 4 s_mov_b32 s0, 0", "0x1004 4 v_mov_b32 v0, 0", "0x1008 4 s_endpgm")
	cs = append(cs,
		libCase{name: "gfx9-placeholder-first", isa: isaP, data: newTB(4, 0, false).pgm(1, 0, 0x1000).at(100).waveStart(0, 0, 0, 1, 0, 1, 0).at(120).issue1(isInst).bytes()},
		libCase{name: "gfx9-placeholder-no-isa", data: newTB(4, 0, false).pgm(1, 0, 0x1000).at(100).waveStart(0, 0, 0, 1, 0, 1, 0).at(120).issue1(isInst).bytes()},
		libCase{name: "gfx9-placeholder-after-salu", isa: isaP, data: newTB(4, 0, false).pgm(1, 0, 0x1000).at(100).waveStart(0, 0, 0, 1, 0, 1, 0).at(116).issue1(isInst).at(120).inst(0, 0, instSALU32).at(124).issue1(isInst).bytes()},
		libCase{name: "gfx9-placeholder-two", isa: isaP, data: newTB(4, 0, false).pgm(1, 0, 0x1000).at(100).waveStart(0, 0, 0, 1, 0, 1, 0).at(120).issue1(isInst).at(124).issue1(isInst).bytes()},
		libCase{name: "gfx9-placeholder-wave-end", isa: isaP, data: newTB(4, 0, false).pgm(1, 0, 0x1000).at(100).waveStart(0, 0, 0, 1, 0, 1, 0).at(120).issue1(isInst).at(132).waveEnd(0, 0, 0).bytes()},
		libCase{name: "gfx9-placeholder-valu-line", isa: newTable(0, "0x1000 4 v_mov_b32 v0, 0"), data: newTB(4, 0, false).pgm(1, 0, 0x1000).at(100).waveStart(0, 0, 0, 1, 0, 1, 0).at(120).issue1(isInst).bytes()},
		libCase{name: "gfx9-placeholder-waitcnt-line", isa: newTable(0, "0x1000 4 s_waitcnt vmcnt(0)"), data: newTB(4, 0, false).pgm(1, 0, 0x1000).at(100).waveStart(0, 0, 0, 1, 0, 1, 0).at(120).issue1(isInst).bytes()},
	)
	// A.4 items 8.8 and 8.9: the closing OTHER_MSG after a stall; a stale
	// issue index and a WAVE_ALLOC slot above 9 are invalid shader data.
	isaQ := newTable(0, "0x1000 4 s_mov_b32 s0, 0", "0x1004 4 v_mov_b32 v0, 0", "0x1008 4 s_mov_b32 s0, 0", "0x100c 4 s_endpgm")
	ws0 := func() *tb { return newTB(4, 0, false).pgm(1, 0, 0x1000).at(100).waveStart(0, 0, 0, 1, 0, 1, 0) }
	cs = append(cs,
		libCase{name: "gfx9-stale-issue-index", isa: isaQ, data: ws0().at(120).issue1(isInst).issue1(isInst).at(124).inst(0, 0, 9).inst(0, 0, instSALU32).at(140).waveEnd(0, 0, 0).bytes()},
		libCase{name: "gfx9-stale-issue-index-no-end", isa: isaQ, data: ws0().at(120).issue1(isInst).issue1(isInst).at(124).inst(0, 0, 9).inst(0, 0, instSALU32).bytes()},
		libCase{name: "gfx9-stale-issue-index-3", isa: isaQ, data: ws0().at(120).issue1(isInst).issue1(isInst).issue1(isInst).at(124).inst(0, 0, 9).inst(0, 0, instSALU32).inst(0, 0, instSALU32).at(140).waveEnd(0, 0, 0).bytes()},
		libCase{name: "gfx9-wave-alloc-slot12", data: newTB(4, 0, false).put(tWaveAlloc|group(0, 1, 12, 3), 2).bytes()},
		libCase{name: "gfx9-wave-alloc-slot9", data: newTB(4, 0, false).put(tWaveAlloc|group(0, 1, 9, 3), 2).bytes()},
		libCase{name: "gfx9-endpgm-after-stall", isa: isaQ, data: ws0().at(120).issue1(isInst).at(124).inst(0, 0, instVALU32).
			at(128).issue1(isStall).at(136).issue1(isInst).inst(0, 0, instOtherMsg).at(136).waveEnd(0, 0, 0).bytes()},
	)
	// A.4 item 8.8: 0.1.6 deletes an OTHER_MSG at its INST token (the
	// later issue indices go stale) and keeps only its time T: a later
	// instruction's stall is not cut at the message, an IMMED starts no
	// earlier than T, and at the WAVE_END the message comes back after
	// the last entry when T is later than that entry's time, from that
	// entry's end even when it ends after T (a negative duration), or
	// from the last unconsumed stall when that started before T but not
	// before that end. The timeline's last segment loses T - start.
	msgMid := func(stall, next int64) *tb {
		b := ws0().at(120).issue1(isInst).at(124).inst(0, 0, instVALU32)
		if stall > 0 {
			b.at(stall).issue1(isStall)
		}
		return b.at(136).issue1(isInst).inst(0, 0, instOtherMsg).at(next).issue1(isInst).at(next+4).inst(0, 0, instSALU32)
	}
	cs = append(cs,
		libCase{name: "gfx9-msg-mid-no-stall", isa: isaQ, data: msgMid(0, 140).at(160).waveEnd(0, 0, 0).bytes()},
		libCase{name: "gfx9-msg-mid-after-stall", isa: isaQ, data: msgMid(128, 140).at(160).waveEnd(0, 0, 0).bytes()},
		libCase{name: "gfx9-msg-mid-after-stall-late-next", isa: isaQ, data: msgMid(132, 196).at(216).waveEnd(0, 0, 0).bytes()},
		libCase{name: "gfx9-msg-mid-after-stall-no-end", isa: isaQ, data: msgMid(128, 140).bytes()},
		libCase{name: "gfx9-msg-mid-after-stall-then-salu", isa: isaQ, data: msgMid(128, 140).at(148).issue1(isInst).at(152).inst(0, 0, instSALU32).at(172).waveEnd(0, 0, 0).bytes()},
		libCase{name: "gfx9-msg-mid-two", isa: isaQ, data: ws0().at(120).issue1(isInst).at(124).inst(0, 0, instVALU32).at(128).issue1(isStall).
			at(136).issue1(isInst).inst(0, 0, instOtherMsg).at(140).issue1(isInst).inst(0, 0, instOtherMsg).at(148).issue1(isInst).at(152).inst(0, 0, instSALU32).at(172).waveEnd(0, 0, 0).bytes()},
		libCase{name: "gfx9-msg-mid-then-stall-and-endpgm", isa: isaQ, data: msgMid(128, 140).at(148).issue1(isStall).at(156).issue1(isInst).inst(0, 0, instOtherMsg).at(160).waveEnd(0, 0, 0).bytes()},
		libCase{name: "gfx9-msg-shifts-issue-index", isa: isaQ, data: ws0().at(120).issue1(isInst).at(124).issue1(isInst).at(140).issue1(isInst).at(144).issue1(isInst).
			at(160).inst(0, 0, instVALU32).inst(0, 0, instOtherMsg).at(164).inst(0, 0, instSALU32).at(200).waveEnd(0, 0, 0).bytes()},
		libCase{name: "gfx9-msg-stale-issue-index", isa: isaQ, data: ws0().at(120).issue1(isInst).at(124).issue1(isInst).at(160).inst(0, 0, instOtherMsg).at(164).inst(0, 0, instSALU32).at(200).waveEnd(0, 0, 0).bytes()},
		libCase{name: "gfx9-msg-immed-after-later-end", isa: isaQ, data: ws0().at(120).issue1(isInst).issue1(isInst).at(124).inst(0, 0, instSALU32).inst(0, 0, instOtherMsg).at(160).issue1(isImmed).at(172).waveEnd(0, 0, 0).bytes()},
		libCase{name: "gfx9-endpgm-stall-before-prev-end", isa: isaQ, data: ws0().at(120).issue1(isStall).issue1(isInst).at(124).inst(0, 0, instVALU32).at(136).issue1(isInst).inst(0, 0, instOtherMsg).waveEnd(0, 0, 0).bytes()},
		libCase{name: "gfx9-endpgm-stall-in-prev", isa: isaQ, data: ws0().at(120).issue1(isInst).at(128).issue1(isStall).at(140).inst(0, 0, instVALU32).at(144).issue1(isInst).at(148).inst(0, 0, instOtherMsg).at(160).waveEnd(0, 0, 0).bytes()},
		libCase{name: "gfx9-endpgm-stall-at-prev-end", isa: isaQ, data: ws0().at(120).issue1(isInst).at(124).issue1(isStall).inst(0, 0, instVALU32).at(136).issue1(isInst).inst(0, 0, instOtherMsg).waveEnd(0, 0, 0).bytes()},
		libCase{name: "gfx9-endpgm-two-stalls", isa: isaQ, data: ws0().at(120).issue1(isStall).issue1(isInst).at(124).inst(0, 0, instVALU32).at(128).issue1(isStall).at(136).issue1(isInst).inst(0, 0, instOtherMsg).waveEnd(0, 0, 0).bytes()},
		libCase{name: "gfx9-endpgm-stall-after-its-issue", isa: isaQ, data: ws0().at(120).issue1(isInst).at(124).inst(0, 0, instVALU32).at(128).issue1(isStall).
			at(136).issue1(isInst).at(140).issue1(isStall).at(144).inst(0, 0, instOtherMsg).at(148).waveEnd(0, 0, 0).bytes()},
		libCase{name: "gfx9-endpgm-cut-from-its-issue", isa: isaQ, data: ws0().at(120).issue1(isInst).at(124).inst(0, 0, instVALU32).at(128).issue1(isInst).at(132).issue1(isStall).at(136).inst(0, 0, instOtherMsg).at(140).waveEnd(0, 0, 0).bytes()},
	)
	// A.4 item 8.9: 0.1.6's gfx9 stitcher fails when its swap rescue (the
	// next instruction has the line's category) needs the line after the
	// last one the ISA callback knows.
	isaEnd := newTable(0, "0x1000 4 s_mov_b32 s0, 0", "0x1004 4 s_nop 0", "0x1008 4 s_nop 0")
	isaEndV := newTable(0, "0x1000 4 s_mov_b32 s0, 0", "0x1004 4 s_nop 0", "0x1008 4 v_mov_b32 v0, 0")
	twoThen := func(k int) *tb {
		return ws0().at(120).issue1(isInst).at(124).inst(0, 0, instSALU32).issue1(isInst).at(128).inst(0, 0, k)
	}
	cs = append(cs,
		libCase{name: "gfx9-stitch-no-line-after", isa: isaEnd, data: twoThen(instVALU32).at(132).issue1(isImmed).at(140).waveEnd(0, 0, 0).bytes()},
		libCase{name: "gfx9-stitch-no-line-after-no-end", isa: isaEnd, data: twoThen(instVALU32).at(132).issue1(isImmed).bytes()},
		libCase{name: "gfx9-stitch-no-line-after-last", isa: isaEnd, data: twoThen(instVALU32).at(140).waveEnd(0, 0, 0).bytes()},
		libCase{name: "gfx9-stitch-no-line-after-other-category", isa: isaEnd, data: twoThen(instVALU32).at(132).issue1(isInst).at(136).inst(0, 0, instSALU32).at(140).waveEnd(0, 0, 0).bytes()},
		libCase{name: "gfx9-stitch-no-line-after-valu-line", isa: isaEndV, data: twoThen(instLDS).at(132).issue1(isInst).at(136).inst(0, 0, instVALU32).at(140).waveEnd(0, 0, 0).bytes()},
		libCase{name: "gfx9-stitch-line-after-known", isa: isaEndV, data: twoThen(instLDS).at(132).issue1(isImmed).at(140).waveEnd(0, 0, 0).bytes()},
	)
	// A.4 item 8.9: the search for the TIME after a TIME_RESET already
	// fails a token with a wave slot above 9, before the tokens it read
	// take effect (here the WAVE_END of a wave).
	for name, bad := range map[string]func(*tb) *tb{
		"wave-end":          func(b *tb) *tb { return b.put(tWaveEnd|group(0, 0, 14, 0), 2) },
		"wave-end-other-cu": func(b *tb) *tb { return b.put(tWaveEnd|group(0, 3, 14, 0), 2) },
		"inst":              func(b *tb) *tb { return b.inst(0, 12, instSALU32) },
		"inst-pc":           func(b *tb) *tb { return b.instPC(0, 12, 0x1000) },
		"shader-data":       func(b *tb) *tb { return b.shaderData(0, 0, 12, 5) },
		"wave-alloc":        func(b *tb) *tb { return b.put(tWaveAlloc|group(0, 1, 12, 3), 2) },
		"wave-start":        func(b *tb) *tb { return b.waveStart(0, 0, 12, 1, 0, 1, 0) },
	} {
		w := func() *tb { return ws0().at(120).issue1(isInst).at(124).inst(0, 0, instSALU32) }
		cs = append(cs,
			libCase{name: "gfx9-time-reset-search-bad-slot-" + name, data: bad(w().misc(1, miscTimeReset).waveEnd(0, 0, 0)).bytes()},
			libCase{name: "gfx9-time-reset-found-then-bad-slot-" + name, data: bad(w().misc(1, miscTimeReset).waveEnd(0, 0, 0).timeTok(5000)).bytes()})
	}
	// A.4 item 8.10: a stall is kept in 24 bits, so trimming an IMMED of
	// 2^24 cycles or more compares the low 24 bits of its stall.
	for _, d := range []uint64{1<<24 + 100, 1 << 24, 1<<24 + 8, 3<<24 + 0x123450, 1 << 20} {
		cs = append(cs, libCase{name: sprintf("gfx9-immed-stall-24-bits-%#x", d), data: ws0().at(120).issue1(isInst).at(124).inst(0, 0, instVALU32).
			misc(0, miscTimeReset).timeTok(1_000_000).misc(0, miscTimeReset).timeTok(1_000_000+d).
			issue1(isImmed).issue1(isInst).inst(0, 0, instVALU32).misc(4, miscTime).waveEnd(0, 0, 0).bytes()})
	}
	// 2.4 and A.4 W2: every instruction code of each generation, once in
	// a wave of its own on the target SIMD and once for a wave slot without
	// a wave (other-SIMD records), with a DPRate of 1.
	for _, gen := range []int{10, 11, 12} {
		r := newRB(gen).header(map[int]int{10: 2, 11: 3, 12: 4}[gen], 0, 0, 0, 1, 0, 0).pgm(0, 0, 0x2000)
		for code := 0; code < 256; code++ {
			t := int64(100 + 200*code)
			r.at(t).waveStart(0, 0, 0, 0, 0, 0, 1).at(t+4).inst(0, code).at(t+10).inst(1, code).at(t+100).waveEnd(0, 0, 0, 0)
		}
		cs = append(cs, libCase{name: sprintf("rdna-gfx%d-every-code", gen), data: r.nop().pad()})
	}
	// 2.2.4: every gfx9 INST type, issued in a wave of its own.
	{
		b := newTB(4, 0, false).pgm(1, 0, 0x1000)
		for k := 0; k < 32; k++ {
			t := int64(100 + 100*k)
			b.at(t).waveStart(0, 0, 0, 1, 0, 1, 0).at(t+8).issue1(isInst).at(t+12).inst(0, 0, k).
				at(t+20).issue1(isInst).at(t+24).inst(0, 0, instSALU32).at(t+60).waveEnd(0, 0, 0)
		}
		cs = append(cs, libCase{name: "gfx9-every-inst-type", data: b.bytes(),
			isa: newTable(0, "0x1000 4 s_mov_b32 s0, 0", "0x1004 4 s_mov_b32 s1, 0", "0x1008 4 s_endpgm")})
	}
	// A.4 item 7.14: 0.1.6 frames the nibble 0111 as an 8-bit token
	// without a time field.
	for _, gen := range []int{10, 11, 12} {
		for k := uint64(0); k < 16; k += 5 {
			r := newRB(gen).header(map[int]int{10: 2, 11: 3, 12: 4}[gen], 0, 0, 0, 0, 0, 0).bits(0b0111|k<<4, 8)
			r.at(40).waveStart(0, 0, 0, 0, 0, 0, 1)
			cs = append(cs, libCase{name: sprintf("rdna-gfx%d-nibble0111-then-%x", gen, k), data: r.nop().pad()})
		}
	}
	// A.4 item 7.15: an incomplete wave ends no earlier than its last INST
	// token of a code without category (gfx12 code 175 has none).
	for _, gen := range []int{11, 12} {
		h := func() *rb {
			return newRB(gen).header(map[int]int{11: 3, 12: 4}[gen], 0, 0, 0, 1, 0, 0).pgm(0, 0, 0x2000).at(100).waveStart(0, 0, 0, 5, 0, 0, 1)
		}
		cs = append(cs,
			libCase{name: sprintf("rdna-gfx%d-incomplete-start-only", gen), data: h().nop().pad()},
			libCase{name: sprintf("rdna-gfx%d-incomplete-no-category", gen), data: h().at(110).inst(5, 175).nop().pad()},
			libCase{name: sprintf("rdna-gfx%d-incomplete-valu-then-no-category", gen), data: h().at(110).valu(5).at(120).inst(5, 175).nop().pad()},
			libCase{name: sprintf("rdna-gfx%d-incomplete-valu", gen), data: h().at(110).valu(5).nop().pad()},
			libCase{name: sprintf("rdna-gfx%d-incomplete-valu-then-late-no-category", gen), data: h().at(110).valu(5).at(200).inst(5, 175).nop().pad()},
		)
	}
	// A.4 item 7.13: 0.1.6's reorder step in the tail of a gfx10 or gfx11
	// buffer. Entering the tail releases the queue; there a token later
	// than the queued ones is handled at once after them, an earlier one (a
	// WAVE_READY, delivered one cycle early) at once before them. Each
	// stream is unpadded and ends so that its tail begins after the token
	// marked by lastOut. In every case but the first READY of
	// two-readies, the decoder before this rule put the READY before the
	// VALU it follows, as the main loop does.
	for _, gen := range []int{10, 11} {
		h := func(slots ...int) *rb {
			r := newRB(gen).header(map[int]int{10: 2, 11: 3}[gen], 0, 0, 0, 1, 0, 0).at(2)
			for _, s := range slots {
				r.waveStart(0, 0, 0, s, 0, 0, 1)
			}
			return r
		}
		for _, c := range []struct {
			name  string
			build func(p *int) *rb
		}{
			// The VMEM_EXEC at 4 is queued, the VALU releases it and is
			// handled at once, so the READY comes after the VALU.
			{"after-valu", func(p *int) *rb { return h(2).at(3).lastOut(p).vmemExec().at(4).vmemExec().at(6).valu(2).ready(1 << 2) }},
			// The tail is the READY: the VALU the main loop queued is
			// released first.
			{"at-ready", func(p *int) *rb { return h(2).at(3).vmemExec().at(6).lastOut(p).valu(2).ready(1 << 2) }},
			// Two tokens of one time are queued together, and the VALU
			// releases them and is handled at once.
			{"equal-pair", func(p *int) *rb {
				return h(2).at(3).lastOut(p).vmemExec().at(4).vmemExec().vmemExec().at(6).valu(2).ready(1 << 2)
			}},
			// VALUs of slots 2 and 3 at one time, the tail beginning at
			// the second: entering the tail releases the first, the
			// second is queued, and the READY comes between them.
			{"inside-group", func(p *int) *rb { return h(2, 3).at(3).vmemExec().at(6).lastOut(p).valu(2).valu(3).ready(1<<2 | 1<<3) }},
			// A READY after two queued VALUs comes before them and
			// releases them; the next READY comes before the IMM_ONE
			// queued after that, not before the VALU of slot 0.
			{"two-readies", func(p *int) *rb {
				return h(0, 1, 2).at(3).lastOut(p).vmemExec().at(6).valu(2).valu(0).ready(1 << 2).immOne(1).ready(1<<0 | 1<<1)
			}},
			// A VALU after the READY: the READY, queued alone, is
			// released by it, so the stall goes to the second VALU.
			{"then-valu", func(p *int) *rb {
				return h(2).at(3).lastOut(p).vmemExec().at(4).vmemExec().at(6).valu(2).ready(1 << 2).at(7).valu(2)
			}},
		} {
			var p int
			r := c.build(&p)
			cs = append(cs, libCase{name: sprintf("rdna-gfx%d-ready-tail-%s", gen, c.name), data: r.endTail(p)})
		}
	}
	// §4.6: 0.1.6 has no RT_TIMESTAMP_LO32 (instrumentation opcode 7).
	rt := func(b *tb, data uint32) *tb { return b.reg(1, 0, regUserData3, data) }
	lo32 := newTB(4, 0, false).roc().ud2(opAgentInfo, 0, 100000)
	rt(rt(rt(rt(lo32.at(100), opRTTimestamp), 0x10), 1), 0x18)
	rt(rt(lo32.at(200), opRTTimestampLo), 0x20)
	cs = append(cs, libCase{name: "gfx9-rt-timestamp-lo32", data: lo32.bytes()})
	// A.3 item 2: no 3.5 step 4 rule for a wave whose first instruction,
	// at a known PC, is an s_barrier.
	cs = append(cs, libCase{name: "gfx9-barrier-first",
		isa:  newTable(0, "0x1000 4 s_barrier", "0x1004 4 s_mov_b32 s0, 0", "0x1008 4 s_endpgm"),
		data: ws0().at(120).issue1(isImmed).at(124).issue1(isInst).at(128).inst(0, 0, instSALU32).at(140).waveEnd(0, 0, 0).bytes()})
	// A.4 item 7.6: no gfx12 v_mov_b64 rule, and ds_bvh is LDS (the
	// second instruction: the first takes the wave's start PC).
	wave12 := func(ops func(*rb) *rb) []byte {
		return ops(newRB(12).header(4, 0, 0, 0, 0, 0, 0).pgm(0, 0, 0x2000).at(100).waveStart(0, 0, 0, 0, 0, 0, 1).at(104).valu(0)).
			at(130).waveEnd(0, 0, 0, 0).nop().pad()
	}
	cs = append(cs,
		libCase{name: "rdna-gfx12-v-mov-b64", isa: newTable(0, "0x2000 4 v_add_f32_e32 v1, v0, v0", "0x2004 8 v_mov_b64 v[0:1], v[2:3]", "0x200c 4 s_endpgm"),
			data: wave12(func(r *rb) *rb { return r.at(110).valu(0) })},
		libCase{name: "rdna-gfx12-ds-bvh", isa: newTable(0, "0x2000 4 v_add_f32_e32 v1, v0, v0", "0x2004 8 ds_bvh_stack_rtn_b32 v0, v1, v2, v[3:6]", "0x200c 4 s_endpgm"),
			data: wave12(func(r *rb) *rb { return r.at(110).inst(0, 41) })},
	)
	return cs
}

// caseDecoder is what decodes a case: the library or the native decoder.
type caseDecoder interface {
	Decode(context.Context, io.Reader, isa.Provider, backend.Emit) error
}

// libJSON decodes data into att-decode's JSON projection, ending with a
// line "decode failed" when the decoder fails.
func libJSON(t *testing.T, d caseDecoder, c libCase) []byte {
	t.Helper()
	out, err := caseJSON(d, c)
	if err != nil {
		t.Logf("%s: %v", c.name, err)
	}
	return out
}

// caseJSON is libJSON without the log: the records, the line "decode
// failed" when the decoder fails, and the failure.
func caseJSON(d caseDecoder, c libCase) ([]byte, error) {
	p := c.isa
	if p == nil {
		p = newTable(0)
	}
	h := wire.Header{Trace: wire.Trace{SE: 0, Run: 1}}
	var jw wire.JSONWriter
	var out []byte
	err := d.Decode(context.Background(), bytes.NewReader(c.data), p, func(b *wire.Batch) error {
		out = jw.AppendBatch(out, &h, b)
		return nil
	})
	if err != nil {
		// The records before a failure, then the failure (its message
		// differs between the decoders).
		out = append(out, "decode failed\n"...)
	}
	return out, err
}

// TestLibrary016 requires, for every case, the native decoder's records
// under Compat Lib016 to equal the 0.1.6 library's, byte for byte in the JSON
// projection.
func TestLibrary016(t *testing.T) {
	var lib *cdec.Decoder
	if path := os.Getenv(cdec.EnvLib); path != "" {
		d, err := cdec.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		lib = d
	} else if *updateLib016 {
		t.Fatal("-update-lib016 needs " + cdec.EnvLib)
	}
	names := map[string]bool{}
	for _, c := range libCases016() {
		t.Run(c.name, func(t *testing.T) {
			if names[c.name] {
				t.Fatalf("two cases named %s", c.name)
			}
			names[c.name] = true
			file := filepath.Join("testdata", "lib016", c.name+".jsonl")
			if lib != nil {
				got := libJSON(t, lib, c)
				if *updateLib016 {
					if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(file, got, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				want, err := os.ReadFile(file)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("the library's records are not those of %s (rerun with -update-lib016): %s", file, testutil.FirstDiff(got, want))
				}
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (write it with %s set and -update-lib016)", err, cdec.EnvLib)
			}
			got := libJSON(t, &Decoder{Compat: Lib016, PoolLimit: -1}, c)
			if !bytes.Equal(got, want) {
				t.Errorf("native (Lib016) differs from the library's records in %s: %s", file, testutil.FirstDiff(got, want))
			}
		})
	}
}
