package sqttgen

import (
	"fmt"
	"reflect"

	"github.com/attkit/attkit/internal/wire"
)

// Records returns the records of a batch as a list of values, for
// comparisons: GFXIP and RT_FREQUENCY as one uint64.
func Records(b *wire.Batch) []any {
	var out []any
	switch b.Type {
	case wire.TypeGFXIP:
		out = append(out, b.GFXIP)
	case wire.TypeRTFrequency:
		out = append(out, b.RTFrequency)
	case wire.TypeInfo:
		out = appendAll(out, b.Info)
	case wire.TypeOccupancy:
		out = appendAll(out, b.Occupancy)
	case wire.TypePerfEvent:
		out = appendAll(out, b.PerfEvents)
	case wire.TypeWave:
		for _, v := range b.Waves {
			if len(v.Timeline) == 0 {
				v.Timeline = nil
			}
			if len(v.Instructions) == 0 {
				v.Instructions = nil
			}
			out = append(out, v)
		}
	case wire.TypeEvent:
		out = appendAll(out, b.Events)
	case wire.TypeShaderData:
		out = appendAll(out, b.ShaderData)
	case wire.TypeRealtime:
		out = appendAll(out, b.Realtime)
	case wire.TypeInstOtherSIMD:
		out = appendAll(out, b.OtherSIMD)
	case wire.TypeDispatch:
		out = appendAll(out, b.Dispatches)
	case wire.TypeMarker:
		out = appendAll(out, b.Markers)
	default:
		out = append(out, b.Raw)
	}
	return out
}

func appendAll[T any](out []any, s []T) []any {
	for _, v := range s {
		out = append(out, v)
	}
	return out
}

// Diff compares two record sequences batch by batch and record by record,
// and describes the first difference ("" when they are equal). For waves it
// names the first differing field, instruction or timeline entry.
func Diff(want, got []wire.Batch) string {
	for i := 0; i < len(want) || i < len(got); i++ {
		if i >= len(got) {
			return fmt.Sprintf("batch %d: missing; want %s with %d records", i, want[i].Type, want[i].Len())
		}
		if i >= len(want) {
			return fmt.Sprintf("batch %d: unexpected %s with %d records: first %+v", i, got[i].Type, got[i].Len(), first(&got[i]))
		}
		w, g := &want[i], &got[i]
		if w.Type != g.Type {
			return fmt.Sprintf("batch %d: type %s, want %s (want first record %+v; got %+v)", i, g.Type, w.Type, first(w), first(g))
		}
		wr, gr := Records(w), Records(g)
		for j := 0; j < len(wr) || j < len(gr); j++ {
			if j >= len(gr) {
				return fmt.Sprintf("batch %d (%s): %d records, want %d; first missing: %+v", i, w.Type, len(gr), len(wr), wr[j])
			}
			if j >= len(wr) {
				return fmt.Sprintf("batch %d (%s): %d records, want %d; first extra: %+v", i, w.Type, len(gr), len(wr), gr[j])
			}
			if !reflect.DeepEqual(wr[j], gr[j]) {
				if ww, ok := wr[j].(wire.Wave); ok {
					return fmt.Sprintf("batch %d (wave) record %d: %s", i, j, diffWave(&ww, gr[j].(wire.Wave)))
				}
				return fmt.Sprintf("batch %d (%s) record %d:\n got %+v\nwant %+v", i, w.Type, j, gr[j], wr[j])
			}
		}
	}
	return ""
}

func first(b *wire.Batch) any {
	if r := Records(b); len(r) > 0 {
		return r[0]
	}
	return nil
}

func diffWave(w *wire.Wave, g wire.Wave) string {
	hw, hg := *w, g
	hw.Timeline, hw.Instructions, hg.Timeline, hg.Instructions = nil, nil, nil, nil
	if !reflect.DeepEqual(hw, hg) {
		return fmt.Sprintf("wave fields\n got %+v\nwant %+v", hg, hw)
	}
	for k := 0; k < len(w.Instructions) || k < len(g.Instructions); k++ {
		switch {
		case k >= len(g.Instructions):
			return fmt.Sprintf("%d instructions, want %d; first missing %d: %+v", len(g.Instructions), len(w.Instructions), k, w.Instructions[k])
		case k >= len(w.Instructions):
			return fmt.Sprintf("%d instructions, want %d; first extra %d: %+v", len(g.Instructions), len(w.Instructions), k, g.Instructions[k])
		case w.Instructions[k] != g.Instructions[k]:
			lo := max(0, k-2)
			return fmt.Sprintf("instruction %d of %d (wave simd %d slot %d begin %d):\n got %+v\nwant %+v\ncontext want %+v\n        got %+v",
				k, len(w.Instructions), w.SIMD, w.WaveID, w.BeginTime, g.Instructions[k], w.Instructions[k],
				w.Instructions[lo:min(len(w.Instructions), k+2)], g.Instructions[lo:min(len(g.Instructions), k+2)])
		}
	}
	for k := 0; k < len(w.Timeline) || k < len(g.Timeline); k++ {
		if k >= len(g.Timeline) || k >= len(w.Timeline) || w.Timeline[k] != g.Timeline[k] {
			return fmt.Sprintf("timeline differs at entry %d:\n got %v\nwant %v", k, g.Timeline, w.Timeline)
		}
	}
	return "equal"
}

// Normalize016 rewrites records in place to what the 0.1.6 library can
// report (spec §4.6 and A.3 item 5): no EVENT or DISPATCH records, waves
// without dispatcher, workgroup, cluster and size, occupancy with the start
// bit only. Applied to both sides it leaves the differences that matter.
func Normalize016(bs []wire.Batch) []wire.Batch {
	out := bs[:0]
	for _, b := range bs {
		switch b.Type {
		case wire.TypeEvent, wire.TypeDispatch:
			continue
		case wire.TypeWave:
			for i := range b.Waves {
				w := &b.Waves[i]
				w.Dispatcher, w.WorkgroupID, w.ClusterID, w.Reserved, w.Size = 0, 0, 0, 0, 0
			}
		case wire.TypeOccupancy:
			for i := range b.Occupancy {
				o := &b.Occupancy[i]
				o.SetWord(o.Word() & 1)
			}
		}
		out = append(out, b)
	}
	return out
}
