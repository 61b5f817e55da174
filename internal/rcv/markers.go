package rcv

import (
	"sort"
	"strings"

	"github.com/attkit/attkit/internal/wire"
)

// Packed marker headers (python-layer §5.11) carry a truncated shader-clock
// sample in their top bits; the marker id sits below it, above the two flag
// bits (bit 0 exit-previous, bit 1 enter). correctMarkers restores the
// legacy value (id << 2) | flags and moves headers that arrived late back to
// when they were issued, estimated from the clock samples.

type markerLayout struct{ bits, shift uint }

type location struct {
	se             int
	cu, simd, wave uint8
}

type launch struct {
	time uint64
	co   uint64
}

type domainKey struct {
	se         int
	cu, simd   uint8
	bits, shft uint
}

type header struct {
	rec     *wire.ShaderData
	time    int64
	sampled int64
}

// flagIMMPriv masks the IMM and PRIV bits of ShaderData.Flags: records
// written by s_ttracedata_imm or by privileged code are never headers.
const flagIMMPriv = 1<<wire.ShaderDataIMM | 1<<wire.ShaderDataPRIV

// correctMarkers applies §5.11 in place to the shader data of traces, using
// the occupancy of every shader engine to find the code object active on a
// wave slot. Nothing changes unless ix has a valid layout.
func correctMarkers(ix *wire.Index, traces []*traceData, ses map[int]*seData) {
	layouts := markerLayouts(ix)
	if len(layouts) == 0 {
		return
	}
	ids := newMarkerIDs(ix)
	locs, byLoc := shaderDataBySlot(traces)
	launches := waveLaunches(ses)
	domains, byDomain := restoreHeaders(locs, byLoc, launches, layouts, ids)
	changed := false
	for _, k := range domains {
		if backdateHeaders(k, byDomain[k]) {
			changed = true
		}
	}
	if changed && len(ids.payloads) == 0 {
		for _, t := range traces {
			sort.SliceStable(t.sd, func(a, b int) bool { return t.sd[a].Time < t.sd[b].Time })
		}
	}
}

// markerLayouts returns the valid packed-header layouts of ix by code
// object.
func markerLayouts(ix *wire.Index) map[uint64]markerLayout {
	layouts := map[uint64]markerLayout{}
	for _, l := range ix.FuncmapLayout {
		if l.Bits > 0 && l.Bits <= 29 && uint64(l.Bits)+uint64(l.Shift) <= 32 {
			layouts[l.CodeObj] = markerLayout{uint(l.Bits), uint(l.Shift)}
		}
	}
	return layouts
}

// coID is a marker id of a code object.
type coID struct{ co, id uint64 }

// markerIDs are the marker ids of the funcmap: the known (non-kernel) ones,
// the payload record counts that follow some of them, and the code objects
// that have payloads.
type markerIDs struct {
	known     map[coID]bool
	payloads  map[coID]uint64
	payloadCO map[uint64]bool
}

func newMarkerIDs(ix *wire.Index) markerIDs {
	m := markerIDs{known: map[coID]bool{}, payloads: map[coID]uint64{}, payloadCO: map[uint64]bool{}}
	for _, f := range ix.Funcmap {
		if k := strings.ToLower(f.Kind); k != "k" && k != "kernel" {
			m.known[coID{f.CodeObj, f.MarkerID}] = true
		}
	}
	for _, p := range ix.FuncmapPayloads {
		if m.known[coID{p.CodeObj, p.MarkerID}] && p.Count > 0 {
			m.payloads[coID{p.CodeObj, p.MarkerID}] = uint64(p.Count)
			m.payloadCO[p.CodeObj] = true
		}
	}
	return m
}

// shaderDataBySlot groups the shader data of traces by wave slot, the slots
// in first-seen order.
func shaderDataBySlot(traces []*traceData) ([]location, map[location][]*wire.ShaderData) {
	var locs []location
	byLoc := map[location][]*wire.ShaderData{}
	for _, t := range traces {
		for i := range t.sd {
			r := &t.sd[i]
			l := location{t.se, r.CU, r.SIMD, r.WaveID}
			if _, ok := byLoc[l]; !ok {
				locs = append(locs, l)
			}
			byLoc[l] = append(byLoc[l], r)
		}
	}
	return locs, byLoc
}

// waveLaunches returns the wave starts of every shader engine's kept
// occupancy by wave slot: when, and of which code object.
func waveLaunches(ses map[int]*seData) map[location][]launch {
	launches := map[location][]launch{}
	for se, d := range ses {
		for i := range d.occKept {
			o := &d.occKept[i]
			if o.Start {
				l := location{se, o.CU, o.SIMD, o.WaveID}
				launches[l] = append(launches[l], launch{o.Time, o.PC.CodeObjectID})
			}
		}
	}
	return launches
}

// restoreHeaders finds the packed marker headers of every wave slot (by the
// layout of the code object launched there last), restores their legacy
// value in place and, for code objects without payloads, returns them
// grouped by clock domain, the domains in first-seen order.
func restoreHeaders(locs []location, byLoc map[location][]*wire.ShaderData, launches map[location][]launch,
	layouts map[uint64]markerLayout, ids markerIDs) ([]domainKey, map[domainKey][]header) {
	var domains []domainKey
	byDomain := map[domainKey][]header{}
	for _, l := range locs {
		recs := byLoc[l]
		sort.SliceStable(recs, func(a, b int) bool { return recs[a].Time < recs[b].Time })
		ls := launches[l]
		sort.SliceStable(ls, func(a, b int) bool { return ls[a].time < ls[b].time })
		cur := -1 // the last launch at or before the record's time
		skip := uint64(0)
		for _, r := range recs {
			if skip > 0 {
				skip--
				continue
			}
			if r.Flags&flagIMMPriv != 0 {
				continue
			}
			for cur+1 < len(ls) && r.Time >= 0 && ls[cur+1].time <= uint64(r.Time) {
				cur++
			}
			if cur < 0 {
				continue
			}
			co := ls[cur].co
			lay, ok := layouts[co]
			if !ok {
				continue
			}
			raw := r.Value & 0xFFFFFFFF
			id := raw >> 2 & (1<<(30-lay.bits) - 1)
			isKnown := ids.known[coID{co, id}]
			if !isKnown && !(id == 0 && raw&3 == 1) {
				continue
			}
			r.Value = id<<2 | raw&3
			if isKnown {
				skip = ids.payloads[coID{co, id}]
			}
			if ids.payloadCO[co] {
				continue
			}
			sampled := int64((raw >> (32 - lay.bits) & (1<<lay.bits - 1)) << lay.shift)
			k := domainKey{l.se, l.cu, l.simd, lay.bits, lay.shift}
			if _, ok := byDomain[k]; !ok {
				domains = append(domains, k)
			}
			byDomain[k] = append(byDomain[k], header{r, r.Time, sampled})
		}
	}
	return domains, byDomain
}

// backdateHeaders moves the headers of one clock domain that arrived late
// back to when they were issued, estimated from their clock samples, and
// says whether any moved. A domain whose samples are all equal stays.
func backdateHeaders(k domainKey, hs []header) bool {
	constant := true
	for _, h := range hs[1:] {
		if h.sampled != hs[0].sampled {
			constant = false
			break
		}
	}
	if constant {
		return false
	}
	window := uint64(1) << (k.bits + k.shft)
	half := int64(window / 2)
	bucket := int64(1) << k.shft
	t0, s0 := hs[0].time, hs[0].sampled
	// rel = (((time−t0) − (sampled−s0) + half) mod window) − half. The
	// window divides 2^64, so wrapping uint64 arithmetic gives the exact
	// residue even where the int64 differences would overflow.
	rels := make([]int64, len(hs))
	m := int64(0)
	for i, h := range hs {
		x := uint64(h.time) - uint64(t0) - uint64(h.sampled) + uint64(s0) + uint64(half)
		rels[i] = int64(x&(window-1)) - half
		if i == 0 || rels[i] < m {
			m = rels[i]
		}
	}
	changed := false
	for i, h := range hs {
		if c := rels[i] - m - (bucket - 1); c > 0 {
			h.rec.Time -= c
			changed = true
		}
	}
	return changed
}
