package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/attkit/attkit/internal/publish"
	"github.com/attkit/attkit/internal/pyjson"
	"github.com/attkit/attkit/internal/testutil"
	"github.com/attkit/attkit/internal/wire"
)

// checkReference derives the viewer files of a run from its record streams
// a second time, straight from the rules of python-layer §5.3–5.9 and with
// none of internal/rcv's code, and compares them byte for byte (pyjson
// supplies the json.dumps layout). It covers every file but code.json
// (the fold's, tested in internal/fold) and the marker correction (the
// runs it is used on have no marker layout).
func checkReference(t *testing.T, dir string, streams []string, ix *wire.Index) {
	t.Helper()
	type trace struct {
		se      int
		batches []wire.Batch
	}
	var traces []trace
	for _, s := range streams {
		data, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		rd := wire.NewReader(bytes.NewReader(data), s)
		for rd.Scan() {
			if rd.Kind() == wire.KindHeader {
				traces = append(traces, trace{se: rd.Header().Trace.SE})
				continue
			}
			tr := &traces[len(traces)-1]
			tr.batches = append(tr.batches, rd.Batch().Clone())
		}
		if rd.Err() != nil {
			t.Fatal(rd.Err())
		}
	}
	want := map[string][]byte{}

	// Line numbers: index instruction rows, then first touch (§4.2): the
	// fold of a wave first (PC (0,0) skipped), then its wave file.
	line := map[wire.PC]int64{}
	next := int64(0)
	for _, r := range ix.Rows {
		if !r.IsLabel() {
			line[r.PC()] = r.Line
			next = max(next, r.Line)
		}
	}
	touch := func(p wire.PC) int64 {
		if l, ok := line[p]; ok {
			return l
		}
		next++
		line[p] = next
		return next
	}

	// Per-SE state in first-added order.
	var ses []int
	seen := map[int]bool{}
	occ := map[int][]wire.Occupancy{}
	disp := map[int][]wire.Dispatch{}
	evs := map[int][]wire.Event{}
	rts := map[int][]wire.Realtime{}
	gfxip, freq := uint64(9), uint64(0)
	anyRT := false
	slotN := map[string]int{}
	type wv struct {
		se, simd, slot, n int
		name              string
		begin, end        int64
	}
	var written []wv
	otherK, sdK := map[int]int{}, map[int]int{}
	// listed is one entry of other_simd_filenames or shaderdata_filenames.
	type listed struct {
		se         int
		name       string
		begin, end int64
	}
	var otherList, sdList []listed
	for _, tr := range traces {
		se := tr.se
		if !seen[se] {
			seen[se] = true
			ses = append(ses, se)
		}
		var perf []wire.PerfEvent
		var other []wire.OtherSIMD
		var sd []wire.ShaderData
		var waves []wire.Wave
		for _, b := range tr.batches {
			switch b.Type {
			case wire.TypeGFXIP:
				gfxip = b.GFXIP
			case wire.TypeRTFrequency:
				freq = b.RTFrequency
			case wire.TypeOccupancy:
				occ[se] = append(occ[se], b.Occupancy...)
			case wire.TypeDispatch:
				disp[se] = append(disp[se], b.Dispatches...)
			case wire.TypeEvent:
				evs[se] = append(evs[se], b.Events...)
			case wire.TypeRealtime:
				rts[se] = append(rts[se], b.Realtime...)
				anyRT = anyRT || len(b.Realtime) > 0
			case wire.TypePerfEvent:
				perf = append(perf, b.PerfEvents...)
			case wire.TypeInstOtherSIMD:
				other = append(other, b.OtherSIMD...)
			case wire.TypeShaderData:
				sd = append(sd, b.ShaderData...)
			case wire.TypeWave:
				waves = append(waves, b.Waves...)
			}
		}
		// §6.3: the per-trace files, then the waves.
		if len(perf) > 0 {
			var rows []any
			for _, p := range perf {
				rows = append(rows, []any{p.Time, p.Events[0], p.Events[1], p.Events[2], p.Events[3], p.CU, p.Bank})
			}
			want[fmt.Sprintf("se%d_perfcounter.json", se)] = pyjson.Marshal(pyjson.Object{{Key: "data", Value: rows}})
		}
		if len(other) > 0 {
			name := fmt.Sprintf("other_simd_se%d_%d.json", se, otherK[se])
			otherK[se]++
			var rows []any
			for _, o := range other {
				rows = append(rows, []any{o.Time, o.Cycles, uint8(o.Category)})
			}
			begin, end := other[0].Time, other[len(other)-1].Time+int64(other[len(other)-1].Cycles)
			want[name] = pyjson.Marshal(pyjson.Object{
				{Key: "type", Value: "OTHER_SIMD_INSTRUCTIONS"}, {Key: "begin_time", Value: begin},
				{Key: "end_time", Value: end}, {Key: "wgp", Value: other[0].WGP},
				{Key: "instructions_schema", Value: []any{"time", "duration", "category"}},
				{Key: "instructions_count", Value: len(other)}, {Key: "instructions", Value: rows}})
			otherList = append(otherList, listed{se, name, begin, end})
		}
		if len(sd) > 0 {
			name := fmt.Sprintf("shaderdata_%d_%d.json", se, sdK[se])
			sdK[se]++
			var rows []any
			for _, r := range sd {
				rows = append(rows, []any{r.Time, r.Value, r.CU, r.SIMD, r.WaveID, r.Flags})
			}
			begin, end := sd[0].Time, sd[len(sd)-1].Time
			want[name] = pyjson.Marshal(pyjson.Object{
				{Key: "type", Value: "shaderdata"}, {Key: "begin_time", Value: begin}, {Key: "end_time", Value: end},
				{Key: "records_schema", Value: []any{"time", "value", "cu", "simd", "wave_id", "flags"}},
				{Key: "records_count", Value: len(sd)}, {Key: "records", Value: rows}})
			sdList = append(sdList, listed{se, name, begin, end})
		}
		for _, w := range waves {
			for _, in := range w.Instructions {
				if in.PC != (wire.PC{}) {
					touch(in.PC)
				}
			}
			if len(w.Instructions) == 0 && len(w.Timeline) < 3 {
				continue
			}
			key := fmt.Sprint(se, w.SIMD, w.WaveID)
			n := slotN[key]
			slotN[key]++
			name := fmt.Sprintf("se%d_sm%d_sl%d_wv%d.json", se, w.SIMD, w.WaveID, n)
			insts := []any{}
			for _, in := range w.Instructions {
				insts = append(insts, []any{in.Time, uint8(in.Category), in.Stall, in.Duration, touch(in.PC)})
			}
			tl := []any{}
			for _, s := range w.Timeline {
				tl = append(tl, []any{int32(s.Type), s.Duration})
			}
			want[name] = pyjson.Marshal(pyjson.Object{
				{Key: "name", Value: fmt.Sprintf("SE%d", se)},
				{Key: "duration", Value: w.EndTime - w.BeginTime},
				{Key: "wave", Value: pyjson.Object{
					{Key: "cu", Value: w.CU}, {Key: "id", Value: n}, {Key: "simd", Value: w.SIMD},
					{Key: "slot", Value: w.WaveID}, {Key: "begin", Value: w.BeginTime}, {Key: "end", Value: w.EndTime},
					{Key: "instructions", Value: insts}, {Key: "timeline", Value: tl}, {Key: "waitcnt", Value: []any{}}}},
				{Key: "num_stitched", Value: len(insts)},
				{Key: "num_insts", Value: len(insts)}})
			written = append(written, wv{se, int(w.SIMD), int(w.WaveID), n, name, w.BeginTime, w.EndTime})
		}
	}

	// filenames.json: nested maps in first-insertion order.
	waveTree := pyjson.Object{}
	child := func(o *pyjson.Object, key string) *pyjson.Object {
		for i := range *o {
			if (*o)[i].Key == key {
				c := (*o)[i].Value.(*pyjson.Object)
				return c
			}
		}
		c := &pyjson.Object{}
		*o = append(*o, pyjson.Member{Key: key, Value: c})
		return c
	}
	for _, w := range written {
		slot := child(child(child(&waveTree, fmt.Sprint(w.se)), fmt.Sprint(w.simd)), fmt.Sprint(w.slot))
		*slot = append(*slot, pyjson.Member{Key: fmt.Sprint(w.n), Value: []any{w.name, w.begin, w.end}})
	}
	lists := func(l []listed) pyjson.Object {
		o := pyjson.Object{}
		for _, e := range l {
			c := child(&o, fmt.Sprint(e.se))
			*c = append(*c, pyjson.Member{Key: "", Value: []any{e.name, e.begin, e.end}})
		}
		// turn the helper objects into lists
		out := pyjson.Object{}
		for _, m := range o {
			var list []any
			for _, e := range *m.Value.(*pyjson.Object) {
				list = append(list, e.Value)
			}
			out = append(out, pyjson.Member{Key: m.Key, Value: list})
		}
		return out
	}
	gfxv := "vega"
	if gfxip > 9 {
		gfxv = "navi"
	}
	want["filenames.json"] = pyjson.Marshal(pyjson.Object{
		{Key: "global_begin_time", Value: 0}, {Key: "gfxv", Value: gfxv}, {Key: "gfxip", Value: gfxip},
		{Key: "version", Value: "3.1.0"}, {Key: "counter_names", Value: []any{}},
		{Key: "wave_filenames", Value: waveTree}, {Key: "other_simd_filenames", Value: lists(otherList)},
		{Key: "shaderdata_filenames", Value: lists(sdList)}})

	// occupancy.json (§5.4).
	var ids []wire.PC
	id := func(p wire.PC) int {
		for i, q := range ids {
			if q == p {
				return i
			}
		}
		ids = append(ids, p)
		return len(ids) - 1
	}
	id(wire.PC{})
	name := func(p wire.PC) string {
		n := ""
		for _, k := range ix.Kernels {
			if k.Address == p.Address && k.CodeObj == p.CodeObjectID {
				n = k.Name
				if n == "" {
					n = k.Demangled
				}
			}
		}
		if n == "" {
			n = fmt.Sprintf("%d / 0x%x", p.CodeObjectID, p.Address)
		}
		return n
	}
	b2i := func(b bool) int {
		if b {
			return 1
		}
		return 0
	}
	occRows := map[int][]any{}
	for _, se := range ses {
		occRows[se] = []any{}
		for _, o := range occ[se] {
			occRows[se] = append(occRows[se], []any{o.Time, o.CU, o.SIMD, o.WaveID, b2i(o.Start), id(o.PC),
				o.MEID, o.PipeID, b2i(o.IsExt), o.WorkgroupID, o.ClusterID})
		}
	}
	events := pyjson.Object{}
	for _, se := range ses {
		type item struct {
			t int64
			o pyjson.Object
		}
		var items []item
		for _, d := range disp[se] {
			items = append(items, item{d.Time, pyjson.Object{
				{Key: "kind", Value: "dispatch"}, {Key: "time", Value: d.Time}, {Key: "me_id", Value: d.MEID},
				{Key: "pipe_id", Value: d.PipeID}, {Key: "kernel_id", Value: id(d.EntryPoint)},
				{Key: "kernel_name", Value: name(d.EntryPoint)},
				{Key: "entry_point", Value: pyjson.Object{{Key: "address", Value: d.EntryPoint.Address},
					{Key: "code_object_id", Value: d.EntryPoint.CodeObjectID}}},
				{Key: "user_sgprs", Value: d.UserSGPRs}, {Key: "vgprs", Value: d.VGPRs}, {Key: "sgprs", Value: d.SGPRs},
				{Key: "lds_size", Value: d.LDSSize}, {Key: "thread_dim_x", Value: d.ThreadDim[0]},
				{Key: "thread_dim_y", Value: d.ThreadDim[1]}, {Key: "thread_dim_z", Value: d.ThreadDim[2]},
				{Key: "dispatch_pkt_addr", Value: d.DispatchPktAddr}, {Key: "byte_offset", Value: d.ByteOffset},
				{Key: "flags", Value: d.Flags}}})
		}
		for _, e := range evs[se] {
			o := pyjson.Object{{Key: "kind", Value: "event"}, {Key: "time", Value: e.Time}, {Key: "type", Value: int32(e.Type)},
				{Key: "me_id", Value: e.MEID}, {Key: "pipe_id", Value: e.PipeID}, {Key: "flags", Value: e.Flags},
				{Key: "payload", Value: e.Payload}, {Key: "byte_offset", Value: e.ByteOffset}}
			if e.Type == 7 || e.Type == 8 {
				o = append(o, pyjson.Member{Key: "code_object_id", Value: e.Payload})
			}
			if e.Type == 14 {
				o = append(o, pyjson.Member{Key: "cluster_id", Value: int32(uint32(e.Payload))},
					pyjson.Member{Key: "barrier_id", Value: int32(uint32(e.Payload >> 32))})
			}
			items = append(items, item{e.Time, o})
		}
		sort.SliceStable(items, func(i, j int) bool { return items[i].t < items[j].t })
		list := []any{}
		for _, it := range items {
			list = append(list, it.o)
		}
		events = append(events, pyjson.Member{Key: fmt.Sprint(se), Value: list})
	}
	names := pyjson.Object{}
	for i, p := range ids {
		names = append(names, pyjson.Member{Key: fmt.Sprint(i), Value: name(p)})
	}
	doc := pyjson.Object{
		{Key: "occupancy_fields", Value: []any{"time", "cu", "simd", "wave_id", "start", "kernel_id",
			"me_id", "pipe_id", "is_ext", "workgroup_id", "cluster_id"}},
		{Key: "events", Value: events}, {Key: "dispatches", Value: names}, {Key: "version", Value: "3.1.0"}}
	for _, se := range ses {
		doc = append(doc, pyjson.Member{Key: fmt.Sprint(se), Value: occRows[se]})
	}
	want["occupancy.json"] = pyjson.Marshal(doc)

	if anyRT {
		doc := pyjson.Object{{Key: "metadata", Value: pyjson.Object{
			{Key: "descriptor", Value: "[gfx_clock, realtime_clock]"}, {Key: "frequency", Value: freq}}}}
		for _, se := range ses {
			list := []any{}
			for _, r := range rts[se] {
				list = append(list, []any{r.ShaderClock, r.RealtimeClock})
			}
			doc = append(doc, pyjson.Member{Key: fmt.Sprintf("SE%d", se), Value: list})
		}
		want["realtime.json"] = pyjson.Marshal(doc)
	}

	// Compare: every derived file, and no other file besides code.json and
	// snapshots.
	for name, w := range want {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("reference: %v", err)
			continue
		}
		if !bytes.Equal(got, w) {
			t.Errorf("reference: %s differs:\n%s", name, testutil.FirstDiff(got, w))
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if _, ok := want[e.Name()]; !ok && e.Name() != "code.json" && e.Name() != "snapshots.json" && e.Name() != publish.ManifestName {
			t.Errorf("reference: unexpected file %s", e.Name())
		}
	}
	if len(written) == 0 || len(occRows) == 0 {
		t.Errorf("reference: the run has no waves or no occupancy")
	}
}
