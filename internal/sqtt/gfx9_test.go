package sqtt

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
	"testing/iotest"

	"github.com/attkit/attkit/internal/testutil"
	"github.com/attkit/attkit/internal/wire"
)

func TestDispatchAndEvents(t *testing.T) {
	tr := newTB(5, 0, false).roc().codeObject(0x1000, 0x100, 7, false, false).
		regCS(1, 2, regNumThreadX, 256).regCS(1, 2, regNumThreadY, 2).regCS(1, 2, regNumThreadZ, 1).
		regCS(1, 2, regRsrc1, 3|2<<7|1<<10|1<<14).regCS(1, 2, regRsrc2, 1|4<<1|2<<15).
		regCS(1, 2, regPktLo, 0xdead0000).regCS(1, 2, regPktHi, 0x7fff).
		pgm(1, 2, 0x1000).
		at(40).regCS(1, 2, regDispatchInitiator, 1).
		at(44).regCS(1, 2, regNowhere, csPartialFlush).
		regCS(1, 2, regNowhere, 6). // not a CS_PARTIAL_FLUSH
		at(48).misc(0, miscTTStallBegin).
		at(52).misc(0, miscTTStallEnd).
		at(60).codeObject(0x1000, 0x100, 7, false, true). // unload
		codeObject(0x1000, 0x100, 8, false, true).        // not loaded: nothing
		at(64).regCS(1, 2, regDispatchInitiator, 1).
		at(68).regCS(1, 2, regDispatchInitiator, 2). // bit 0 clear: no dispatch
		regCS(0, 3, regDispatchInitiator, 1)
	got, err := decode(t, tr.bytes(), nil)
	if err != nil {
		t.Fatal(err)
	}
	d := wire.Dispatch{MEID: 1, PipeID: 2, UserSGPRs: 4, Flags: 0x1 | 0x4 | 0x8, VGPRs: 32, SGPRs: 48,
		LDSSize: 1024, ThreadDim: [3]uint32{256, 2, 1}, DispatchPktAddr: 0x7fffdead0000}
	d1, d2 := d, d
	d1.Time, d1.EntryPoint = 40, wire.PC{Address: 0, CodeObjectID: 7}
	d2.Time, d2.EntryPoint = 64, wire.PC{Address: 0x1000}
	check(t, got, []wire.Batch{
		gfxip(9),
		loadEvent(0),
		dispatchB(d1),
		eventB(wire.Event{Time: 44, Type: wire.EventCSPartialFlush, MEID: 1, PipeID: 2}),
		eventB(wire.Event{Time: 48, Type: wire.EventTTStallBegin}),
		eventB(wire.Event{Time: 52, Type: wire.EventTTStallEnd}),
		eventB(wire.Event{Time: 60, Type: wire.EventCodeObjectUnload, MEID: 1, Flags: 1, Payload: 7}),
		dispatchB(d2),
		dispatchB(wire.Dispatch{Time: 68, MEID: 0, PipeID: 3, UserSGPRs: 4, Flags: 0x1 | 0x4 | 0x8,
			VGPRs: 32, SGPRs: 48, LDSSize: 1024, ThreadDim: [3]uint32{256, 2, 1}}),
	})
}

func TestLateAttribution(t *testing.T) {
	for _, fromStart := range []bool{true, false} {
		tr := newTB(5, 0, false).pgm(1, 0, 0x1000).
			at(100).waveStart(0, 0, 0, 1, 0, 1, 0).waveStart(1, 0, 0, 1, 0, 1, 0).waveStart(2, 0, 0, 1, 0, 1, 0).
			at(120).issue1(isInst).at(124).inst(0, 0, instSALU32).
			at(140).waveEnd(2, 0, 0). // ends before the load: attributed at the flush
			at(152).roc().codeObject(0x1000, 0x100, 7, fromStart, false).
			at(160).waveEnd(0, 0, 0).
			at(164).waveEnd(1, 0, 0)
		isa := newTable(7, "0x0 4 s_mov_b32 s0, 0")
		for pc, e := range newTable(0, "0x1000 4 s_mov_b32 s0, 0").m {
			isa.m[pc] = e
		}
		got, err := decode(t, tr.bytes(), isa)
		if err != nil {
			t.Fatal(err)
		}
		pc := wire.PC{Address: 0, CodeObjectID: 7}
		if !fromStart {
			pc = wire.PC{Address: 0x1000}
		}
		check(t, got, []wire.Batch{
			gfxip(9),
			loadEvent(152),
			waveB(wire.Wave{Dispatcher: 0x10, WorkgroupID: 1, BeginTime: 100, EndTime: 164,
				Instructions: []wire.Instruction{in(wire.CatSALU, 120, 4, 0, pc.Address, pc.CodeObjectID)},
				Timeline:     tl(sIdle, 20, sExec, 44)}),
			occB(
				occStart(pc.Address, pc.CodeObjectID, 100, 0, 0, 0, 1, 0, 0),
				occStart(pc.Address, pc.CodeObjectID, 100, 1, 0, 0, 1, 0, 0),
				occStart(pc.Address, pc.CodeObjectID, 100, 2, 0, 0, 1, 0, 0),
				occEnd(pc.Address, pc.CodeObjectID, 140, 2, 0, 0),
				occEnd(pc.Address, pc.CodeObjectID, 160, 0, 0, 0),
				occEnd(pc.Address, pc.CodeObjectID, 164, 1, 0, 0),
			),
		})
	}
}

func TestRealtime(t *testing.T) {
	rt := func(tr *tb, data uint32) *tb { return tr.reg(1, 0, regUserData3, data) }
	tr := newTB(5, 0, false)
	rt(tr, opRTTimestamp) // before '\0ROC': ignored
	tr.roc().ud2(opAgentInfo, 0, 100000)
	rt(rt(rt(rt(tr.at(100), opRTTimestamp), 0xFFFFFFF0), 1), 0xFFFFFFF8)
	rt(rt(tr.at(200), opRTTimestampLo), 0x10)                       // low half wrapped: HI 2
	rt(rt(rt(tr.at(300), 9|2<<12), opRTTimestamp), opRTTimestampLo) // unknown packet: 2 writes skipped
	rt(rt(tr, opRTTimestampLo), 0x20)
	got, err := decode(t, tr.bytes(), nil)
	if err != nil {
		t.Fatal(err)
	}
	check(t, got, []wire.Batch{
		gfxip(9),
		rtB(wire.Realtime{ShaderClock: 100, RealtimeClock: 0x1FFFFFFF8},
			wire.Realtime{ShaderClock: 200, RealtimeClock: 0x200000010},
			wire.Realtime{ShaderClock: 300, RealtimeClock: 0x200000020}),
		rtFreq(100000000),
	})
}

func TestTrapHandler(t *testing.T) {
	tr := start().at(100).waveStart(0, 0, 0, 1, 0, 1, 0).
		at(120).issue1(isInst).at(124).inst(0, 0, instVALU32).
		at(128).issue1(isInst).at(132).inst(0, 0, instGoToTrap).
		at(140).inst(0, 0, instPC).instPC(0, 0, 0x1100).
		at(148).issue1(isInst).at(152).inst(0, 0, instSALU32).
		at(156).issue1(isInst).at(160).inst(0, 0, instPC).
		at(164).instPC(0, 0, 0x1004).
		at(172).issue1(isImmed).
		at(180).waveEnd(0, 0, 0)
	isa := newTable(0, "0x1000 4 v_mov_b32_e32 v0, 0", "0x1004 4 s_endpgm",
		"0x1100 4 s_setreg_b32 hwreg(HW_REG_MODE), s0", "0x1104 4 s_rfe_b64 s[0:1]")
	got, err := decode(t, tr.bytes(), isa)
	if err != nil {
		t.Fatal(err)
	}
	check(t, got, []wire.Batch{
		gfxip(9),
		waveB(wire.Wave{Dispatcher: 0x10, WorkgroupID: 1, BeginTime: 100, EndTime: 184,
			Instructions: []wire.Instruction{
				in(wire.CatVALU, 120, 4, 0, 0x1000, 0),
				in(wire.CatContext, 128, 16, 0, 0, 0),
				in(wire.CatSALU, 148, 4, 0, 0x1100, 0),
				in(wire.CatSALU, 156, 8, 0, 0x1104, 0),
				in(wire.CatImmed, 164, 12, 12, 0x1004, 0),
			},
			Timeline: tl(sIdle, 20, sExec, 44, sWait, 12, sExec, 8)}),
		occB(occStart(0x1000, 0, 100, 0, 0, 0, 1, 0, 0), occEnd(0x1000, 0, 180, 0, 0, 0)),
	})
}

func TestStitchSwapRescue(t *testing.T) {
	// The trace reports SALU before VALU where the program has them the
	// other way round: the stitcher swaps them (3.5 step 10, gfx9).
	tr := start().at(100).waveStart(0, 0, 0, 1, 0, 1, 0).
		at(120).issue1(isInst).at(124).inst(0, 0, instSMEMRd).
		at(128).issue1(isInst).at(132).inst(0, 0, instSALU32).
		at(136).issue1(isInst).at(140).inst(0, 0, instVALU32).
		at(148).issue1(isImmed).
		at(156).waveEnd(0, 0, 0)
	isa := newTable(0, "0x1000 8 s_load_dword s0, s[0:1], 0x0", "0x1008 4 v_add_f32_e32 v0, v0, v0",
		"0x100c 4 s_add_u32 s0, s0, 1", "0x1010 4 s_endpgm")
	got, err := decode(t, tr.bytes(), isa)
	if err != nil {
		t.Fatal(err)
	}
	check(t, got, []wire.Batch{
		gfxip(9),
		waveB(wire.Wave{Dispatcher: 0x10, WorkgroupID: 1, BeginTime: 100, EndTime: 160,
			Instructions: []wire.Instruction{
				in(wire.CatSMEM, 120, 4, 0, 0x1000, 0),
				in(wire.CatVALU, 136, 4, 0, 0x1008, 0),
				in(wire.CatSALU, 128, 4, 0, 0x100c, 0),
				in(wire.CatImmed, 140, 12, 12, 0x1010, 0),
			},
			Timeline: tl(sIdle, 20, sExec, 20, sWait, 12, sExec, 8)}),
		occB(occStart(0x1000, 0, 100, 0, 0, 0, 1, 0, 0), occEnd(0x1000, 0, 156, 0, 0, 0)),
	})
}

func TestMFMAScale(t *testing.T) {
	tr := start().at(100).waveStart(0, 0, 0, 1, 0, 1, 0).
		at(120).issue1(isInst).at(124).inst(0, 0, instVALU32).
		at(128).issue1(isInst).at(132).inst(0, 0, instVALUMAI).
		at(148).issue1(isImmed).
		at(160).waveEnd(0, 0, 0)
	isa := newTable(0, "0x1000 4 v_mov_b32_e32 v0, 0",
		"0x1004 8 v_mfma_scale_f32_16x16x128_f8f6f4 a[0:3], v[0:7], v[0:7], a[0:3], v0, v1",
		"0x100c 4 s_endpgm")
	got, err := decode(t, tr.bytes(), isa)
	if err != nil {
		t.Fatal(err)
	}
	check(t, got, []wire.Batch{
		gfxip(9),
		waveB(wire.Wave{Dispatcher: 0x10, WorkgroupID: 1, BeginTime: 100, EndTime: 164,
			Instructions: []wire.Instruction{
				in(wire.CatVALU, 120, 4, 0, 0x1000, 0),
				in(wire.CatVALU, 124, 8, 0, 0x1004, 0), // 4 earlier, 4 longer
				in(wire.CatImmed, 132, 20, 20, 0x100c, 0),
			},
			Timeline: tl(sIdle, 20, sExec, 12, sWait, 20, sExec, 12)}),
		occB(occStart(0x1000, 0, 100, 0, 0, 0, 1, 0, 0), occEnd(0x1000, 0, 160, 0, 0, 0)),
	})
}

func TestPhaseCounterAndTrim(t *testing.T) {
	tr := start().at(100).waveStart(0, 0, 0, 1, 0, 1, 0).
		at(120).issue1(isInst).
		at(124).issue1(isInst).
		at(140).inst(0, 0, instVMEMRd).
		at(144).inst(0, 0, instVALU32). // issued before the load ended: phase counter 16
		at(152).issue1(isInst).at(160).inst(0, 0, instSALU32).
		at(168).waveEnd(0, 0, 0)
	isa := newTable(0, "0x1000 8 buffer_load_dword v0, off, s[0:3], 0", "0x1008 4 v_mov_b32_e32 v1, 0",
		"0x100c 4 s_mov_b32 s0, 0")
	got, err := decode(t, tr.bytes(), isa)
	if err != nil {
		t.Fatal(err)
	}
	check(t, got, []wire.Batch{
		gfxip(9),
		waveB(wire.Wave{Dispatcher: 0x10, WorkgroupID: 1, BeginTime: 100, EndTime: 172,
			Instructions: []wire.Instruction{
				in(wire.CatVMEM, 120, 4, 0, 0x1000, 0), // trimmed to the next issue
				in(wire.CatVALU, 124, 24, 0, 0x1008, 0),
				in(wire.CatSALU, 152, 8, 0, 0x100c, 0), // phase (16+0)%4+5 = 5
			},
			Timeline: tl(sIdle, 20, sExec, 32, sExec, 20)}),
		occB(occStart(0x1000, 0, 100, 0, 0, 0, 1, 0, 0), occEnd(0x1000, 0, 168, 0, 0, 0)),
	})
}

func TestImmedTrimsRunningInstruction(t *testing.T) {
	tr := start().at(100).waveStart(0, 0, 0, 1, 0, 1, 0).
		at(120).issue1(isInst).at(160).inst(0, 0, instVMEMRd).issue1(isImmed).
		at(168).waveEnd(0, 0, 0)
	got, err := decode(t, tr.bytes(), newTable(0, "0x1000 8 buffer_load_dword v0, off, s[0:3], 0", "0x1008 4 s_endpgm"))
	if err != nil {
		t.Fatal(err)
	}
	check(t, got[1:2], []wire.Batch{
		waveB(wire.Wave{Dispatcher: 0x10, WorkgroupID: 1, BeginTime: 100, EndTime: 172,
			Instructions: []wire.Instruction{
				in(wire.CatVMEM, 120, 40, 0, 0x1000, 0), // 44 cycles trimmed to the IMMED at 160
				in(wire.CatImmed, 160, 4, 4, 0x1008, 0),
			},
			Timeline: tl(sIdle, 20, sExec, 40, sWait, 4, sExec, 8)}),
	})
}

func TestPooledBatches(t *testing.T) {
	// Shader data: batches of 65536, the rest at the end.
	tr := newTB(5, 0, false)
	for i := 0; i < 65536+5; i++ {
		tr.shaderData(0, 0, 0, uint32(i))
	}
	lens := batchLens(t, tr.bytes(), New())
	if want := "gfxip:1 shaderdata:65536 shaderdata:5"; lens != want {
		t.Errorf("shader data batches %s, want %s", lens, want)
	}
	// Double-buffered captures flush occupancy at 65536 pending records.
	tr = newTB(5, 0, true)
	for i := 0; i < 32769; i++ {
		tr.waveStart(1, 0, 0, 1, 0, 1, 0).waveEnd(1, 0, 0)
	}
	if lens, want := batchLens(t, tr.bytes(), New()), "gfxip:1 occupancy:65536 occupancy:2"; lens != want {
		t.Errorf("double-buffer occupancy batches %s, want %s", lens, want)
	}
	// Without double buffering, PoolLimit bounds what is pooled.
	tr = newTB(5, 0, false)
	for i := 0; i < 6; i++ {
		tr.waveStart(1, 0, 0, 1, 0, 1, 0).waveEnd(1, 0, 0)
	}
	if lens, want := batchLens(t, tr.bytes(), &Decoder{PoolLimit: 10}), "gfxip:1 occupancy:10 occupancy:2"; lens != want {
		t.Errorf("PoolLimit occupancy batches %s, want %s", lens, want)
	}
	if lens, want := batchLens(t, tr.bytes(), &Decoder{PoolLimit: -1}), "gfxip:1 occupancy:12"; lens != want {
		t.Errorf("unlimited pool: occupancy batches %s, want %s", lens, want)
	}
	if lens, want := batchLens(t, tr.bytes(), New()), "gfxip:1 occupancy:12"; lens != want {
		t.Errorf("occupancy batches %s, want %s", lens, want)
	}
}

func batchLens(t *testing.T, data []byte, d *Decoder) string {
	t.Helper()
	var s []byte
	err := d.Decode(context.Background(), bytes.NewReader(data), nil, func(b *wire.Batch) error {
		if len(s) > 0 {
			s = append(s, ' ')
		}
		s = append(s, sprintf("%v:%d", b.Type, b.Len())...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return string(s)
}

func TestCancel(t *testing.T) {
	data, _ := synthTrace(20, 200)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := New().Decode(ctx, bytes.NewReader(data), nil, func(*wire.Batch) error { return nil })
	if err != context.Canceled {
		t.Errorf("err %v", err)
	}
}

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		text  string
		gfxip int
		want  uint8
	}{
		{"s_load_dword s0, s[0:1], 0x0", 9, lcSMEM},
		{"s_waitcnt lgkmcnt(0)", 9, lcImmed},
		{"s_cbranch_scc0 65534", 9, lcBranch},
		{"s_branch 3", 9, lcBranch},
		{"v_mov_b32_e32 v0, s0", 9, lcVALU},
		{"v_mfma_scale_f32_16x16x128_f8f6f4 a[0:3]", 9, lcMFMAScale},
		{"v_mfma_scale_f32_16x16x128_f8f6f4 a[0:3]", 12, lcVALU},
		{"v_mov_b64 v[0:1], 0", 12, lcVMovB64},
		{"global_store_dword v[0:1], v0, off", 9, lcVMEM},
		{"flat_load_dword v0, v[0:1]", 9, lcFLAT},
		{"ds_read_b32 v0, v1", 9, lcLDS},
		{"ds_bvh_stack_rtn_b32 v0, v1", 12, lcBVH},
		{"ds_bvh_stack_rtn_b32 v0, v1", 9, lcLDS},
		{"s_endpgm", 9, lcImmed},
		{"s_barrier", 9, lcGFX9Barrier},
		{"s_barrier", 11, lcImmed},
		{"s_setprio 3", 9, lcImmed},
		{"s_setprio_inc_wg 1", 12, lcSALU},
		{"s_nop 0", 9, lcImmed},
		{"s_code_end", 9, lcSALU},   // not in the table: SALU
		{"s_dcache_inv", 9, lcSMEM}, // "s_dcache" comes first in the walk
		{"buffer_nop", 9, lcSkip},   // SKIP
		{"s_wait_alu 0xfffd", 12, lcSkip},
		{"s_getpc_b64 s[0:1]", 9, lcSALU},
		{"s_rfe_b64 s[0:1]", 9, lcSALU},
		{"image_bvh_intersect_ray v[0:3]", 11, lcBVH},
		{"image_sample v[0:3], v0", 11, lcVMEM},
		{"exp mrt0 v0, v0, v0, v0", 11, lcDontKnow},
		{"", 9, lcDontKnow},
		{"scratch_load_dword v0, off, s0", 9, lcVMEM},
		{"s_scratch_load_dword s0, s[0:1], 0x0", 9, lcSMEM},
		{"buffer_load_dword v0, off, s[0:3], 0", 9, lcVMEM},
		{"tbuffer_load_format_x v0", 9, lcVMEM},
	} {
		if got := classify(tc.text, tc.gfxip); got != tc.want {
			t.Errorf("classify(%q, gfx%d) = %d, want %d", tc.text, tc.gfxip, got, tc.want)
		}
	}
}

func TestBranchOffset(t *testing.T) {
	for _, tc := range []struct {
		text string
		want int64
	}{
		{"s_cbranch_scc0 65534", -2},
		{"s_branch 3", 3},
		{"s_cbranch_vccz 32768", -32768},
		{"s_cbranch_vccz 32767", 32767},
		{"s_branch -4", -4},
		{"s_branch +4", 4},
		{"s_branch 12abc", 12},
		{"s_branch label_0", 0},
		{"s_branch 5 ", 5},
		{"s_branch", 0},
	} {
		if got := branchOffset(tc.text); got != tc.want {
			t.Errorf("branchOffset(%q) = %d, want %d", tc.text, got, tc.want)
		}
	}
}

func TestBarrierMessageLast(t *testing.T) {
	// A barrier entry with no exit token: the stitcher steps past the
	// (missing) next instruction, so the stitch counts as incomplete.
	tr := withCodeObject().at(100).waveStart(0, 0, 0, 1, 0, 1, 0).
		at(120).issue1(isInst).at(124).inst(0, 0, instVALU32).
		at(128).issue1(isInst).at(132).inst(0, 0, instOtherMsg).
		at(140).waveEnd(0, 0, 0)
	got, err := decode(t, tr.bytes(), newTable(7, "0x0 4 v_mov_b32_e32 v0, 0", "0x4 4 s_barrier", "0x8 4 s_endpgm"))
	if err != nil {
		t.Fatal(err)
	}
	check(t, got, []wire.Batch{
		gfxip(9),
		loadEvent(0),
		info(wire.InfoStitchIncomplete),
		waveB(wire.Wave{Dispatcher: 0x10, WorkgroupID: 1, BeginTime: 100, EndTime: 144,
			Instructions: []wire.Instruction{
				in(wire.CatVALU, 120, 4, 0, 0, 7),
				in(wire.CatMessage, 128, 4, 0, 4, 7),
			},
			Timeline: tl(sIdle, 20, sExec, 8, sExec, 16)}),
		occB(occStart(0, 7, 100, 0, 0, 0, 1, 0, 0), occEnd(0, 7, 140, 0, 0, 0)),
	})
}

func TestReadAndEmitErrors(t *testing.T) {
	data := testutil.Unhex(t, testutil.VectorB1)
	boom := errors.New("boom")
	r := io.MultiReader(bytes.NewReader(data[:50]), iotest.ErrReader(boom))
	err := New().Decode(context.Background(), r, nil, func(*wire.Batch) error { return nil })
	if !errors.Is(err, boom) {
		t.Errorf("read error: got %v", err)
	}
	// An emit error stops the decode and is returned as is.
	n := 0
	err = New().Decode(context.Background(), bytes.NewReader(data), nil, func(b *wire.Batch) error {
		n++
		if b.Type == wire.TypeWave {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) || n != 2 {
		t.Errorf("emit error: got %v after %d batches", err, n)
	}
}

func TestSmallReads(t *testing.T) {
	// Records do not depend on how the input arrives.
	data, _ := synthTrace(2, 20)
	data = append(testutil.Unhex(t, testutil.VectorB2)[:len(testutil.Unhex(t, testutil.VectorB2))-8], data[8:]...)
	collect := func(r io.Reader) string {
		var s []byte
		err := New().Decode(context.Background(), r, newTable(7, b1Rows(0)...), func(b *wire.Batch) error {
			s = append(s, render([]wire.Batch{cloneBatch(b)})...)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return string(s)
	}
	whole := collect(bytes.NewReader(data))
	if n := countWaves(whole); n != 17 {
		t.Fatalf("%d waves, want 17", n)
	}
	if one := collect(iotest.OneByteReader(bytes.NewReader(data))); one != whole {
		t.Errorf("one-byte reads give other records:\n%s\nwant:\n%s", one, whole)
	}
	if half := collect(iotest.HalfReader(bytes.NewReader(data))); half != whole {
		t.Errorf("half reads give other records")
	}
}

func countWaves(rendered string) int {
	n := 0
	for i := 0; i+5 <= len(rendered); i++ {
		if rendered[i:i+5] == "WAVE " {
			n++
		}
	}
	return n
}
