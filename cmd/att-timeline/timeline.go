package main

import (
	"bufio"
	"fmt"
	"math"
	"sort"
	"strconv"

	"github.com/attkit/attkit/internal/waveselect"
	"github.com/attkit/attkit/internal/wire"
)

type options struct {
	start, end   int64 // the window kept, in shader-clock cycles
	instructions bool  // instruction (and stall) slices
	maxBytes     int64 // no event is written past this many bytes
}

// noCut is timeline.cutAt while nothing was dropped for --max-size.
const noCut = math.MinInt64

// Track ids (Trace Event "tid") within a shader engine's process.
const (
	tidEvents  = 1 << 21 // dispatches and events
	tidMarkers = 1 << 20 // added to a wave slot's tid
)

func slotTID(cu, simd, slot uint8) int {
	return 1 + (int(cu)<<10 | int(simd)<<5 | int(slot))
}

type track struct{ pid, tid int }

// A timeline writes Trace Event Format JSON (the "JSON Object Format": a
// traceEvents array, then otherData) as records come, holding only the
// names it has written and the counters' current values.
type timeline struct {
	w      *bufio.Writer
	opt    options
	rows   map[wire.PC]*wire.Row
	names  map[wire.PC]string // kernel names by entry PC
	pid    int
	n      int64 // events written
	bytes  int64
	cutAt  int64
	named  map[track]bool
	occ    map[[2]int]int // (pid, cu) → waves resident
	scopes map[track]int  // open marker scopes
	last   map[track]int64
	buf    []byte
	err    error
	sel    *waveselect.Selector // wave IDs and dispatch IDs in the args
}

func newTimeline(w *bufio.Writer, ix *wire.Index, opt options) *timeline {
	t := &timeline{w: w, opt: opt, rows: map[wire.PC]*wire.Row{}, names: map[wire.PC]string{},
		cutAt: noCut, named: map[track]bool{}, occ: map[[2]int]int{}, scopes: map[track]int{}, last: map[track]int64{}}
	if ix != nil {
		for i := range ix.Rows {
			if r := &ix.Rows[i]; !r.IsLabel() {
				t.rows[r.PC()] = r
			}
		}
		for _, k := range ix.Kernels {
			name := k.Demangled
			if name == "" {
				name = k.Name
			}
			t.names[wire.PC{Address: k.Address, CodeObjectID: k.CodeObj}] = name
		}
	}
	t.raw(`{"traceEvents":[`)
	return t
}

func (t *timeline) raw(s string) {
	if t.err == nil {
		n, err := t.w.WriteString(s)
		t.bytes += int64(n)
		t.err = err
	}
}

// event writes one event (b holds its JSON object) unless the size bound
// was reached; time is the event's cycle, for the warning.
func (t *timeline) event(b []byte, time int64) {
	if t.err != nil {
		return
	}
	if t.cutAt != noCut || t.bytes+int64(len(b))+2 > t.opt.maxBytes {
		if t.cutAt == noCut {
			t.cutAt = time
		}
		return
	}
	if t.n > 0 {
		t.raw(",\n")
	} else {
		t.raw("\n")
	}
	n, err := t.w.Write(b)
	t.bytes += int64(n)
	t.err = err
	t.n++
}

// in reports whether [b, e] meets the window, and cuts it to it.
func (t *timeline) in(b, e int64) (int64, int64, bool) {
	if e < t.opt.start || b > t.opt.end {
		return 0, 0, false
	}
	return max(b, t.opt.start), min(e, t.opt.end), true
}

func (t *timeline) beginTrace(h *wire.Header) error {
	if h.Trace.SE < 0 {
		return fmt.Errorf("negative shader engine %d in the stream header", h.Trace.SE)
	}
	t.pid = h.Trace.SE + 1 // pid 0 is the idle process in some readers
	t.name(track{t.pid, 0}, "process_name", "SE"+strconv.Itoa(h.Trace.SE), h.Trace.SE)
	return t.err
}

// name writes the metadata event naming a process (tid 0) or a thread,
// once, with its sort index.
func (t *timeline) name(k track, kind, name string, sort int) {
	if t.named[k] {
		return
	}
	t.named[k] = true
	sortKind := "thread_sort_index"
	if kind == "process_name" {
		sortKind = "process_sort_index"
	}
	for _, m := range [2]struct {
		kind string
		arg  func([]byte) []byte
	}{
		{kind, func(b []byte) []byte { return wire.AppendJSONString(append(b, `"name":`...), name) }},
		{sortKind, func(b []byte) []byte { return strconv.AppendInt(append(b, `"sort_index":`...), int64(sort), 10) }},
	} {
		b := append(t.buf[:0], `{"name":"`...)
		b = append(b, m.kind...)
		b = append(b, `","ph":"M","pid":`...)
		b = strconv.AppendInt(b, int64(k.pid), 10)
		b = append(b, `,"tid":`...)
		b = strconv.AppendInt(b, int64(k.tid), 10)
		b = append(b, `,"args":{`...)
		b = append(m.arg(b), "}}"...)
		t.buf = b
		t.event(b, math.MinInt64)
	}
}

func (t *timeline) slotTrack(cu, simd, slot uint8) track {
	k := track{t.pid, slotTID(cu, simd, slot)}
	t.name(k, "thread_name", fmt.Sprintf("CU%d SIMD%d slot%d", cu, simd, slot), k.tid)
	return k
}

// head starts an event object: name, category, phase, time, process and
// thread.
func head(b []byte, name, cat, ph string, ts int64, k track) []byte {
	b = append(b, `{"name":`...)
	b = wire.AppendJSONString(b, name)
	if cat != "" {
		b = append(b, `,"cat":`...)
		b = wire.AppendJSONString(b, cat)
	}
	b = append(b, `,"ph":"`...)
	b = append(b, ph...)
	b = append(b, `","ts":`...)
	b = strconv.AppendInt(b, ts, 10)
	b = append(b, `,"pid":`...)
	b = strconv.AppendInt(b, int64(k.pid), 10)
	b = append(b, `,"tid":`...)
	return strconv.AppendInt(b, int64(k.tid), 10)
}

func argInt(b []byte, key string, v int64) []byte {
	b = append(b, ',', '"')
	b = append(b, key...)
	b = append(b, '"', ':')
	return strconv.AppendInt(b, v, 10)
}

func argStr(b []byte, key, v string) []byte {
	b = append(b, ',', '"')
	b = append(b, key...)
	b = append(b, '"', ':')
	return wire.AppendJSONString(b, v)
}

// argsOpen opens an event's args and the first key's quote: the caller
// writes the rest of the first key, and argInt/argStr the others.
func argsOpen(b []byte) []byte { return append(b, `,"args":{"`...) }

func (t *timeline) addBatch(b *wire.Batch) error {
	if t.pid == 0 {
		return fmt.Errorf("records before the first trace header")
	}
	switch b.Type {
	case wire.TypeWave:
		for i := range b.Waves {
			t.wave(&b.Waves[i])
		}
	case wire.TypeOccupancy:
		for i := range b.Occupancy {
			t.occupancy(&b.Occupancy[i])
		}
	case wire.TypeDispatch:
		for i := range b.Dispatches {
			t.dispatch(&b.Dispatches[i])
		}
	case wire.TypeEvent:
		for i := range b.Events {
			t.eventRecord(&b.Events[i])
		}
	case wire.TypeMarker:
		for i := range b.Markers {
			t.marker(&b.Markers[i])
		}
	}
	return t.err
}

func (t *timeline) wave(wv *wire.Wave) {
	wb, we, ok := t.in(wv.BeginTime, wv.EndTime)
	if !ok || we < wb {
		return
	}
	k := t.slotTrack(wv.CU, wv.SIMD, wv.WaveID)
	b := head(t.buf[:0], "wave", "wave", "X", wb, k)
	b = append(b, `,"dur":`...)
	b = strconv.AppendInt(b, we-wb, 10)
	b = argsOpen(b)
	b = append(b, `begin":`...)
	b = strconv.AppendInt(b, wv.BeginTime, 10)
	b = argInt(b, "end", wv.EndTime)
	b = argInt(b, "cu", int64(wv.CU))
	b = argInt(b, "simd", int64(wv.SIMD))
	b = argInt(b, "slot", int64(wv.WaveID))
	b = argInt(b, "instructions", int64(len(wv.Instructions)))
	if t.sel != nil {
		info := t.sel.Describe(wv)
		b = argStr(b, "id", info.Key.String())
		if info.Kernel != "" {
			b = argStr(b, "kernel", info.Kernel)
		}
		if info.Dispatch >= 0 {
			b = argInt(b, "dispatch", int64(info.Dispatch))
		}
	}
	if len(wv.Instructions) > 0 {
		pc := wv.Instructions[0].PC
		b = argStr(b, "first_pc", pcString(pc))
	}
	b = append(b, "}}"...)
	t.buf = b
	t.event(b, wb)
	if !t.opt.instructions {
		return
	}
	for i := range wv.Instructions {
		in := &wv.Instructions[i]
		// The slice ends at the next issue or at the wave's end, so that
		// the wave's slices nest; the args keep the full duration.
		end := in.Time + int64(max(in.Duration, 0))
		if i+1 < len(wv.Instructions) {
			end = min(end, wv.Instructions[i+1].Time)
		}
		end = min(end, wv.EndTime)
		ib, ie, ok := t.in(in.Time, end)
		if !ok || ie < ib || ib < wb || ie > we {
			continue
		}
		b := head(t.buf[:0], in.Category.String(), "instruction", "X", ib, k)
		b = append(b, `,"dur":`...)
		b = strconv.AppendInt(b, ie-ib, 10)
		b = argsOpen(b)
		b = append(b, `pc":`...)
		b = wire.AppendJSONString(b, pcString(in.PC))
		if r := t.rows[in.PC]; r != nil {
			b = argStr(b, "text", r.Text)
			if r.Source != "" {
				b = argStr(b, "source", r.Source)
			}
		}
		b = argInt(b, "time", in.Time)
		b = argInt(b, "stall", int64(in.Stall))
		b = argInt(b, "duration", int64(in.Duration))
		b = append(b, "}}"...)
		t.buf = b
		t.event(b, ib)
		if in.Stall > 0 {
			se := min(in.Time+int64(in.Stall), ie)
			if sb, se, ok := t.in(in.Time, se); ok && se > sb && sb >= ib {
				b := head(t.buf[:0], "stall", "stall", "X", sb, k)
				b = append(b, `,"dur":`...)
				b = strconv.AppendInt(b, se-sb, 10)
				b = append(b, '}')
				t.buf = b
				t.event(b, sb)
			}
		}
	}
}

func (t *timeline) occupancy(o *wire.Occupancy) {
	key := [2]int{t.pid, int(o.CU)}
	n := t.occ[key]
	if o.Start {
		n++
	} else if n > 0 {
		n--
	}
	t.occ[key] = n
	if o.Time > math.MaxInt64 {
		return
	}
	ts := int64(o.Time)
	if ts < t.opt.start || ts > t.opt.end {
		return
	}
	b := head(t.buf[:0], fmt.Sprintf("CU%d waves", o.CU), "occupancy", "C", ts, track{t.pid, 0})
	b = append(b, `,"args":{"waves":`...)
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, "}}"...)
	t.buf = b
	t.event(b, ts)
}

func (t *timeline) eventsTrack() track {
	k := track{t.pid, tidEvents}
	t.name(k, "thread_name", "dispatches and events", 0)
	return k
}

func (t *timeline) dispatch(d *wire.Dispatch) {
	if d.Time < t.opt.start || d.Time > t.opt.end {
		return
	}
	k := t.eventsTrack()
	name := t.names[d.EntryPoint]
	if name == "" {
		name = pcString(d.EntryPoint)
	}
	b := head(t.buf[:0], "dispatch "+name, "dispatch", "i", d.Time, k)
	b = append(b, `,"s":"t"`...)
	b = argsOpen(b)
	b = append(b, `entry_point":`...)
	b = wire.AppendJSONString(b, pcString(d.EntryPoint))
	if t.sel != nil {
		if id := t.sel.DispatchID(d); id >= 0 {
			b = argInt(b, "dispatch", int64(id))
		}
	}
	b = argInt(b, "me_id", int64(d.MEID))
	b = argInt(b, "pipe_id", int64(d.PipeID))
	b = argInt(b, "vgprs", int64(d.VGPRs))
	b = argInt(b, "sgprs", int64(d.SGPRs))
	b = argInt(b, "lds_size", int64(d.LDSSize))
	b = append(b, `,"threads":[`...)
	for i, v := range d.ThreadDim {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendUint(b, uint64(v), 10)
	}
	b = append(b, "]}}"...)
	t.buf = b
	t.event(b, d.Time)
}

func (t *timeline) eventRecord(e *wire.Event) {
	if e.Time < t.opt.start || e.Time > t.opt.end {
		return
	}
	k := t.eventsTrack()
	b := head(t.buf[:0], e.Type.String(), "event", "i", e.Time, k)
	b = append(b, `,"s":"t"`...)
	b = argsOpen(b)
	b = append(b, `payload":`...)
	b = strconv.AppendUint(b, e.Payload, 10)
	b = argInt(b, "me_id", int64(e.MEID))
	b = argInt(b, "pipe_id", int64(e.PipeID))
	b = argInt(b, "flags", int64(e.Flags))
	b = append(b, "}}"...)
	t.buf = b
	t.event(b, e.Time)
}

// Marker flags (python-layer §5.11): bit 0 ends the previous scope, bit 1
// enters a new one.
const (
	markerExitPrev = 1 << 0
	markerEnter    = 1 << 1
)

// The wire's marker enums (docs/wire.md): a header record, and the kind
// of a point marker.
const (
	markerHeader wire.MarkerRecordKind = 0
	markerPoint  wire.MarkerKind       = 3
)

func (t *timeline) marker(m *wire.Marker) {
	if m.RecordKind != markerHeader {
		return
	}
	sd := &m.ShaderData
	ts := sd.Time
	slot := slotTID(sd.CU, sd.SIMD, sd.WaveID)
	k := track{t.pid, slot + tidMarkers}
	t.name(k, "thread_name", fmt.Sprintf("CU%d SIMD%d slot%d markers", sd.CU, sd.SIMD, sd.WaveID), k.tid)
	inWindow := ts >= t.opt.start && ts <= t.opt.end
	name := m.Name
	if name == "" {
		name = "marker " + strconv.FormatUint(uint64(m.MarkerID), 10)
	}
	if m.MarkerKind == markerPoint || m.MarkerFlags&(markerExitPrev|markerEnter) == 0 {
		if inWindow {
			b := head(t.buf[:0], name, "marker", "i", ts, k)
			b = append(b, `,"s":"t"`...)
			b = t.markerArgs(b, m)
			t.buf = b
			t.event(b, ts)
		}
		return
	}
	if m.MarkerFlags&markerExitPrev != 0 && t.scopes[k] > 0 {
		t.scopes[k]--
		b := head(t.buf[:0], "", "marker", "E", min(max(ts, t.opt.start), t.opt.end), k)
		b = append(b, '}')
		t.buf = b
		t.event(b, ts)
	}
	if m.MarkerFlags&markerEnter != 0 {
		t.scopes[k]++
		b := head(t.buf[:0], name, "marker", "B", min(max(ts, t.opt.start), t.opt.end), k)
		b = t.markerArgs(b, m)
		t.buf = b
		t.event(b, ts)
	}
	t.last[k] = max(t.last[k], ts)
}

func (t *timeline) markerArgs(b []byte, m *wire.Marker) []byte {
	b = argsOpen(b)
	b = append(b, `id":`...)
	b = strconv.AppendUint(b, uint64(m.MarkerID), 10)
	b = argStr(b, "kind", m.MarkerKind.String())
	if m.SourceLocation != "" {
		b = argStr(b, "source", m.SourceLocation)
	}
	return append(b, "}}"...)
}

// finish closes the scopes left open and ends the document.
func (t *timeline) finish() error {
	open := make([]track, 0, len(t.scopes))
	for k, n := range t.scopes {
		if n > 0 {
			open = append(open, k)
		}
	}
	sort.Slice(open, func(i, j int) bool {
		return open[i].pid < open[j].pid || open[i].pid == open[j].pid && open[i].tid < open[j].tid
	})
	for _, k := range open {
		for ; t.scopes[k] > 0; t.scopes[k]-- {
			b := head(t.buf[:0], "", "marker", "E", min(max(t.last[k], t.opt.start), t.opt.end), k)
			b = append(b, '}')
			t.buf = b
			t.event(b, t.last[k])
		}
	}
	t.raw("\n],\"otherData\":{\"producer\":\"att-timeline\",\"time_unit\":\"1 us = 1 shader clock cycle\"")
	if t.cutAt != noCut {
		t.raw(",\"cut_at_cycle\":" + strconv.FormatInt(t.cutAt, 10))
	}
	t.raw("}}\n")
	return t.err
}

func pcString(pc wire.PC) string {
	return strconv.FormatUint(pc.CodeObjectID, 10) + ":0x" + strconv.FormatUint(pc.Address, 16)
}
