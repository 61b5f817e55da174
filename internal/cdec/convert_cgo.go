//go:build cgo

package cdec

/*
#include <stdint.h>
#include "cdec.h"
*/
import "C"

import (
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"github.com/attkit/attkit/internal/exitcode"
	"github.com/attkit/attkit/internal/wire"
)

func wireP(addr, coid uint64) wire.PC { return wire.PC{Address: addr, CodeObjectID: coid} }

func pcOf(p C.cdec_pc) wire.PC {
	return wire.PC{Address: uint64(p.address), CodeObjectID: uint64(p.code_object_id)}
}

// Element sizes of the known record types.
var elemSize = [...]uintptr{
	wire.TypeOccupancy:     unsafe.Sizeof(C.cdec_occupancy{}),
	wire.TypePerfEvent:     unsafe.Sizeof(C.cdec_perfevent{}),
	wire.TypeWave:          unsafe.Sizeof(C.cdec_wave{}),
	wire.TypeInfo:          unsafe.Sizeof(C.int(0)),
	wire.TypeEvent:         unsafe.Sizeof(C.cdec_event{}),
	wire.TypeShaderData:    unsafe.Sizeof(C.cdec_shaderdata{}),
	wire.TypeRealtime:      unsafe.Sizeof(C.cdec_realtime{}),
	wire.TypeRTFrequency:   8,
	wire.TypeInstOtherSIMD: unsafe.Sizeof(C.cdec_other_simd{}),
	wire.TypeDispatch:      unsafe.Sizeof(C.cdec_dispatch{}),
	wire.TypeMarker:        unsafe.Sizeof(C.cdec_marker{}),
}

func badBatch(t wire.RecordType, format string, args ...any) error {
	return exitcode.Errorf(exitcode.Failed, "rocprof-trace-decoder: implausible %s batch: %s", t, fmt.Sprintf(format, args...))
}

// convert fills s.batch from one batch the parse thread copied (it) out of
// a trace callback. GFXIP arrives as the pointer value (raw); a NULL
// pointer or zero count is an empty batch, as in upstream's Python layer.
// The parse thread has bounded the counts and sizes and chosen the
// records' stride (cdec_push): a larger stride for a type whose struct
// starts with its own size means a newer library appended fields; for an
// unknown type it is that leading size, and no data means the layout was
// unknowable (only the count is carried).
func (s *session) convert(it *C.cdec_item) error {
	b := &s.batch
	t := wire.RecordType(uint32(it._type)) // a negative id becomes a large unknown one
	b.Reset(t)
	data, count := it.data, uint64(it.count)
	if t == wire.TypeGFXIP {
		b.GFXIP = uint64(it.raw)
		return nil
	}
	if data == nil || count == 0 {
		if t == wire.TypeRTFrequency {
			return badBatch(t, "no value")
		}
		if !t.Known() {
			b.Raw.Count = count
		}
		return nil
	}
	n, es := int(count), uintptr(it.elem)
	if !t.Known() {
		b.Raw.Count = count
		b.Raw.ElemSize = uint64(es)
		b.Raw.Data = append(b.Raw.Data[:0], unsafe.Slice((*byte)(data), n*int(es))...)
		return nil
	}
	at := func(i int) unsafe.Pointer { return unsafe.Add(data, uintptr(i)*es) }
	switch t {
	case wire.TypeRTFrequency:
		b.RTFrequency = *(*uint64)(data)
	case wire.TypeInfo:
		b.Info = grow(b.Info, n)
		src := unsafe.Slice((*C.int)(data), n)
		for i := range b.Info {
			b.Info[i] = wire.Info(uint32(src[i]))
		}
	case wire.TypeOccupancy:
		b.Occupancy = grow(b.Occupancy, n)
		src := unsafe.Slice((*C.cdec_occupancy)(data), n)
		inParts(n, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				c, o := &src[i], &b.Occupancy[i]
				*o = wire.Occupancy{PC: pcOf(c.pc), Time: uint64(c.time), Reserved: uint8(c.reserved),
					CU: uint8(c.cu), SIMD: uint8(c.simd), WaveID: uint8(c.wave_id)}
				o.SetWord(uint32(c.word))
			}
		})
	case wire.TypePerfEvent:
		b.PerfEvents = grow(b.PerfEvents, n)
		src := unsafe.Slice((*C.cdec_perfevent)(data), n)
		inParts(n, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				c := &src[i]
				b.PerfEvents[i] = wire.PerfEvent{Time: int64(c.time),
					Events: [4]uint16{uint16(c.events[0]), uint16(c.events[1]), uint16(c.events[2]), uint16(c.events[3])},
					CU:     uint8(c.cu), Bank: uint8(c.bank)}
			}
		})
	case wire.TypeWave:
		b.Waves = grow(b.Waves, n)
		src := unsafe.Slice((*C.cdec_wave)(data), n)
		for i := range b.Waves {
			convertWave(&b.Waves[i], &src[i])
		}
	case wire.TypeRealtime:
		b.Realtime = grow(b.Realtime, n)
		src := unsafe.Slice((*C.cdec_realtime)(data), n)
		for i := range b.Realtime {
			c := &src[i]
			b.Realtime[i] = wire.Realtime{ShaderClock: int64(c.shader_clock),
				RealtimeClock: uint64(c.realtime_clock), Reserved: uint64(c.reserved)}
		}
	case wire.TypeShaderData:
		b.ShaderData = grow(b.ShaderData, n)
		src := unsafe.Slice((*C.cdec_shaderdata)(data), n)
		inParts(n, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				b.ShaderData[i] = shaderData(&src[i])
			}
		})
	case wire.TypeInstOtherSIMD:
		b.OtherSIMD = grow(b.OtherSIMD, n)
		for i := range n {
			c := (*C.cdec_other_simd)(at(i))
			b.OtherSIMD[i] = wire.OtherSIMD{Size: uint64(c.size), Time: int64(c.time),
				Cycles: uint16(c.cycles), WGP: uint8(c.wgp), Category: wire.InstCategory(c.category)}
		}
	case wire.TypeEvent:
		b.Events = grow(b.Events, n)
		for i := range n {
			c := (*C.cdec_event)(at(i))
			b.Events[i] = wire.Event{Size: uint64(c.size), Time: int64(c.time), Type: wire.EventType(c.kind),
				MEID: uint8(c.me_id), PipeID: uint8(c.pipe_id), Flags: uint16(c.flags),
				Payload: uint64(c.payload), ByteOffset: uint64(c.byte_offset)}
		}
	case wire.TypeDispatch:
		b.Dispatches = grow(b.Dispatches, n)
		for i := range n {
			c := (*C.cdec_dispatch)(at(i))
			b.Dispatches[i] = wire.Dispatch{Size: uint64(c.size), Time: int64(c.time),
				MEID: uint8(c.me_id), PipeID: uint8(c.pipe_id), UserSGPRs: uint16(c.user_sgprs),
				Flags: int32(c.flags), VGPRs: uint32(c.vgprs), SGPRs: uint32(c.sgprs),
				LDSSize:         uint32(c.lds_size),
				ThreadDim:       [3]uint32{uint32(c.dim[0]), uint32(c.dim[1]), uint32(c.dim[2])},
				DispatchPktAddr: uint64(c.dispatch_pkt_addr), ByteOffset: uint64(c.byte_offset),
				EntryPoint: pcOf(c.entry_point)}
		}
	case wire.TypeMarker:
		b.Markers = grow(b.Markers, n)
		for i := range n {
			c := (*C.cdec_marker)(at(i))
			b.Markers[i] = wire.Marker{Size: uint64(c.size), ShaderData: shaderData(&c.shaderdata),
				KernelEntry: pcOf(c.kernel_entry), CodeObjectID: uint64(c.code_object_id),
				Name: cText(c.name), SourceLocation: cText(c.source_location),
				NameNull: c.name == nil, SourceNull: c.source_location == nil,
				MarkerID: uint32(c.marker_id), RecordKind: wire.MarkerRecordKind(c.record_kind),
				MarkerKind: wire.MarkerKind(c.marker_kind), MarkerFlags: uint32(c.marker_flags),
				PayloadIndex: uint32(c.payload_index), PayloadCount: uint32(c.payload_count),
				Delay: int32(c.delay), Reserved: uint32(c.reserved)}
		}
	}
	return nil
}

func shaderData(c *C.cdec_shaderdata) wire.ShaderData {
	return wire.ShaderData{Time: int64(c.time), Value: uint64(c.value), CU: uint8(c.cu),
		SIMD: uint8(c.simd), WaveID: uint8(c.wave_id), Flags: uint8(c.flags), Reserved: uint32(c.reserved)}
}

// convertWave copies one wave and its arrays, reusing w's slices.
func convertWave(w *wire.Wave, c *C.cdec_wave) {
	nt, ni := uint64(c.timeline_size), uint64(c.instructions_size)
	if c.timeline == nil {
		nt = 0
	}
	if c.instructions == nil {
		ni = 0
	}
	tl, in := w.Timeline[:0], w.Instructions[:0]
	*w = wire.Wave{CU: uint8(c.cu), SIMD: uint8(c.simd), WaveID: uint8(c.wave_id),
		Contexts: uint8(c.contexts), Dispatcher: uint8(c.dispatcher), WorkgroupID: uint8(c.workgroup_id),
		ClusterID: uint8(c.cluster_id), Reserved: uint8(c.reserved), Size: uint64(c.size),
		BeginTime: int64(c.begin_time), EndTime: int64(c.end_time)}
	tl = grow(tl, int(nt))
	if nt > 0 {
		src := unsafe.Slice(c.timeline, len(tl))
		for i := range tl {
			tl[i] = wire.WaveState{Type: wire.WaveStateType(src[i].state), Duration: int32(src[i].duration)}
		}
	}
	in = grow(in, int(ni))
	if ni > 0 {
		src := unsafe.Slice(c.instructions, len(in))
		for i := range in {
			s := &src[i]
			word := uint32(s.word)
			d := &in[i]
			d.Category = wire.InstCategory(word)
			d.Stall = word >> 8
			d.Duration = int32(s.duration)
			d.Time = int64(s.time)
			d.PC = wire.PC{Address: uint64(s.pc.address), CodeObjectID: uint64(s.pc.code_object_id)}
		}
	}
	w.Timeline, w.Instructions = tl, in
}

// parallelMin is the batch size from which inParts splits the conversion:
// the library delivers a trace's whole occupancy (hundreds of thousands of
// records) in one of its last callbacks, so its conversion is what remains
// to do once the parse has returned, with every core free again.
const parallelMin = 1 << 16

// inParts runs f over [0, n): at once for a small n, else in up to four
// parts on as many goroutines. A panic in a part is raised again in the
// caller, whose recover turns it into an error.
func inParts(n int, f func(lo, hi int)) {
	parts := min(runtime.GOMAXPROCS(0), 4)
	if n < parallelMin || parts < 2 {
		f(0, n)
		return
	}
	var wg sync.WaitGroup
	var once sync.Once
	var failure any
	for k := 1; k < parts; k++ {
		wg.Go(func() {
			defer func() {
				if r := recover(); r != nil {
					once.Do(func() { failure = r })
				}
			}()
			f(n*k/parts, n*(k+1)/parts)
		})
	}
	defer func() {
		wg.Wait()
		if failure != nil {
			panic(failure)
		}
	}()
	f(0, n/parts)
}

// grow returns s with length n, reusing its capacity. A larger slice is
// allocated once and keeps the old elements (a wave's arrays are reused).
func grow[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	t := make([]T, n)
	copy(t, s[:cap(s)])
	return t
}
