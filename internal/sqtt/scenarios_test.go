package sqtt

import (
	"errors"
	"testing"

	"github.com/attkit/attkit/internal/testutil"
	"github.com/attkit/attkit/internal/wire"
)

// The scenarios of sqtt-format.md appendix A.2 (gfx9), each built token by
// token from section 2.2, with expectations worked out by hand from the
// algorithms of 2.2.6 and 3.5 (newest behaviour).

// start writes the common prologue: header (MI300, target CU 0) and the
// start address 0x1000 for ME 1, pipe 0.
func start() *tb { return newTB(5, 0, false).pgm(1, 0, 0x1000) }

// withCodeObject adds '\0ROC' and a code object at 0x1000 of size 0x100
// with legacy id 7, loaded from the start.
func withCodeObject() *tb {
	return newTB(5, 0, false).roc().codeObject(0x1000, 0x100, 7, true, false).pgm(1, 0, 0x1000)
}

func loadEvent(time int64) wire.Batch {
	return eventB(wire.Event{Time: time, Type: wire.EventCodeObjectLoad, MEID: 1, Flags: 1, Payload: 7})
}

func TestStateAfterImmed(t *testing.T) {
	tr := start().at(100).waveStart(0, 0, 0, 1, 0, 1, 0).
		at(120).issue1(isImmed).
		at(140).issue1(isInst).at(144).inst(0, 0, instVALU32).
		at(160).issue1(isImmed).
		at(172).waveEnd(0, 0, 0)
	isa := newTable(0, "0x1000 4 s_waitcnt vmcnt(0)", "0x1004 4 v_add_f32_e32 v0, v0, v0", "0x1008 4 s_endpgm")
	got, err := decode(t, tr.bytes(), isa)
	if err != nil {
		t.Fatal(err)
	}
	check(t, got, []wire.Batch{
		gfxip(9),
		waveB(wire.Wave{Dispatcher: 0x10, WorkgroupID: 1, BeginTime: 100, EndTime: 176,
			Instructions: []wire.Instruction{
				in(wire.CatImmed, 120, 4, 4, 0x1000, 0),
				in(wire.CatVALU, 140, 4, 0, 0x1004, 0),
				in(wire.CatImmed, 144, 20, 20, 0x1008, 0),
			},
			// The gap between an IMMED and the next issue is EXEC.
			Timeline: tl(sIdle, 20, sWait, 4, sExec, 20, sWait, 20, sExec, 12)}),
		occB(occStart(0x1000, 0, 100, 0, 0, 0, 1, 0, 0), occEnd(0x1000, 0, 172, 0, 0, 0)),
	})
}

func TestPacketLossAndMissingWaveEnd(t *testing.T) {
	tr := start().at(100).waveStart(0, 0, 0, 1, 0, 1, 0).
		at(108).misc(0, miscPacketLost).
		at(120).issue1(isInst).at(124).inst(0, 0, instSALU32)
	isa := newTable(0, "0x1000 4 s_mov_b32 s0, 0", "0x1004 4 s_endpgm")
	got, err := decode(t, tr.bytes(), isa)
	if err != nil {
		t.Fatal(err)
	}
	check(t, got, []wire.Batch{
		gfxip(9),
		eventB(wire.Event{Time: 108, Type: wire.EventPacketLoss}),
		occB(occStart(0x1000, 0, 100, 0, 0, 0, 1, 0, 0)),
		info(wire.InfoWaveIncomplete),
		waveB(wire.Wave{Dispatcher: 0x10, WorkgroupID: 1, BeginTime: 100, EndTime: 128,
			Instructions: []wire.Instruction{in(wire.CatSALU, 120, 4, 0, 0x1000, 0)},
			Timeline:     tl(sIdle, 20)}),
		info(wire.InfoDataLost),
	})
}

func TestStitchFailure(t *testing.T) {
	tr := withCodeObject().at(100).waveStart(0, 0, 0, 1, 0, 1, 0).
		at(120).issue1(isInst).at(124).inst(0, 0, instSMEMRd).
		at(132).issue1(isInst).at(136).inst(0, 0, instSMEMRd).
		at(148).issue1(isImmed).
		at(160).waveEnd(0, 0, 0)
	isa := newTable(7, "0x0 8 s_load_dword s0, s[0:1], 0x0", "0x8 4 s_waitcnt lgkmcnt(0)", "0xc 4 s_endpgm")
	got, err := decode(t, tr.bytes(), isa)
	if err != nil {
		t.Fatal(err)
	}
	check(t, got, []wire.Batch{
		gfxip(9),
		loadEvent(0),
		info(wire.InfoStitchIncomplete),
		waveB(wire.Wave{Dispatcher: 0x10, WorkgroupID: 1, BeginTime: 100, EndTime: 164,
			Instructions: []wire.Instruction{
				in(wire.CatSMEM, 120, 4, 0, 0, 7),
				in(wire.CatSMEM, 132, 4, 0, 0, 0),
				in(wire.CatImmed, 136, 16, 16, 0, 0),
			},
			Timeline: tl(sIdle, 20, sExec, 16, sWait, 16, sExec, 12)}),
		occB(occStart(0, 7, 100, 0, 0, 0, 1, 0, 0), occEnd(0, 7, 160, 0, 0, 0)),
	})
	// Without code-object instrumentation the info is never raised.
	tr = start().at(100).waveStart(0, 0, 0, 1, 0, 1, 0).
		at(120).issue1(isInst).at(124).inst(0, 0, instSMEMRd).
		at(132).issue1(isInst).at(136).inst(0, 0, instSMEMRd).
		at(160).waveEnd(0, 0, 0)
	got, err = decode(t, tr.bytes(), newTable(0, "0x1000 8 s_load_dword s0, s[0:1], 0x0", "0x1008 4 s_waitcnt lgkmcnt(0)"))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range got {
		if b.Type == wire.TypeInfo {
			t.Errorf("unexpected info %v", b.Info)
		}
	}
}

func TestSetPC(t *testing.T) {
	tr := withCodeObject().at(100).waveStart(0, 0, 0, 1, 0, 1, 0).
		at(120).issue1(isInst).at(124).inst(0, 0, instSALU32).
		at(128).issue1(isInst).at(132).inst(0, 0, instPC).
		at(136).instPC(0, 0, 0x1040).
		at(140).issue1(isInst).at(144).inst(0, 0, instVALU32).
		at(152).issue1(isImmed).
		at(160).waveEnd(0, 0, 0)
	isa := newTable(7, "0x0 4 s_getpc_b64 s[0:1]", "0x4 4 s_setpc_b64 s[0:1]",
		"0x40 4 v_mov_b32_e32 v0, 0", "0x44 4 s_endpgm")
	got, err := decode(t, tr.bytes(), isa)
	if err != nil {
		t.Fatal(err)
	}
	check(t, got, []wire.Batch{
		gfxip(9),
		loadEvent(0),
		waveB(wire.Wave{Dispatcher: 0x10, WorkgroupID: 1, BeginTime: 100, EndTime: 164,
			Instructions: []wire.Instruction{
				in(wire.CatSALU, 120, 4, 0, 0x0, 7),
				in(wire.CatSALU, 128, 8, 0, 0x4, 7),
				in(wire.CatVALU, 140, 4, 0, 0x40, 7),
				in(wire.CatImmed, 144, 12, 12, 0x44, 7),
			},
			Timeline: tl(sIdle, 20, sExec, 24, sWait, 12, sExec, 8)}),
		occB(occStart(0, 7, 100, 0, 0, 0, 1, 0, 0), occEnd(0, 7, 160, 0, 0, 0)),
	})
}

func TestTimeReset(t *testing.T) {
	tr := start().at(100).waveStart(0, 0, 0, 1, 0, 1, 0)
	// TIME_RESET at 100; a MISC carrying 12 cycles, queued while the
	// reader looks for the TIME token; TIME 5000; an ISSUE whose delta
	// bit adds 4 more: first issue at ((5000-(5000-100+4))&^3)+12+4 = 112.
	tr.misc(0, miscTimeReset).misc(3, miscTime).timeTok(5000)
	tr.put(tIssue|1<<4|isInst<<8, 4) // 112
	tr.put(tInst|1<<4|instSALU32<<11, 2)
	tr.put(tMisc|1<<4, 2)                       // 120
	tr.put(tIssue|1<<4|isImmed<<8, 4)           // 124
	tr.put(tMisc|1<<4, 2).put(tWaveEnd|1<<4, 2) // 132
	isa := newTable(0, "0x1000 4 s_mov_b32 s0, 0", "0x1004 4 s_endpgm")
	got, err := decode(t, tr.bytes(), isa)
	if err != nil {
		t.Fatal(err)
	}
	check(t, got, []wire.Batch{
		gfxip(9),
		waveB(wire.Wave{Dispatcher: 0x10, WorkgroupID: 1, BeginTime: 100, EndTime: 136,
			Instructions: []wire.Instruction{
				in(wire.CatSALU, 112, 4, 0, 0x1000, 0),
				in(wire.CatImmed, 116, 12, 12, 0x1004, 0),
			},
			Timeline: tl(sIdle, 12, sExec, 4, sWait, 12, sExec, 8)}),
		occB(occStart(0x1000, 0, 100, 0, 0, 0, 1, 0, 0), occEnd(0x1000, 0, 132, 0, 0, 0)),
	})
}

func TestBarrier(t *testing.T) {
	tr := start().at(100).waveStart(0, 0, 0, 1, 0, 1, 0).
		at(120).issue1(isInst).at(124).inst(0, 0, instVALU32).
		at(128).issue1(isInst).at(132).inst(0, 0, instOtherMsg).
		at(160).issue1(isImmed).
		at(172).issue1(isImmed).
		at(180).waveEnd(0, 0, 0)
	isa := newTable(0, "0x1000 4 v_mov_b32_e32 v0, 0", "0x1004 4 s_barrier", "0x1008 4 s_endpgm")
	got, err := decode(t, tr.bytes(), isa)
	if err != nil {
		t.Fatal(err)
	}
	check(t, got, []wire.Batch{
		gfxip(9),
		waveB(wire.Wave{Dispatcher: 0x10, WorkgroupID: 1, BeginTime: 100, EndTime: 184,
			Instructions: []wire.Instruction{
				in(wire.CatVALU, 120, 4, 0, 0x1000, 0),
				// Barrier entry (OTHER_MSG, newest: MESSAGE) and exit
				// (IMMED) share the s_barrier PC.
				in(wire.CatMessage, 128, 4, 0, 0x1004, 0),
				in(wire.CatImmed, 132, 32, 32, 0x1004, 0),
				in(wire.CatImmed, 164, 12, 12, 0x1008, 0),
			},
			Timeline: tl(sIdle, 20, sExec, 12, sWait, 32, sWait, 12, sExec, 8)}),
		occB(occStart(0x1000, 0, 100, 0, 0, 0, 1, 0, 0), occEnd(0x1000, 0, 180, 0, 0, 0)),
	})
}

func TestContextSaveRestore(t *testing.T) {
	tr := withCodeObject().at(100).waveStart(0, 0, 0, 1, 0, 1, 0).
		at(120).issue1(isInst).at(124).inst(0, 0, instVALU32).
		at(140).misc(0, miscSaveContext).
		at(164).waveStart(0, 0, 0, 1, 0, 70, 0).
		at(200).waveStart(0, 0, 0, 1, 0, 70, 0).
		at(208).inst(0, 0, instPC).instPC(0, 0, 0x1004).
		at(220).issue1(isInst).at(224).inst(0, 0, instVALU32).
		at(236).issue1(isImmed).
		at(244).waveEnd(0, 0, 0)
	isa := newTable(7, "0x0 4 v_mov_b32_e32 v0, 0", "0x4 4 v_add_f32_e32 v0, v0, v0", "0x8 4 s_endpgm")
	got, err := decode(t, tr.bytes(), isa)
	if err != nil {
		t.Fatal(err)
	}
	check(t, got, []wire.Batch{
		gfxip(9),
		loadEvent(0),
		eventB(wire.Event{Time: 140, Type: wire.EventSaveContext}),
		waveB(wire.Wave{Contexts: 1, Dispatcher: 0x10, WorkgroupID: 1, BeginTime: 100, EndTime: 248,
			Instructions: []wire.Instruction{
				in(wire.CatVALU, 120, 4, 0, 0x0, 7),
				in(wire.CatContext, 164, 48, 0, 0, 0),
				in(wire.CatVALU, 220, 4, 0, 0x4, 7),
				in(wire.CatImmed, 224, 16, 16, 0x8, 7),
			},
			Timeline: tl(sIdle, 20, sExec, 104, sWait, 16, sExec, 8)}),
		// No occupancy for the save/restore wave starts.
		occB(occStart(0, 7, 100, 0, 0, 0, 1, 0, 0), occEnd(0, 7, 244, 0, 0, 0)),
	})
}

func TestXNACKReplayAndPerfInterval(t *testing.T) {
	tr := newTB(5, 0, false).roc().ud2(opAgentInfo, 1, 64).pgm(1, 0, 0x1000).
		at(100).waveStart(0, 0, 0, 1, 0, 1, 0).
		at(120).issue1(isInst).at(124).inst(0, 0, instVMEMRd).
		at(140).issue1(isInst).at(144).inst(0, 0, instVALU32).
		at(176).issue1(isInst).at(180).inst(0, 0, 21). // VMEM_RD_REPLAY
		at(184).perf(0, 0, [4]uint64{1, 2, 3, 4}).
		at(208).waveEnd(0, 0, 0).
		at(384).perf(0, 0, [4]uint64{5, 6, 7, 8})
	isa := newTable(0, "0x1000 8 global_load_dword v1, v[2:3], off", "0x1008 4 v_mov_b32_e32 v0, 0", "0x100c 4 s_endpgm")
	got, err := decode(t, tr.bytes(), isa)
	if err != nil {
		t.Fatal(err)
	}
	check(t, got, []wire.Batch{
		gfxip(9),
		waveB(wire.Wave{Dispatcher: 0x10, WorkgroupID: 1, BeginTime: 100, EndTime: 212,
			Instructions: []wire.Instruction{
				// The replay extends the load to 180+4: duration 64, stall 56.
				in(wire.CatVMEM, 120, 64, 56, 0x1000, 0),
				in(wire.CatVALU, 140, 4, 0, 0x1008, 0),
			},
			Timeline: tl(sIdle, 20, sExec, 56, sExec, 36)}),
		occB(occStart(0x1000, 0, 100, 0, 0, 0, 1, 0, 0), occEnd(0x1000, 0, 208, 0, 0, 0)),
		perfB(
			wire.PerfEvent{Time: 184, Events: [4]uint16{1, 2, 3, 4}},
			wire.PerfEvent{Time: 384},
			wire.PerfEvent{Time: 384, Events: [4]uint16{5, 6, 7, 8}},
			wire.PerfEvent{Time: 448},
		),
	})
}

func TestPerfIntervalAnnouncedLate(t *testing.T) {
	tr := newTB(5, 0, false).roc().
		at(100).perf(0, 0, [4]uint64{1, 0, 0, 0}).
		at(300).perf(0, 0, [4]uint64{2, 0, 0, 0}).
		at(400).ud2(opAgentInfo, 1, 64).perf(2, 1, [4]uint64{9, 0, 0, 0}).
		at(420).perf(0, 0, [4]uint64{3, 0, 0, 0})
	got, err := decode(t, tr.bytes(), nil)
	if err != nil {
		t.Fatal(err)
	}
	check(t, got, []wire.Batch{
		gfxip(9),
		perfB(
			wire.PerfEvent{Time: 100, Events: [4]uint16{1}},
			wire.PerfEvent{Time: 164}, // gap filled when the interval arrives
			wire.PerfEvent{Time: 300, Events: [4]uint16{2}},
			wire.PerfEvent{Time: 392, Events: [4]uint16{9}, CU: 2, Bank: 1}, // time - 4 x cu
			wire.PerfEvent{Time: 420},
			wire.PerfEvent{Time: 420, Events: [4]uint16{3}},
			wire.PerfEvent{Time: 484},
			wire.PerfEvent{Time: 456, CU: 2, Bank: 1},
		),
	})
}

func TestLostWaveStart(t *testing.T) {
	tr := newTB(5, 0, false).at(100).inst(1, 2, instVALU32)
	got, err := decode(t, tr.bytes(), nil)
	if err != nil {
		t.Fatal(err)
	}
	check(t, got, []wire.Batch{
		gfxip(9),
		info(wire.InfoWaveIncomplete),
		waveB(wire.Wave{SIMD: 1, WaveID: 2, BeginTime: 100}),
	})
}

func TestEndWithoutStart(t *testing.T) {
	tr := newTB(5, 0, false).pgm(1, 0, 0x1000).
		at(100).waveStart(1, 0, 0, 1, 0, 1, 2).
		at(104).waveEnd(3, 1, 4). // another CU: START and END at time 0
		at(108).waveEnd(0, 0, 0)  // target CU, empty slot: nothing
	got, err := decode(t, tr.bytes(), nil)
	if err != nil {
		t.Fatal(err)
	}
	syn := wire.Occupancy{CU: 3, SIMD: 1, WaveID: 4, IsExt: true}
	synStart := syn
	synStart.Start = true
	check(t, got, []wire.Batch{
		gfxip(9),
		occB(synStart, occStart(0x1000, 0, 100, 1, 0, 0, 1, 0, 2), syn),
	})
	// After a packet loss no synthetic records are made.
	tr = newTB(5, 0, false).misc(0, miscPacketLost).at(104).waveEnd(3, 1, 4)
	got, err = decode(t, tr.bytes(), nil)
	if err != nil {
		t.Fatal(err)
	}
	check(t, got, []wire.Batch{
		gfxip(9),
		eventB(wire.Event{Type: wire.EventPacketLoss}),
		info(wire.InfoDataLost),
	})
}

func TestMalformed(t *testing.T) {
	// Wave slot 12: INVALID_SHADER_DATA, after GFXIP.
	tr := start().at(100).waveStart(0, 0, 12, 1, 0, 1, 0)
	got, err := decode(t, tr.bytes(), nil)
	var de *DataError
	if !errors.As(err, &de) || de.Offset != 8+12+2 { // header, two REG_CS, one MISC
		t.Errorf("wave slot 12: err %v", err)
	}
	check(t, got, []wire.Batch{gfxip(9)})
	for _, slotTok := range [][]byte{
		newTB(5, 0, false).inst(0, 10, instVALU32).bytes(),
		newTB(5, 0, false).instPC(0, 15, 0x1000).bytes(),
		newTB(5, 0, false).waveEnd(0, 0, 11).bytes(),
		newTB(5, 0, false).shaderData(0, 0, 13, 1).bytes(),
	} {
		if _, err := decode(t, slotTok, nil); !errors.As(err, &de) {
			t.Errorf("% x: err %v", slotTok, err)
		}
	}
	// All-zero header and a 6-byte buffer: not a trace, no records.
	for _, data := range [][]byte{make([]byte, 64), testutil.Unhex(t, testutil.VectorB1)[:6]} {
		got, err := decode(t, data, nil)
		var ae *ArchError
		if !errors.As(err, &ae) || len(got) != 0 {
			t.Errorf("% x: err %v, %d batches", data[:6], err, len(got))
		}
	}
	// A header alone is rejected as the full parser does.
	if _, err := decode(t, testutil.Unhex(t, testutil.VectorB1)[:8], nil); !errors.As(err, &de) {
		t.Errorf("header only: err %v", err)
	}
	// Empty input decodes to nothing.
	if got, err := decode(t, nil, nil); err != nil || len(got) != 0 {
		t.Errorf("empty: %v, %d batches", err, len(got))
	}
}

func TestTruncatedTokenAtEnd(t *testing.T) {
	full, err := decode(t, testutil.Unhex(t, testutil.VectorB1), newTable(0, b1Rows(0x1000)...))
	if err != nil {
		t.Fatal(err)
	}
	data := append(testutil.Unhex(t, testutil.VectorB1), 0x05, 0x18, 0x10) // 3 of REG_CS's 6 bytes
	got, err := decode(t, data, newTable(0, b1Rows(0x1000)...))
	if err != nil {
		t.Fatal(err)
	}
	check(t, got, full)
}

func TestWrongArchitectures(t *testing.T) {
	for _, tc := range []struct {
		head  uint64
		gfxip int
		name  string
	}{
		{0x11 | 1<<7, 10, "gfx10"}, {0x11 | 2<<7, 10, "gfx10"}, {0x11 | 3<<7, 11, "gfx11"},
		{0x11 | 4<<7, 12, "gfx12"}, {0x11 | 5<<7, 12, "MI400"},
	} {
		data := newTB(4, 0, false).bytes()
		for i := range 8 {
			data[i] = byte(tc.head >> (8 * i))
		}
		if a, err := Detect(data); err != nil || a.GFXIP != tc.gfxip || !contains(a.Name, tc.name) {
			t.Errorf("%#x: Detect = %+v, %v", tc.head, a, err)
			continue
		} else if a.Supported() {
			continue // decoded natively (rdna*.go): no error to check
		}
		data = append(data, make([]byte, 32)...)
		_, err := decode(t, data, nil)
		var ae *ArchError
		if !errors.As(err, &ae) || ae.Arch.GFXIP != tc.gfxip || ae.ExitCode() != 3 {
			t.Errorf("%#x: %v", tc.head, err)
			continue
		}
		if msg := err.Error(); !contains(msg, tc.name) || !contains(msg, "--backend rocm") {
			t.Errorf("%#x: message %q", tc.head, msg)
		}
	}
	// Unknown version, and a gfx9-looking header with version2 3.
	for _, h := range []uint64{0x11 | 9<<7, 0x11 | 3<<13} {
		data := make([]byte, 40)
		for i := range 8 {
			data[i] = byte(h >> (8 * i))
		}
		if _, err := decode(t, data, nil); err == nil {
			t.Errorf("%#x accepted", h)
		}
	}
	// gfx9 version2 4, 5 and 6 and legacy 0 or 0x11 are all gfx9.
	for _, h := range []uint64{0x11 | 4<<13, 5 << 13, 0x11 | 6<<13} {
		b := make([]byte, 8)
		for i := range 8 {
			b[i] = byte(h >> (8 * i))
		}
		if a, err := Detect(b); err != nil || a.GFXIP != 9 {
			t.Errorf("%#x: %+v %v", h, a, err)
		}
	}
}

func contains(s, sub string) bool { return len(s) >= len(sub) && indexOf(s, sub) >= 0 }

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}
