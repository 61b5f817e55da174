package main

import (
	"bytes"
	"testing"

	"github.com/attkit/attkit/internal/wire"
)

// The sample run: a gfx9 capture of two shader engines, written by
// wire.Writer as att-decode would. Stream A holds SE 0; stream B holds SE 1
// and then a second trace of SE 0 (two parts in one file). Between them
// they carry every record type the viewer writer reads.

func pc(co, addr uint64) wire.PC { return wire.PC{Address: addr, CodeObjectID: co} }

// sampleIndex has two code objects: kernel "mykernel" (code object 1) and
// a kernel known only by its demangled name (code object 2).
func sampleIndex() *wire.Index {
	row := func(kind wire.RowKind, co uint64, text string, line int64, src string, vaddr uint64) wire.Row {
		return wire.Row{Kind: kind, CodeObj: co, Vaddr: vaddr, Text: text, Source: src, Line: line}
	}
	return &wire.Index{
		Rows: []wire.Row{
			row(wire.RowFunction, 1, "; _mykernel", 1, "mykernel", 4864),
			row(wire.RowInstruction, 1, "s_load_dwordx2 s[0:1], s[4:5], 0x0", 2, "/src/k.cl:3", 4864),
			row(wire.RowInstruction, 1, "s_waitcnt lgkmcnt(0)", 3, "/src/k.cl:3", 4872),
			row(wire.RowInstruction, 1, "v_add_f32_e32 v0, s0, v0", 4, "/src/k.cl:4", 4876),
			row(wire.RowInstruction, 1, "s_endpgm", 5, "/src/k.cl:5", 4880),
			row(wire.RowFunction, 2, "; _Z5scalePf", 6, "_Z5scalePf", 5632),
			row(wire.RowInstruction, 2, "v_mul_f32_e32 v1, 2.0, v1", 7, "/src/s.hip:9 -> /src/s.hip:20", 5632),
			row(wire.RowInstruction, 2, "s_endpgm", 8, "", 5636),
		},
		Kernels: []wire.Kernel{
			{Address: 4864, CodeObj: 1, Name: "mykernel", Demangled: "mykernel"},
			{Address: 5632, CodeObj: 2, Name: "", Demangled: "scale<\u00fc\"\\/>(float*) \U0001F600"},
		},
		Doc: wire.DocMeta{Hsaco: []string{"/abs/1.hsaco", "/abs/2.hsaco"}},
	}
}

func occ(p wire.PC, time uint64, cu, simd, slot uint8, start bool) wire.Occupancy {
	return wire.Occupancy{PC: p, Time: time, CU: cu, SIMD: simd, WaveID: slot, Start: start,
		MEID: 1, PipeID: 0, IsExt: start, WorkgroupID: 5, ClusterID: 0}
}

func ins(cat wire.InstCategory, time int64, stall uint32, dur int32, p wire.PC) wire.Instruction {
	return wire.Instruction{Category: cat, Stall: stall, Duration: dur, Time: time, PC: p}
}

func states(pairs ...int32) []wire.WaveState {
	var s []wire.WaveState
	for i := 0; i+1 < len(pairs); i += 2 {
		s = append(s, wire.WaveState{Type: wire.WaveStateType(pairs[i]), Duration: pairs[i+1]})
	}
	return s
}

type part struct {
	se, run int
	batches []wire.Batch
}

func encode(t testing.TB, parts ...part) []byte {
	t.Helper()
	var buf bytes.Buffer
	for _, p := range parts {
		if err := wire.WriteStream(&buf, &wire.Header{Producer: "att-rcv test", Backend: "native",
			Trace: wire.Trace{Path: "sample.att", SE: p.se, Run: p.run, GFXIP: 9}}, p.batches...); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// sampleStreams returns streams A and B of the sample run.
func sampleStreams(t testing.TB) (a, b []byte) {
	k1, k2 := pc(1, 4864), pc(2, 5632)
	se0 := part{se: 0, run: 1, batches: []wire.Batch{
		{Type: wire.TypeGFXIP, GFXIP: 9},
		{Type: wire.TypeRTFrequency, RTFrequency: 100000000},
		{Type: wire.TypeEvent, Events: []wire.Event{
			{Size: 48, Time: 4700, Type: wire.EventCodeObjectLoad, MEID: 1, Payload: 2, ByteOffset: 16},
			{Size: 48, Time: 4800, Type: wire.EventClusterBarrier, MEID: 1, Payload: 0xFFFFFFFE_00000003, ByteOffset: 40},
		}},
		{Type: wire.TypeDispatch, Dispatches: []wire.Dispatch{
			{Size: 88, Time: 4800, MEID: 1, UserSGPRs: 8, Flags: 17, VGPRs: 32, SGPRs: 16,
				ThreadDim: [3]uint32{64, 1, 1}, DispatchPktAddr: 140737353990144, ByteOffset: 96, EntryPoint: k2},
			{Size: 88, Time: 4750, MEID: 1, PipeID: 1, UserSGPRs: 4, VGPRs: 8, SGPRs: 8, LDSSize: 1024,
				ThreadDim: [3]uint32{256, 1, 1}, DispatchPktAddr: 140737353990208, ByteOffset: 120, EntryPoint: pc(3, 0x1600)},
		}},
		{Type: wire.TypeOccupancy, Occupancy: []wire.Occupancy{
			occ(k1, 5000, 1, 0, 3, true),
			occ(k2, 5200, 1, 1, 2, true),
		}},
		{Type: wire.TypeRealtime, Realtime: []wire.Realtime{{ShaderClock: 5000, RealtimeClock: 912345000}}},
		{Type: wire.TypePerfEvent, PerfEvents: []wire.PerfEvent{
			{Time: 5100, Events: [4]uint16{1, 2, 3, 4}, CU: 1, Bank: 0},
			{Time: 5200, Events: [4]uint16{5, 6, 7, 8}, CU: 1, Bank: 1},
		}},
		{Type: wire.TypeInfo, Info: []wire.Info{wire.InfoWaveIncomplete}},
		{Type: wire.TypeShaderData, ShaderData: []wire.ShaderData{
			{Time: 5100, Value: 7, CU: 1, SIMD: 0, WaveID: 3, Flags: 1},
			{Time: 8800, Value: 12, CU: 1, SIMD: 0, WaveID: 3},
		}},
		{Type: wire.TypeInstOtherSIMD, OtherSIMD: []wire.OtherSIMD{
			{Size: 24, Time: 5300, Cycles: 4, WGP: 2, Category: wire.CatVALU},
			{Size: 24, Time: 5310, Cycles: 8, WGP: 2, Category: wire.CatVALU},
		}},
		{Type: wire.TypeWave, Waves: []wire.Wave{
			{CU: 1, SIMD: 0, WaveID: 3, Size: 64, BeginTime: 5000, EndTime: 9100,
				Timeline: states(2, 100, 3, 20, 2, 80),
				Instructions: []wire.Instruction{
					ins(wire.CatSMEM, 5000, 0, 8, k1),
					ins(wire.CatSALU, 5010, 2, 6, pc(1, 4872)),
					ins(wire.CatUnresolved, 5011, 0, 4, wire.PC{}),
					ins(wire.CatVALU, 5020, 0, 20, pc(1, 4876)),
					ins(wire.CatSALU, 5040, 0, 4, pc(7, 0x9000)), // not in the index
				}},
			// two timeline states and no instructions: folded, no file
			{CU: 1, SIMD: 1, WaveID: 2, Size: 64, BeginTime: 5200, EndTime: 5300, Timeline: states(1, 50, 2, 50)},
			{CU: 1, SIMD: 1, WaveID: 2, Size: 64, BeginTime: 5300, EndTime: 9000,
				Timeline: states(2, 10),
				Instructions: []wire.Instruction{
					ins(wire.CatVALU, 5300, 4, 8, k2),
					ins(wire.CatSALU, 5320, 0, 4, pc(2, 5636)),
				}},
		}},
		{Type: wire.TypeOccupancy, Occupancy: []wire.Occupancy{
			occ(k2, 9000, 1, 1, 2, false),
			occ(k1, 9100, 1, 0, 3, false),
		}},
		{Type: wire.TypeEvent, Events: []wire.Event{
			{Size: 48, Time: 9500, Type: wire.EventDispatchEnd, MEID: 1, ByteOffset: 4032},
		}},
		{Type: wire.TypeRealtime, Realtime: []wire.Realtime{{ShaderClock: 105000, RealtimeClock: 912395000}}},
		{Type: wire.TypeMarker, Markers: []wire.Marker{{Size: 104, Name: "ignored", MarkerID: 3}}},
	}}
	se1 := part{se: 1, run: 1, batches: []wire.Batch{
		{Type: wire.TypeGFXIP, GFXIP: 9},
		{Type: wire.TypeOccupancy, Occupancy: []wire.Occupancy{
			occ(pc(4, 0x2000), 6000, 0, 0, 0, true), // a kernel the index lacks
		}},
		{Type: wire.TypeWave, Waves: []wire.Wave{
			// no instructions but three states: written
			{CU: 0, SIMD: 0, WaveID: 0, Size: 64, BeginTime: 6000, EndTime: 6300, Timeline: states(1, 100, 2, 100, 4, 100)},
		}},
		{Type: wire.TypeOccupancy, Occupancy: []wire.Occupancy{
			occ(pc(4, 0x2000), 6300, 0, 0, 0, false),
		}},
	}}
	se0b := part{se: 0, run: 1, batches: []wire.Batch{
		{Type: wire.TypeGFXIP, GFXIP: 9},
		{Type: wire.TypePerfEvent, PerfEvents: []wire.PerfEvent{
			{Time: 20100, Events: [4]uint16{9, 9, 9, 9}, CU: 2, Bank: 0},
		}},
		{Type: wire.TypeShaderData, ShaderData: []wire.ShaderData{
			{Time: 20500, Value: 1 << 40, CU: 2, SIMD: 0, WaveID: 3},
		}},
		{Type: wire.TypeInstOtherSIMD, OtherSIMD: []wire.OtherSIMD{
			{Size: 24, Time: 20600, Cycles: 16, WGP: 1, Category: wire.CatLDS},
		}},
		{Type: wire.TypeOccupancy, Occupancy: []wire.Occupancy{occ(k1, 20000, 2, 0, 3, true)}},
		{Type: wire.TypeWave, Waves: []wire.Wave{
			{CU: 2, SIMD: 0, WaveID: 3, Size: 64, BeginTime: 20000, EndTime: 20100,
				Timeline: states(2, 100),
				Instructions: []wire.Instruction{
					ins(wire.CatSMEM, 20000, 0, 8, k1),
					ins(wire.CatSALU, 20010, 0, 4, pc(1, 4880)),
				}},
		}},
		{Type: wire.TypeOccupancy, Occupancy: []wire.Occupancy{occ(k1, 20100, 2, 0, 3, false)}},
		{Type: wire.TypeDispatch, Dispatches: []wire.Dispatch{
			{Size: 88, Time: 19900, MEID: 1, VGPRs: 32, SGPRs: 16, ThreadDim: [3]uint32{64, 1, 1}, EntryPoint: k1},
		}},
	}}
	return encode(t, se0), encode(t, se1, se0b)
}
