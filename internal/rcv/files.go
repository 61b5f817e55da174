package rcv

import (
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

// perfCounterJSON is se<SE>_perfcounter.json (§5.7).
func perfCounterJSON(recs []wire.PerfEvent) []byte {
	rows := make([]any, len(recs))
	for i := range recs {
		p := &recs[i]
		rows[i] = []int64{p.Time, int64(p.Events[0]), int64(p.Events[1]), int64(p.Events[2]),
			int64(p.Events[3]), int64(p.CU), int64(p.Bank)}
	}
	return pyjson.Marshal(pyjson.Object{{Key: "data", Value: rows}})
}

// writeOtherSIMD writes other_simd_se<SE>_<K>.json (§5.8) for a trace with
// INST_OTHER_SIMD records.
func (w *Writer) writeOtherSIMD(t *traceData) error {
	recs := t.other
	name := "other_simd_se" + strconv.Itoa(t.se) + "_" + strconv.Itoa(w.other.next(t.se)) + ".json"
	first, last := &recs[0], &recs[len(recs)-1]
	s := span{first.Time, last.Time + int64(last.Cycles)}
	rows := make([]any, len(recs))
	for i := range recs {
		o := &recs[i]
		rows[i] = []int64{o.Time, int64(o.Cycles), int64(o.Category)}
	}
	doc := pyjson.Object{
		{Key: "type", Value: "OTHER_SIMD_INSTRUCTIONS"},
		{Key: "begin_time", Value: s.begin},
		{Key: "end_time", Value: s.end},
		{Key: "wgp", Value: int64(first.WGP)},
		{Key: "instructions_schema", Value: []any{"time", "duration", "category"}},
		{Key: "instructions_count", Value: len(recs)},
		{Key: "instructions", Value: rows},
	}
	if err := w.write(name, pyjson.Marshal(doc)); err != nil {
		return err
	}
	w.other.add(t.se, fileEntry{name, s})
	return nil
}

// writeShaderData writes shaderdata_<SE>_<K>.json (§5.9).
func (w *Writer) writeShaderData(t *traceData) error {
	recs := t.sd
	name := "shaderdata_" + strconv.Itoa(t.se) + "_" + strconv.Itoa(w.shader.next(t.se)) + ".json"
	s := span{recs[0].Time, recs[len(recs)-1].Time}
	rows := make([]any, len(recs))
	for i := range recs {
		r := &recs[i]
		if r.Value <= math.MaxInt64 {
			rows[i] = []int64{r.Time, int64(r.Value), int64(r.CU), int64(r.SIMD), int64(r.WaveID), int64(r.Flags)}
		} else {
			rows[i] = []any{r.Time, r.Value, int64(r.CU), int64(r.SIMD), int64(r.WaveID), int64(r.Flags)}
		}
	}
	doc := pyjson.Object{
		{Key: "type", Value: "shaderdata"},
		{Key: "begin_time", Value: s.begin},
		{Key: "end_time", Value: s.end},
		{Key: "records_schema", Value: []any{"time", "value", "cu", "simd", "wave_id", "flags"}},
		{Key: "records_count", Value: len(recs)},
		{Key: "records", Value: rows},
	}
	if err := w.write(name, pyjson.Marshal(doc)); err != nil {
		return err
	}
	w.shader.add(t.se, fileEntry{name, s})
	return nil
}

// filenamesJSON is filenames.json (§5.3).
func (w *Writer) filenamesJSON() []byte {
	waves := make(pyjson.Object, 0, len(w.waves.ses))
	var name []byte
	for _, se := range w.waves.ses {
		sn := w.waves.se[se]
		simds := make(pyjson.Object, 0, len(sn.simds))
		for _, simd := range sn.simds {
			ln := sn.simd[simd]
			slots := make(pyjson.Object, 0, len(ln.slots))
			for _, slot := range ln.slots {
				list := ln.slot[slot]
				ns := make(pyjson.Object, len(list))
				for n, s := range list {
					name = appendWaveFileName(name[:0], se, int(simd), int(slot), n)
					ns[n] = pyjson.Member{Key: strconv.Itoa(n), Value: []any{string(name), s.begin, s.end}}
				}
				slots = append(slots, pyjson.Member{Key: strconv.Itoa(int(slot)), Value: ns})
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
	return pyjson.Marshal(pyjson.Object{
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

// occupancyJSON is occupancy.json (§5.4). Kernel ids are assigned while the
// occupancy rows are built (SEs in order, rows in order), then while the
// dispatches are (SEs in order, dispatches in decode order).
func (w *Writer) occupancyJSON() []byte {
	ids := &kernelIDs{id: map[wire.PC]int{{}: 0}, order: []wire.PC{{}}}
	name := kernelNames(w.ix)
	// Kernel ids are assigned here, in row order, before the dispatches; the
	// rows themselves are encoded straight from the records (occupancyRows),
	// since a run can hold millions of them.
	rows := make([]any, len(w.ses))
	for i, se := range w.ses {
		occ := w.se[se].occupancy
		kid := make([]int32, len(occ))
		for k := range occ {
			kid[k] = int32(ids.get(occ[k].PC))
		}
		rows[i] = occupancyRows{occ: occ, kernel: kid}
	}
	events := make(pyjson.Object, 0, len(w.ses))
	for _, se := range w.ses {
		sd := w.se[se]
		type item struct {
			time int64
			obj  pyjson.Object
		}
		items := make([]item, 0, len(sd.dispatches)+len(sd.events))
		for k := range sd.dispatches {
			d := &sd.dispatches[k]
			items = append(items, item{d.Time, pyjson.Object{
				{Key: "kind", Value: "dispatch"},
				{Key: "time", Value: d.Time},
				{Key: "me_id", Value: int64(d.MEID)},
				{Key: "pipe_id", Value: int64(d.PipeID)},
				{Key: "kernel_id", Value: ids.get(d.EntryPoint)},
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
			}})
		}
		for k := range sd.events {
			e := &sd.events[k]
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
			items = append(items, item{e.Time, obj})
		}
		sort.SliceStable(items, func(a, b int) bool { return items[a].time < items[b].time })
		list := make([]any, len(items))
		for k := range items {
			list[k] = items[k].obj
		}
		events = append(events, pyjson.Member{Key: strconv.Itoa(se), Value: list})
	}
	dispatches := make(pyjson.Object, len(ids.order))
	for id, pc := range ids.order {
		dispatches[id] = pyjson.Member{Key: strconv.Itoa(id), Value: name(pc)}
	}
	fields := make([]any, len(OccupancyFields))
	for i, f := range OccupancyFields {
		fields[i] = f
	}
	doc := pyjson.Object{
		{Key: "occupancy_fields", Value: fields},
		{Key: "events", Value: events},
		{Key: "dispatches", Value: dispatches},
		{Key: "version", Value: Version},
	}
	for i, se := range w.ses {
		doc = append(doc, pyjson.Member{Key: strconv.Itoa(se), Value: rows[i]})
	}
	return pyjson.Marshal(doc)
}

// realtimeJSON is realtime.json (§5.5).
func (w *Writer) realtimeJSON() []byte {
	doc := pyjson.Object{{Key: "metadata", Value: pyjson.Object{
		{Key: "descriptor", Value: "[gfx_clock, realtime_clock]"},
		{Key: "frequency", Value: u64(w.freq)},
	}}}
	for _, se := range w.ses {
		rt := w.se[se].realtime
		list := make([]any, len(rt))
		for i := range rt {
			list[i] = []any{rt[i].ShaderClock, u64(rt[i].RealtimeClock)}
		}
		doc = append(doc, pyjson.Member{Key: "SE" + strconv.Itoa(se), Value: list})
	}
	return pyjson.Marshal(doc)
}

// occupancyRows encodes the occupancy rows of one shader engine,
// [time, cu, simd, wave_id, start, kernel_id, me_id, pipe_id, is_ext,
// workgroup_id, cluster_id], in pyjson's layout without building them as
// values first.
type occupancyRows struct {
	occ    []wire.Occupancy
	kernel []int32
}

// AppendPyJSON implements pyjson.Appender.
func (r occupancyRows) AppendPyJSON(dst []byte, level int) []byte {
	return pyjson.AppendList(dst, '[', ']', len(r.occ), level, func(dst []byte, k int) []byte {
		o := &r.occ[k]
		row := [...]uint64{o.Time, uint64(o.CU), uint64(o.SIMD), uint64(o.WaveID), b2u(o.Start),
			uint64(r.kernel[k]), uint64(o.MEID), uint64(o.PipeID), b2u(o.IsExt),
			uint64(o.WorkgroupID), uint64(o.ClusterID)}
		return pyjson.AppendList(dst, '[', ']', len(row), level+1, func(dst []byte, f int) []byte {
			return strconv.AppendUint(dst, row[f], 10)
		})
	})
}
