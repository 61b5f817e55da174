package rcv

import (
	"io"
	"math"
	"sort"
	"strconv"

	"github.com/attkit/attkit/internal/pyjson"
	"github.com/attkit/attkit/internal/wire"
)

// fileLists is other_simd_filenames or shaderdata_filenames: per SE (in
// first-insertion order) the files written, K being the position.
type fileLists struct {
	ses []int
	m   map[int][]fileEntry
}

type fileEntry struct {
	name string
	span
}

// next returns the K of the next file of se.
func (l *fileLists) next(se int) int { return len(l.m[se]) }

func (l *fileLists) add(se int, e fileEntry) {
	if _, ok := l.m[se]; !ok {
		l.ses = append(l.ses, se)
	}
	l.m[se] = append(l.m[se], e)
}

func (l *fileLists) json() pyjson.Object {
	obj := make(pyjson.Object, 0, len(l.ses))
	for _, se := range l.ses {
		list := make([]any, len(l.m[se]))
		for i, e := range l.m[se] {
			list[i] = []any{e.name, e.begin, e.end}
		}
		obj = append(obj, pyjson.Member{Key: strconv.Itoa(se), Value: list})
	}
	return obj
}

// u64 returns v as an int64 when it fits (pyjson's fast path), else as is.
func u64(v uint64) any {
	if v <= math.MaxInt64 {
		return int64(v)
	}
	return v
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// addPerf spools the rows of se<SE>_perfcounter.json (§5.7).
func (w *Writer) addPerf(t *traceData, recs []wire.PerfEvent) error {
	if len(recs) == 0 {
		return nil
	}
	if t.perf == nil {
		sp, err := w.spoolFile()
		if err != nil {
			return err
		}
		t.perf = newList(sp, '[', 1)
	}
	for i := range recs {
		p := &recs[i]
		row := [...]int64{p.Time, int64(p.Events[0]), int64(p.Events[1]), int64(p.Events[2]),
			int64(p.Events[3]), int64(p.CU), int64(p.Bank)}
		if err := t.perf.add(func(dst []byte) []byte { return pyjson.AppendAt(dst, row[:], 2) }); err != nil {
			return err
		}
	}
	return nil
}

// writePerfCounters writes se<SE>_perfcounter.json (§5.7) of a trace.
func (w *Writer) writePerfCounters(t *traceData) error {
	var d doc
	v := pyjson.Object{{Key: "data", Value: t.perf.part(&d)}}
	return w.stream("se"+strconv.Itoa(t.se)+"_perfcounter.json", func(out io.Writer) error { return d.writeDoc(out, v) })
}

// addOtherSIMD spools the rows of other_simd_se<SE>_<K>.json (§5.8).
func (w *Writer) addOtherSIMD(t *traceData, recs []wire.OtherSIMD) error {
	if len(recs) == 0 {
		return nil
	}
	if t.other == nil {
		sp, err := w.spoolFile()
		if err != nil {
			return err
		}
		t.other = newList(sp, '[', 1)
		t.otherFirst = recs[0]
	}
	for i := range recs {
		o := &recs[i]
		row := [...]int64{o.Time, int64(o.Cycles), int64(o.Category)}
		if err := t.other.add(func(dst []byte) []byte { return pyjson.AppendAt(dst, row[:], 2) }); err != nil {
			return err
		}
	}
	last := &recs[len(recs)-1]
	t.otherEnd = last.Time + int64(last.Cycles)
	return nil
}

// writeOtherSIMD writes other_simd_se<SE>_<K>.json (§5.8) for a trace with
// INST_OTHER_SIMD records.
func (w *Writer) writeOtherSIMD(t *traceData) error {
	name := "other_simd_se" + strconv.Itoa(t.se) + "_" + strconv.Itoa(w.other.next(t.se)) + ".json"
	s := span{t.otherFirst.Time, t.otherEnd}
	var d doc
	v := pyjson.Object{
		{Key: "type", Value: "OTHER_SIMD_INSTRUCTIONS"},
		{Key: "begin_time", Value: s.begin},
		{Key: "end_time", Value: s.end},
		{Key: "wgp", Value: int64(t.otherFirst.WGP)},
		{Key: "instructions_schema", Value: []any{"time", "duration", "category"}},
		{Key: "instructions_count", Value: t.other.n},
		{Key: "instructions", Value: t.other.part(&d)},
	}
	if err := w.stream(name, func(out io.Writer) error { return d.writeDoc(out, v) }); err != nil {
		return err
	}
	w.other.add(t.se, fileEntry{name, s})
	return nil
}

// shaderDataRow is a row of shaderdata_<SE>_<K>.json's "records".
func shaderDataRow(dst []byte, r *wire.ShaderData, level int) []byte {
	if r.Value <= math.MaxInt64 {
		row := [...]int64{r.Time, int64(r.Value), int64(r.CU), int64(r.SIMD), int64(r.WaveID), int64(r.Flags)}
		return pyjson.AppendAt(dst, row[:], level)
	}
	return pyjson.AppendAt(dst, []any{r.Time, r.Value, int64(r.CU), int64(r.SIMD), int64(r.WaveID), int64(r.Flags)}, level)
}

// addShaderData spools the rows of shaderdata_<SE>_<K>.json (§5.9), or
// keeps the records for marker correction.
func (w *Writer) addShaderData(t *traceData, recs []wire.ShaderData) error {
	if len(recs) == 0 {
		return nil
	}
	if w.deferSD {
		t.sd = append(t.sd, recs...)
		return nil
	}
	if t.sdRows == nil {
		sp, err := w.spoolFile()
		if err != nil {
			return err
		}
		t.sdRows = newList(sp, '[', 1)
		t.sdSpan.begin = recs[0].Time
	}
	for i := range recs {
		r := &recs[i]
		if err := t.sdRows.add(func(dst []byte) []byte { return shaderDataRow(dst, r, 2) }); err != nil {
			return err
		}
	}
	t.sdSpan.end = recs[len(recs)-1].Time
	return nil
}

// writeShaderData writes shaderdata_<SE>_<K>.json (§5.9) of a trace.
func (w *Writer) writeShaderData(t *traceData) error {
	var d doc
	return w.writeShaderDoc(t.se, t.sdSpan, t.sdRows.n, t.sdRows.part(&d), &d)
}

// writeKeptShaderData writes shaderdata_<SE>_<K>.json (§5.9) of a trace
// whose records were kept for marker correction.
func (w *Writer) writeKeptShaderData(t *traceData) error {
	recs := t.sd
	var d doc
	rows := d.part(1, func(out io.Writer) error {
		lw := listWriter{w: out, open: '[', level: 1}
		for i := range recs {
			if err := lw.add(func(dst []byte) []byte { return shaderDataRow(dst, &recs[i], 2) }); err != nil {
				return err
			}
		}
		return lw.close()
	})
	return w.writeShaderDoc(t.se, span{recs[0].Time, recs[len(recs)-1].Time}, len(recs), rows, &d)
}

func (w *Writer) writeShaderDoc(se int, s span, n int, rows pyjson.Appender, d *doc) error {
	name := "shaderdata_" + strconv.Itoa(se) + "_" + strconv.Itoa(w.shader.next(se)) + ".json"
	v := pyjson.Object{
		{Key: "type", Value: "shaderdata"},
		{Key: "begin_time", Value: s.begin},
		{Key: "end_time", Value: s.end},
		{Key: "records_schema", Value: []any{"time", "value", "cu", "simd", "wave_id", "flags"}},
		{Key: "records_count", Value: n},
		{Key: "records", Value: rows},
	}
	if err := w.stream(name, func(out io.Writer) error { return d.writeDoc(out, v) }); err != nil {
		return err
	}
	w.shader.add(se, fileEntry{name, s})
	return nil
}

// writeFilenames writes filenames.json (§5.3).
func (w *Writer) writeFilenames(out io.Writer) error {
	var d doc
	waves := make(pyjson.Object, 0, len(w.waves.ses))
	for _, se := range w.waves.ses {
		sn := w.waves.se[se]
		simds := make(pyjson.Object, 0, len(sn.simds))
		for _, simd := range sn.simds {
			ln := sn.simd[simd]
			slots := make(pyjson.Object, 0, len(ln.slots))
			for _, slot := range ln.slots {
				slots = append(slots, pyjson.Member{Key: strconv.Itoa(int(slot)), Value: ln.slot[slot].part(&d)})
			}
			simds = append(simds, pyjson.Member{Key: strconv.Itoa(int(simd)), Value: slots})
		}
		waves = append(waves, pyjson.Member{Key: strconv.Itoa(se), Value: simds})
	}
	counters := make([]any, len(w.opt.CounterNames))
	for i, n := range w.opt.CounterNames {
		counters[i] = n
	}
	gfxip := w.GFXIP()
	gfxv := "vega"
	if gfxip > 9 {
		gfxv = "navi"
	}
	return d.writeDoc(out, pyjson.Object{
		{Key: "global_begin_time", Value: 0},
		{Key: "gfxv", Value: gfxv},
		{Key: "gfxip", Value: u64(gfxip)},
		{Key: "version", Value: Version},
		{Key: "counter_names", Value: counters},
		{Key: "wave_filenames", Value: waves},
		{Key: "other_simd_filenames", Value: w.other.json()},
		{Key: "shaderdata_filenames", Value: w.shader.json()},
	})
}

// A listWriter writes a JSON list (or object) at nesting depth level to w
// element by element, as pyjson.AppendList lays it out.
type listWriter struct {
	w        io.Writer
	open     byte
	level, n int
	buf      []byte
}

func (l *listWriter) add(enc func(dst []byte) []byte) error {
	l.buf = l.buf[:0]
	if l.n == 0 {
		l.buf = append(l.buf, l.open)
	} else {
		l.buf = append(l.buf, ',')
	}
	l.buf = enc(indent(l.buf, l.level+1))
	l.n++
	_, err := l.w.Write(l.buf)
	return err
}

func (l *listWriter) close() error {
	end := byte(']')
	if l.open == '{' {
		end = '}'
	}
	if l.n == 0 {
		_, err := l.w.Write([]byte{l.open, end})
		return err
	}
	_, err := l.w.Write(append(indent(l.buf[:0], l.level), end))
	return err
}

// OccupancyFields names the columns of an occupancy row.
var OccupancyFields = []string{"time", "cu", "simd", "wave_id", "start", "kernel_id",
	"me_id", "pipe_id", "is_ext", "workgroup_id", "cluster_id"}

// kernelIDs assigns kernel ids to PCs on first sight (§5.4).
type kernelIDs struct {
	id    map[wire.PC]int
	order []wire.PC
}

func (k *kernelIDs) get(pc wire.PC) int {
	if id, ok := k.id[pc]; ok {
		return id
	}
	id := len(k.order)
	k.id[pc] = id
	k.order = append(k.order, pc)
	return id
}

// kernelNames maps a PC to its kernel name from the index's kernel list.
func kernelNames(ix *wire.Index) func(pc wire.PC) string {
	byPC := map[wire.PC]*wire.Kernel{}
	for i := range ix.Kernels {
		k := &ix.Kernels[i]
		byPC[wire.PC{Address: k.Address, CodeObjectID: k.CodeObj}] = k
	}
	return func(pc wire.PC) string {
		if k := byPC[pc]; k != nil {
			if k.Name != "" {
				return k.Name
			}
			if k.Demangled != "" {
				return k.Demangled
			}
		}
		return strconv.FormatUint(pc.CodeObjectID, 10) + " / 0x" + strconv.FormatUint(pc.Address, 16)
	}
}

// writeOccupancy writes occupancy.json (§5.4). Kernel ids are assigned in
// occupancy-row order (SEs in order, rows in order), then in dispatch
// order (SEs in order, dispatches in decode order): a first pass over the
// spooled records assigns them, the second writes the rows.
func (w *Writer) writeOccupancy(out io.Writer) error {
	ids := &kernelIDs{id: map[wire.PC]int{{}: 0}, order: []wire.PC{{}}}
	name := kernelNames(w.ix)
	for _, se := range w.ses {
		err := w.se[se].occupancy.each(func(recs []wire.Occupancy) error {
			for i := range recs {
				ids.get(recs[i].PC)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	for _, se := range w.ses {
		err := w.se[se].dispatches.each(func(recs []wire.Dispatch) error {
			for i := range recs {
				ids.get(recs[i].EntryPoint)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	var d doc
	events := make(pyjson.Object, 0, len(w.ses))
	for _, se := range w.ses {
		sd := w.se[se]
		events = append(events, pyjson.Member{Key: strconv.Itoa(se), Value: d.part(2, func(out io.Writer) error {
			return sd.writeEvents(out, ids, name)
		})})
	}
	dispatches := make(pyjson.Object, len(ids.order))
	for id, pc := range ids.order {
		dispatches[id] = pyjson.Member{Key: strconv.Itoa(id), Value: name(pc)}
	}
	fields := make([]any, len(OccupancyFields))
	for i, f := range OccupancyFields {
		fields[i] = f
	}
	v := pyjson.Object{
		{Key: "occupancy_fields", Value: fields},
		{Key: "events", Value: events},
		{Key: "dispatches", Value: dispatches},
		{Key: "version", Value: Version},
	}
	for _, se := range w.ses {
		sd := w.se[se]
		v = append(v, pyjson.Member{Key: strconv.Itoa(se), Value: d.part(1, func(out io.Writer) error {
			lw := listWriter{w: out, open: '[', level: 1}
			err := sd.occupancy.each(func(recs []wire.Occupancy) error {
				for i := range recs {
					o := &recs[i]
					row := [...]uint64{o.Time, uint64(o.CU), uint64(o.SIMD), uint64(o.WaveID), b2u(o.Start),
						uint64(ids.id[o.PC]), uint64(o.MEID), uint64(o.PipeID), b2u(o.IsExt),
						uint64(o.WorkgroupID), uint64(o.ClusterID)}
					if err := lw.add(func(dst []byte) []byte {
						return pyjson.AppendList(dst, '[', ']', len(row), 2, func(dst []byte, f int) []byte {
							return strconv.AppendUint(dst, row[f], 10)
						})
					}); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				return err
			}
			return lw.close()
		})})
	}
	return d.writeDoc(out, v)
}

// writeEvents writes the shader engine's list of occupancy.json's
// "events": its dispatches and events in time order, dispatches first
// among equal times (a stable sort of the dispatches followed by the
// events). Lists that came in time order are merged as they stream; one
// that did not is sorted in memory.
func (sd *seData) writeEvents(out io.Writer, ids *kernelIDs, name func(wire.PC) string) error {
	lw := listWriter{w: out, open: '[', level: 2}
	emitD := func(d *wire.Dispatch) error {
		obj := pyjson.Object{
			{Key: "kind", Value: "dispatch"},
			{Key: "time", Value: d.Time},
			{Key: "me_id", Value: int64(d.MEID)},
			{Key: "pipe_id", Value: int64(d.PipeID)},
			{Key: "kernel_id", Value: ids.id[d.EntryPoint]},
			{Key: "kernel_name", Value: name(d.EntryPoint)},
			{Key: "entry_point", Value: pyjson.Object{
				{Key: "address", Value: u64(d.EntryPoint.Address)},
				{Key: "code_object_id", Value: u64(d.EntryPoint.CodeObjectID)},
			}},
			{Key: "user_sgprs", Value: int64(d.UserSGPRs)},
			{Key: "vgprs", Value: int64(d.VGPRs)},
			{Key: "sgprs", Value: int64(d.SGPRs)},
			{Key: "lds_size", Value: int64(d.LDSSize)},
			{Key: "thread_dim_x", Value: int64(d.ThreadDim[0])},
			{Key: "thread_dim_y", Value: int64(d.ThreadDim[1])},
			{Key: "thread_dim_z", Value: int64(d.ThreadDim[2])},
			{Key: "dispatch_pkt_addr", Value: u64(d.DispatchPktAddr)},
			{Key: "byte_offset", Value: u64(d.ByteOffset)},
			{Key: "flags", Value: int64(d.Flags)},
		}
		return lw.add(func(dst []byte) []byte { return pyjson.AppendAt(dst, obj, 3) })
	}
	emitE := func(e *wire.Event) error {
		obj := pyjson.Object{
			{Key: "kind", Value: "event"},
			{Key: "time", Value: e.Time},
			{Key: "type", Value: int64(e.Type)},
			{Key: "me_id", Value: int64(e.MEID)},
			{Key: "pipe_id", Value: int64(e.PipeID)},
			{Key: "flags", Value: int64(e.Flags)},
			{Key: "payload", Value: u64(e.Payload)},
			{Key: "byte_offset", Value: u64(e.ByteOffset)},
		}
		switch e.Type {
		case wire.EventCodeObjectLoad, wire.EventCodeObjectUnload:
			obj = append(obj, pyjson.Member{Key: "code_object_id", Value: u64(e.Payload)})
		case wire.EventClusterBarrier:
			obj = append(obj, pyjson.Member{Key: "cluster_id", Value: e.ClusterID()},
				pyjson.Member{Key: "barrier_id", Value: e.BarrierID()})
		}
		return lw.add(func(dst []byte) []byte { return pyjson.AppendAt(dst, obj, 3) })
	}
	if !sd.evOrder.unsorted && !sd.dpOrder.unsorted {
		// The dispatches are few: merge the events past them as they stream.
		dps, err := sd.dispatches.all()
		if err != nil {
			return err
		}
		k := 0
		err = sd.events.each(func(recs []wire.Event) error {
			for i := range recs {
				for ; k < len(dps) && dps[k].Time <= recs[i].Time; k++ {
					if err := emitD(&dps[k]); err != nil {
						return err
					}
				}
				if err := emitE(&recs[i]); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		for ; k < len(dps); k++ {
			if err := emitD(&dps[k]); err != nil {
				return err
			}
		}
		return lw.close()
	}
	dps, err := sd.dispatches.all()
	if err != nil {
		return err
	}
	evs, err := sd.events.all()
	if err != nil {
		return err
	}
	type item struct {
		time int64
		d    *wire.Dispatch
		e    *wire.Event
	}
	items := make([]item, 0, len(dps)+len(evs))
	for i := range dps {
		items = append(items, item{time: dps[i].Time, d: &dps[i]})
	}
	for i := range evs {
		items = append(items, item{time: evs[i].Time, e: &evs[i]})
	}
	sort.SliceStable(items, func(a, b int) bool { return items[a].time < items[b].time })
	for _, it := range items {
		var err error
		if it.d != nil {
			err = emitD(it.d)
		} else {
			err = emitE(it.e)
		}
		if err != nil {
			return err
		}
	}
	return lw.close()
}

// addRealtime spools rows of realtime.json's SE<N> list (§5.5).
func addRealtime(l *list, recs []wire.Realtime) error {
	for i := range recs {
		r := &recs[i]
		if err := l.add(func(dst []byte) []byte {
			return pyjson.AppendAt(dst, []any{r.ShaderClock, u64(r.RealtimeClock)}, 2)
		}); err != nil {
			return err
		}
	}
	return nil
}

// writeRealtime writes realtime.json (§5.5).
func (w *Writer) writeRealtime(out io.Writer) error {
	var d doc
	v := pyjson.Object{{Key: "metadata", Value: pyjson.Object{
		{Key: "descriptor", Value: "[gfx_clock, realtime_clock]"},
		{Key: "frequency", Value: u64(w.freq)},
	}}}
	for _, se := range w.ses {
		v = append(v, pyjson.Member{Key: "SE" + strconv.Itoa(se), Value: w.se[se].realtime.part(&d)})
	}
	return d.writeDoc(out, v)
}
