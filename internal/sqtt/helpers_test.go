package sqtt

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/attkit/attkit/internal/isa"
	"github.com/attkit/attkit/internal/wire"
)

// table is an ISA provider over a fixed list, logging every query.
type table struct {
	m       map[wire.PC]tableEntry
	queries []wire.PC
}

type tableEntry struct {
	text string
	size uint64
}

// newTable builds a table from "address size text" rows of one code object.
func newTable(coid uint64, rows ...string) *table {
	t := &table{m: map[wire.PC]tableEntry{}}
	for _, r := range rows {
		var addr, size uint64
		f := strings.SplitN(r, " ", 3)
		fmt.Sscanf(f[0], "0x%x", &addr)
		fmt.Sscanf(f[1], "%d", &size)
		t.m[wire.PC{Address: addr, CodeObjectID: coid}] = tableEntry{f[2], size}
	}
	return t
}

func (t *table) ISA(pc wire.PC) (string, uint64, bool) {
	t.queries = append(t.queries, pc)
	e, ok := t.m[pc]
	return e.text, e.size, ok
}

// cloneBatch is Batch.Clone without the other-SIMD records, which most
// tests do not look at.
func cloneBatch(b *wire.Batch) wire.Batch {
	c := b.Clone()
	c.OtherSIMD = nil
	return c
}

// cloneAll is Batch.Clone, other-SIMD records included.
func cloneAll(b *wire.Batch) wire.Batch { return b.Clone() }

// decode runs the native decoder over data and returns copies of every
// batch.
func decode(t testing.TB, data []byte, p *table) ([]wire.Batch, error) {
	t.Helper()
	return decodeWith(New(), data, provider(p), cloneBatch)
}

// decodeAll is decode with the other-SIMD records kept too.
func decodeAll(t testing.TB, data []byte, p *table) ([]wire.Batch, error) {
	t.Helper()
	return decodeWith(New(), data, provider(p), cloneAll)
}

// provider is p as an isa.Provider, nil when p is.
func provider(p *table) isa.Provider {
	if p == nil {
		return nil
	}
	return p
}

// decodeWith runs d over data and returns clone's copy of every batch.
func decodeWith(d *Decoder, data []byte, prov isa.Provider, clone func(*wire.Batch) wire.Batch) ([]wire.Batch, error) {
	var out []wire.Batch
	err := d.Decode(context.Background(), bytes.NewReader(data), prov, func(b *wire.Batch) error {
		out = append(out, clone(b))
		return nil
	})
	return out, err
}

// render prints batches one record per line, for readable failures.
func render(bs []wire.Batch) string {
	var sb strings.Builder
	for _, b := range bs {
		switch b.Type {
		case wire.TypeGFXIP:
			fmt.Fprintf(&sb, "GFXIP %d\n", b.GFXIP)
		case wire.TypeRTFrequency:
			fmt.Fprintf(&sb, "RT_FREQUENCY %d\n", b.RTFrequency)
		case wire.TypeInfo:
			fmt.Fprintf(&sb, "INFO %v\n", b.Info)
		case wire.TypeWave:
			for _, w := range b.Waves {
				fmt.Fprintf(&sb, "WAVE cu=%d simd=%d wave=%d ctx=%d disp=%#x wg=%d size=%d %d..%d\n",
					w.CU, w.SIMD, w.WaveID, w.Contexts, w.Dispatcher, w.WorkgroupID, w.Size, w.BeginTime, w.EndTime)
				for _, in := range w.Instructions {
					fmt.Fprintf(&sb, "  %v %d %d %d %#x/%d\n", in.Category, in.Time, in.Duration, in.Stall,
						in.PC.Address, in.PC.CodeObjectID)
				}
				fmt.Fprintf(&sb, "  timeline")
				for _, s := range w.Timeline {
					fmt.Fprintf(&sb, " %v %d", s.Type, s.Duration)
				}
				sb.WriteString("\n")
			}
		default:
			v := reflect.ValueOf(b)
			for i := 0; i < v.NumField(); i++ {
				f := v.Field(i)
				if f.Kind() == reflect.Slice && f.Len() > 0 && v.Type().Field(i).Name != "Waves" {
					for j := 0; j < f.Len(); j++ {
						fmt.Fprintf(&sb, "%v %+v\n", b.Type, f.Index(j).Interface())
					}
				}
			}
		}
	}
	return sb.String()
}

// check compares decoded batches with the expectation, record by record.
func check(t *testing.T, got, want []wire.Batch) {
	t.Helper()
	for i := range want {
		normalize(&want[i])
	}
	for i := range got {
		normalize(&got[i])
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("records differ\n--- got:\n%s--- want:\n%s", render(got), render(want))
	}
}

// normalize turns empty slices into nil so DeepEqual compares contents.
func normalize(b *wire.Batch) {
	if len(b.Info) == 0 {
		b.Info = nil
	}
	if len(b.Occupancy) == 0 {
		b.Occupancy = nil
	}
	if len(b.PerfEvents) == 0 {
		b.PerfEvents = nil
	}
	if len(b.Waves) == 0 {
		b.Waves = nil
	}
	if len(b.Events) == 0 {
		b.Events = nil
	}
	if len(b.ShaderData) == 0 {
		b.ShaderData = nil
	}
	if len(b.Realtime) == 0 {
		b.Realtime = nil
	}
	if len(b.Dispatches) == 0 {
		b.Dispatches = nil
	}
	for i := range b.Waves {
		if len(b.Waves[i].Timeline) == 0 {
			b.Waves[i].Timeline = nil
		}
		if len(b.Waves[i].Instructions) == 0 {
			b.Waves[i].Instructions = nil
		}
	}
}

// Record constructors for expectations.

func gfxip(v uint64) wire.Batch { return wire.Batch{Type: wire.TypeGFXIP, GFXIP: v} }

func info(v wire.Info) wire.Batch { return wire.Batch{Type: wire.TypeInfo, Info: []wire.Info{v}} }

func rtFreq(v uint64) wire.Batch { return wire.Batch{Type: wire.TypeRTFrequency, RTFrequency: v} }

func waveB(w wire.Wave) wire.Batch {
	w.Size = 64
	return wire.Batch{Type: wire.TypeWave, Waves: []wire.Wave{w}}
}

func occB(o ...wire.Occupancy) wire.Batch { return wire.Batch{Type: wire.TypeOccupancy, Occupancy: o} }

func perfB(p ...wire.PerfEvent) wire.Batch {
	return wire.Batch{Type: wire.TypePerfEvent, PerfEvents: p}
}

func sdB(s ...wire.ShaderData) wire.Batch {
	return wire.Batch{Type: wire.TypeShaderData, ShaderData: s}
}

func rtB(r ...wire.Realtime) wire.Batch { return wire.Batch{Type: wire.TypeRealtime, Realtime: r} }

func eventB(e wire.Event) wire.Batch {
	e.Size = 40
	return wire.Batch{Type: wire.TypeEvent, Events: []wire.Event{e}}
}

func dispatchB(d wire.Dispatch) wire.Batch {
	d.Size = 80
	return wire.Batch{Type: wire.TypeDispatch, Dispatches: []wire.Dispatch{d}}
}

// in builds an instruction: category, time, duration, stall, address, code object.
func in(cat wire.InstCategory, time int64, dur int32, stall uint32, addr, coid uint64) wire.Instruction {
	return wire.Instruction{Category: cat, Time: time, Duration: dur, Stall: stall,
		PC: wire.PC{Address: addr, CodeObjectID: coid}}
}

// tl builds a timeline from state, duration pairs.
func tl(v ...int) []wire.WaveState {
	var s []wire.WaveState
	for i := 0; i+1 < len(v); i += 2 {
		s = append(s, wire.WaveState{Type: wire.WaveStateType(v[i]), Duration: int32(v[i+1])})
	}
	return s
}

const (
	sIdle  = int(wire.StateIdle)
	sExec  = int(wire.StateExec)
	sWait  = int(wire.StateWait)
	sStall = int(wire.StateStall)
)

func occStart(addr, coid uint64, time uint64, cu, simd, wave, me, pipe, wg uint8) wire.Occupancy {
	return wire.Occupancy{PC: wire.PC{Address: addr, CodeObjectID: coid}, Time: time, CU: cu, SIMD: simd,
		WaveID: wave, Start: true, MEID: me, PipeID: pipe, IsExt: true, WorkgroupID: wg}
}

func occEnd(addr, coid uint64, time uint64, cu, simd, wave uint8) wire.Occupancy {
	return wire.Occupancy{PC: wire.PC{Address: addr, CodeObjectID: coid}, Time: time, CU: cu, SIMD: simd,
		WaveID: wave, IsExt: true}
}

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }
