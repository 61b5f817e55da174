package wire

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/attkit/attkit/internal/testutil"
)

// sampleBatches holds one batch of every record type, unknown included,
// with values that exercise every encoding width and sign.
func sampleBatches() []Batch {
	pc := PC{Address: 0x1600, CodeObjectID: 2}
	occ := Occupancy{PC: pc, Time: 5000, CU: 1, SIMD: 0, WaveID: 3, Start: true, MEID: 1, PipeID: 2,
		IsExt: true, WorkgroupID: 5, ClusterID: 3, ReservedBits: 7}
	occEnd := occ
	occEnd.Start, occEnd.Time, occEnd.ReservedBits = false, 9100, 0
	return []Batch{
		{Type: TypeGFXIP, GFXIP: 9},
		{Type: TypeEvent, Events: []Event{{Size: 40, Time: 4700, Type: EventCodeObjectLoad, MEID: 1, Flags: 1, Payload: 2, ByteOffset: 96},
			{Size: 40, Time: 4750, Type: EventClusterBarrier, Payload: uint64(0xfffffffe)<<32 | 3}, {Size: 40, Type: 99}}},
		{Type: TypeDispatch, Dispatches: []Dispatch{{Size: 80, Time: 4800, MEID: 1, UserSGPRs: 8, Flags: 17, VGPRs: 32, SGPRs: 16,
			ThreadDim: [3]uint32{64, 1, 1}, DispatchPktAddr: 140737353990144, ByteOffset: 96, EntryPoint: pc}}},
		{Type: TypeInfo, Info: []Info{InfoWaveIncomplete}},
		{Type: TypeWave, Waves: []Wave{{CU: 1, SIMD: 0, WaveID: 3, Contexts: 1, Dispatcher: 0x12, WorkgroupID: 5, ClusterID: 3,
			Reserved: 9, Size: 64, BeginTime: 5000, EndTime: 9104,
			Timeline: []WaveState{{StateIdle, 100}, {StateExec, 3000}, {StateStall, 1004}, {WaveStateType(7), -1}},
			Instructions: []Instruction{
				{Category: CatSMEM, Stall: 0, Duration: 8, Time: 5100, PC: pc},
				{Category: CatVALU, Stall: 0xffffff, Duration: -3, Time: 1 << 40, PC: PC{Address: 1 << 63, CodeObjectID: 0}},
				{Category: CatUnresolved},
			}}}},
		{Type: TypeOccupancy, Occupancy: []Occupancy{occ, occEnd}},
		{Type: TypeRealtime, Realtime: []Realtime{{ShaderClock: -5, RealtimeClock: 1 << 33, Reserved: 1}}},
		{Type: TypeShaderData, ShaderData: []ShaderData{{Time: 5100, Value: 0xdeadbeef, CU: 1, SIMD: 2, WaveID: 3, Flags: 1 << ShaderDataIMM, Reserved: 4}}},
		{Type: TypeMarker, Markers: []Marker{
			{Size: 104, ShaderData: ShaderData{Time: 6, Value: 30, Flags: 1}, KernelEntry: pc, CodeObjectID: 2,
				Name: "scope \"a\"\n\u00e9", SourceLocation: "k.cl:3", MarkerID: 7, RecordKind: 1, MarkerKind: 2,
				MarkerFlags: 6, PayloadIndex: 0, PayloadCount: 1, Delay: -1, Reserved: 2},
			{Size: 104, NameNull: true, SourceNull: true, PayloadIndex: 0xffffffff, MarkerKind: 9}}},
		{Type: TypeInstOtherSIMD, OtherSIMD: []OtherSIMD{{Size: 24, Time: 7000, Cycles: 16, WGP: 2, Category: CatVMEM}}},
		{Type: TypeRTFrequency, RTFrequency: 100000000},
		{Type: TypePerfEvent, PerfEvents: []PerfEvent{{Time: 8000, Events: [4]uint16{1, 2, 3, 65535}, CU: 1, Bank: 1}}},
		{Type: RecordType(12), Raw: Raw{Count: 2, ElemSize: 4, Data: []byte{1, 2, 3, 4, 5, 6, 7, 8}}},
	}
}

func sampleHeader() Header {
	return Header{Producer: "att-decode test", Backend: "native", BackendVersion: "1",
		Trace: Trace{Path: "/t/1_2_shader_engine_0_1.att", SE: 0, Run: 1, GFXIP: 9}}
}

func encodeStream(t testing.TB, h Header, batches []Batch) []byte {
	var buf bytes.Buffer
	if err := WriteStream(&buf, &h, batches...); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// normalise makes nil and empty slices compare equal.
func normalise(b Batch) Batch {
	v := reflect.ValueOf(&b).Elem()
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		if f.Kind() == reflect.Slice && f.Len() == 0 && f.CanSet() {
			f.Set(reflect.Zero(f.Type()))
		}
	}
	if len(b.Raw.Data) == 0 {
		b.Raw.Data = nil
	}
	for i := range b.Waves {
		if len(b.Waves[i].Timeline) == 0 {
			b.Waves[i].Timeline = nil
		}
		if len(b.Waves[i].Instructions) == 0 {
			b.Waves[i].Instructions = nil
		}
	}
	return b
}

type part struct {
	h       Header
	batches []Batch
}

func readAll(t testing.TB, data []byte) ([]part, error) {
	rd := NewReader(bytes.NewReader(data), "test")
	var parts []part
	for rd.Scan() {
		switch rd.Kind() {
		case KindHeader:
			parts = append(parts, part{h: *rd.Header()})
		case KindBatch:
			p := &parts[len(parts)-1]
			p.batches = append(p.batches, rd.Batch().Clone())
		}
	}
	return parts, rd.Err()
}

func TestRecordRoundTrip(t *testing.T) {
	h := sampleHeader()
	in := sampleBatches()
	data := encodeStream(t, h, in)
	parts, err := readAll(t, data)
	if err != nil {
		t.Fatal(err)
	}
	if len(parts) != 1 {
		t.Fatalf("%d parts, want 1", len(parts))
	}
	h.Format, h.Major = RecordsFormat, RecordsMajor
	if parts[0].h != h {
		t.Errorf("header %+v, want %+v", parts[0].h, h)
	}
	if len(parts[0].batches) != len(in) {
		t.Fatalf("%d batches, want %d", len(parts[0].batches), len(in))
	}
	for i := range in {
		got, want := normalise(parts[0].batches[i]), normalise(in[i])
		if !reflect.DeepEqual(got, want) {
			t.Errorf("batch %d (%v):\n got %+v\nwant %+v", i, in[i].Type, got, want)
		}
	}
	// Writing what was read gives the same bytes.
	if again := encodeStream(t, parts[0].h, parts[0].batches); !bytes.Equal(again, data) {
		t.Error("re-encoding differs")
	}
}

// TestLargeBatches checks that batches much larger than the Writer's spill
// size are written in pieces with exactly AppendBatch's bytes, read back
// whole, and that a write error in the middle of one is returned.
func TestLargeBatches(t *testing.T) {
	var big []Batch
	for _, b := range sampleBatches() {
		if b.Len() == 0 || b.Type == TypeRTFrequency || b.Type == TypeGFXIP || !b.Type.Known() {
			continue
		}
		g := b
		for len(AppendBatch(nil, &g)) < 3*writeSize { // doubles the records
			g.Info = append(g.Info[:len(g.Info):len(g.Info)], g.Info...)
			g.Occupancy = append(g.Occupancy[:len(g.Occupancy):len(g.Occupancy)], g.Occupancy...)
			g.PerfEvents = append(g.PerfEvents[:len(g.PerfEvents):len(g.PerfEvents)], g.PerfEvents...)
			g.Waves = append(g.Waves[:len(g.Waves):len(g.Waves)], g.Waves...)
			g.Events = append(g.Events[:len(g.Events):len(g.Events)], g.Events...)
			g.ShaderData = append(g.ShaderData[:len(g.ShaderData):len(g.ShaderData)], g.ShaderData...)
			g.Realtime = append(g.Realtime[:len(g.Realtime):len(g.Realtime)], g.Realtime...)
			g.OtherSIMD = append(g.OtherSIMD[:len(g.OtherSIMD):len(g.OtherSIMD)], g.OtherSIMD...)
			g.Dispatches = append(g.Dispatches[:len(g.Dispatches):len(g.Dispatches)], g.Dispatches...)
			g.Markers = append(g.Markers[:len(g.Markers):len(g.Markers)], g.Markers...)
		}
		big = append(big, g)
	}
	if len(big) != 10 {
		t.Fatalf("%d large batches, want one of each of the 10 record-array types", len(big))
	}
	for i := range big {
		var buf bytes.Buffer
		w := NewWriter(&buf)
		if err := w.WriteBatch(&big[i]); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		want := AppendBatch(nil, &big[i])
		if len(want) < 3*writeSize {
			t.Fatalf("%v: only %d bytes, not large", big[i].Type, len(want))
		}
		if !bytes.Equal(buf.Bytes(), want) {
			t.Errorf("%v: WriteBatch wrote %d bytes that differ from AppendBatch's %d", big[i].Type, buf.Len(), len(want))
		}
	}
	data := encodeStream(t, sampleHeader(), big)
	parts, err := readAll(t, data)
	if err != nil {
		t.Fatal(err)
	}
	for i := range big {
		if got, want := normalise(parts[0].batches[i]), normalise(big[i]); !reflect.DeepEqual(got, want) {
			t.Errorf("%v: read back differs", big[i].Type)
		}
	}
	// A write error while a batch is spilled is returned by WriteBatch.
	boom := errors.New("disk full")
	w := NewWriter(&failAfter{n: writeSize, err: boom})
	if err := w.WriteBatch(&big[0]); !errors.Is(err, boom) {
		t.Errorf("write error: got %v", err)
	}
}

// failAfter accepts n bytes, then fails every write.
type failAfter struct {
	n   int
	err error
}

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		n := f.n
		f.n = 0
		return n, f.err
	}
	f.n -= len(p)
	return len(p), nil
}

func TestConcatenatedStreams(t *testing.T) {
	h0, h1 := sampleHeader(), sampleHeader()
	h1.Trace.SE = 1
	b := sampleBatches()
	data := append(encodeStream(t, h0, b[:3]), encodeStream(t, h1, b[3:])...)
	parts, err := readAll(t, data)
	if err != nil {
		t.Fatal(err)
	}
	if len(parts) != 2 || parts[0].h.Trace.SE != 0 || parts[1].h.Trace.SE != 1 ||
		len(parts[0].batches) != 3 || len(parts[1].batches) != len(b)-3 {
		t.Fatalf("parts: %d, %+v", len(parts), parts)
	}
}

func TestReaderErrors(t *testing.T) {
	data := encodeStream(t, sampleHeader(), sampleBatches())
	// Every strict prefix is an error with an offset, never a panic.
	hdrLen := len(encodeStream(t, sampleHeader(), nil))
	for n := 0; n < len(data); n++ {
		_, err := readAll(t, data[:n])
		if n == hdrLen {
			if err != nil {
				t.Errorf("prefix %d (header only): %v", n, err)
			}
			continue
		}
		var ok bool
		if n == 0 {
			var fe *FormatError
			ok = errors.As(err, &fe) && strings.Contains(err.Error(), "empty stream")
		} else if isBatchBoundary(t, data, n) {
			ok = err == nil
		} else {
			var fe *FormatError
			ok = errors.As(err, &fe) && fe.Offset <= int64(n)
		}
		if !ok {
			t.Fatalf("prefix %d: err = %v", n, err)
		}
	}

	other := encodeStream(t, Header{Format: "something-else", Major: 1}, nil)
	newer := encodeStream(t, Header{Major: 2}, nil)
	for _, tc := range []struct {
		name, in, want string
		code           int
	}{
		{"garbage", "hello world", "not an attkit-records stream", 3},
		{"other format", string(other), `found format "something-else"`, 3},
		{"newer major", string(newer), "unsupported attkit-records major version 2 (this build reads version 1)", 3},
		{"json, not records", `{"code":[]}`, "not an attkit-records stream", 3},
		{"truncated header", string(other[:5]), "offset 2: unexpected end of stream", 1},
	} {
		_, err := readAll(t, []byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) || codeOf(err) != tc.code {
			t.Errorf("%s: err = %v (code %d), want %q code %d", tc.name, err, codeOf(err), tc.want, tc.code)
		}
	}
	// A read error is reported as such.
	rd := NewReader(io.MultiReader(bytes.NewReader(data[:20]), errReader{}), "x")
	for rd.Scan() {
	}
	if rd.Err() == nil || !strings.Contains(rd.Err().Error(), "disk on fire") {
		t.Errorf("read error: %v", rd.Err())
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }

// isBatchBoundary reports whether data[:n] ends exactly after a batch.
func isBatchBoundary(t testing.TB, data []byte, n int) bool {
	rd := NewReader(bytes.NewReader(data), "x")
	for rd.Scan() {
		if rd.Offset() == int64(n) {
			return true
		}
	}
	return false
}

func TestJSONProjectionGolden(t *testing.T) {
	h := sampleHeader()
	var jw JSONWriter
	var out []byte
	bs := sampleBatches()
	for i := range bs {
		out = jw.AppendBatch(out, &h, &bs[i])
	}
	testutil.Golden(t, "all-types.jsonl", out)
}

func FuzzReader(f *testing.F) {
	f.Add(encodeStream(f, sampleHeader(), sampleBatches()))
	b := sampleBatches()
	f.Add(encodeStream(f, sampleHeader(), b[4:5]))
	f.Add([]byte{})
	if jsonl, err := os.ReadFile(filepath.Join("testdata", "all-types.jsonl")); err == nil {
		f.Add(jsonl) // the JSON projection
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rd := NewReader(bytes.NewReader(data), "fuzz")
		n := 0
		for rd.Scan() {
			if rd.Kind() == KindBatch {
				var jw JSONWriter
				jw.AppendBatch(nil, rd.Header(), rd.Batch())
				AppendBatch(nil, rd.Batch())
			}
			n++
		}
		_ = rd.Err()
		roundTrip(t, data)
		// Cut into pieces of 3, the same records (those of a batch that
		// fails part-way may come before the error) and the same error.
		whole, _, werr := recordsRead(t, data, 0)
		cut, _, cerr := recordsRead(t, data, 3)
		if (werr == nil) != (cerr == nil) {
			t.Fatalf("error whole %v, in pieces %v", werr, cerr)
		}
		if werr == nil && !slices.Equal(whole, cut) || len(cut) < len(whole) || !slices.Equal(cut[:len(whole)], whole) {
			t.Fatalf("records in pieces of 3 differ from the whole batches'")
		}
	})
}

func FuzzReadIndex(f *testing.F) {
	var buf bytes.Buffer
	WriteIndex(&buf, workedExample())
	f.Add(buf.Bytes())
	f.Add(workedExample().CodeJSON())
	inl := workedExample()
	inl.Rows[1].Inline = []InlineFrame{{"mix", "h.h", 3}, {"mykernel", "k.cl", 9}}
	buf.Reset()
	WriteIndex(&buf, inl)
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		ix, err := ReadIndex(bytes.NewReader(data), "fuzz")
		if err != nil {
			return
		}
		_ = ix.CodeJSON()
		var out bytes.Buffer
		if err := WriteIndex(&out, ix); err != nil {
			t.Fatal(err)
		}
		// read -> write -> read gives an equal index, and writing that
		// gives the same bytes again.
		ix2, err := ReadIndex(bytes.NewReader(out.Bytes()), "rewritten")
		if err != nil {
			t.Fatalf("the rewritten index does not read: %v", err)
		}
		// The writer fills in the header's format and versions, and a
		// read's count of skipped malformed rows is not part of the index.
		a := normaliseIndex(ix)
		a.Header.Format, a.Header.Major, a.Header.Minor, a.Skipped = ix2.Header.Format, ix2.Header.Major, ix2.Header.Minor, ix2.Skipped
		if !reflect.DeepEqual(a, normaliseIndex(ix2)) {
			t.Fatalf("index read back differs:\n%+v\n%+v", ix, ix2)
		}
		var out2 bytes.Buffer
		if err := WriteIndex(&out2, ix2); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out.Bytes(), out2.Bytes()) {
			t.Fatalf("an index written, read and written again is not byte-identical")
		}
	})
}

// normaliseIndex makes nil and empty slices and maps of ix compare equal.
func normaliseIndex(ix *Index) *Index {
	c := *ix
	v := reflect.ValueOf(&c).Elem()
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Struct:
			for i := 0; i < v.NumField(); i++ {
				if v.Field(i).CanSet() {
					walk(v.Field(i))
				}
			}
		case reflect.Pointer:
			if !v.IsNil() {
				n := reflect.New(v.Elem().Type())
				n.Elem().Set(v.Elem())
				walk(n.Elem())
				v.Set(n)
			}
		case reflect.Slice:
			if v.Len() == 0 {
				v.Set(reflect.Zero(v.Type()))
				return
			}
			n := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
			reflect.Copy(n, v)
			for i := 0; i < n.Len(); i++ {
				walk(n.Index(i))
			}
			v.Set(n)
		case reflect.Map:
			if v.Len() == 0 {
				v.Set(reflect.Zero(v.Type()))
			}
		}
	}
	walk(v)
	return &c
}

// roundTrip: a stream that reads without error writes (header by header,
// batch by batch) to bytes that read to the same records, and those bytes,
// the writer's, are a fixed point: read and written again they are
// byte-identical (docs/wire.md §1, "Payloads"). The input itself may use
// wider integer encodings than the writer's, so it need not be.
func roundTrip(t *testing.T, data []byte) {
	parts, err := readAll(t, data)
	if err != nil {
		return
	}
	out := writeParts(t, parts)
	parts2, err := readAll(t, out)
	if err != nil {
		t.Fatalf("the rewritten stream does not read: %v", err)
	}
	if len(parts2) != len(parts) {
		t.Fatalf("%d parts read back, want %d", len(parts2), len(parts))
	}
	for i := range parts {
		h, h2 := parts[i].h, parts2[i].h
		h.Format, h.Major, h.Minor = h2.Format, h2.Major, h2.Minor // the writer fills these in
		if h != h2 {
			t.Fatalf("part %d: header %+v read back as %+v", i, parts[i].h, parts2[i].h)
		}
		if len(parts2[i].batches) != len(parts[i].batches) {
			t.Fatalf("part %d: %d batches read back, want %d", i, len(parts2[i].batches), len(parts[i].batches))
		}
		for j := range parts[i].batches {
			if a, b := normalise(parts[i].batches[j]), normalise(parts2[i].batches[j]); !reflect.DeepEqual(a, b) {
				t.Fatalf("part %d batch %d: read back differs:\n%+v\n%+v", i, j, a, b)
			}
		}
	}
	if out2 := writeParts(t, parts2); !bytes.Equal(out, out2) {
		t.Fatalf("a stream written, read and written again is not byte-identical")
	}
}

func writeParts(t *testing.T, parts []part) []byte {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for i := range parts {
		if err := w.WriteHeader(&parts[i].h); err != nil {
			t.Fatal(err)
		}
		for j := range parts[i].batches {
			if err := w.WriteBatch(&parts[i].batches[j]); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestBatchClone: a clone equals its batch (empty slices as nil) and
// shares no memory with it: overwriting every element of the batch leaves
// the clone as it was.
func TestBatchClone(t *testing.T) {
	fresh := sampleBatches() // independent of bs: the same values, no memory shared
	for i, b := range sampleBatches() {
		c := b.Clone()
		if !reflect.DeepEqual(normalise(b), normalise(c)) {
			t.Errorf("%v: clone differs:\n%+v\n%+v", b.Type, b, c)
		}
		scribble(reflect.ValueOf(&b).Elem())
		if reflect.DeepEqual(normalise(b), normalise(fresh[i])) && b.Len() > 0 && b.Type != TypeGFXIP {
			t.Fatalf("%v: scribble changed nothing", b.Type)
		}
		if !reflect.DeepEqual(c, fresh[i].Clone()) {
			t.Errorf("%v: overwriting the batch changed its clone", b.Type)
		}
	}
	empty := Batch{Type: TypeWave, Waves: []Wave{{Timeline: []WaveState{}}}, Info: []Info{}}
	if c := empty.Clone(); c.Info != nil || c.Waves[0].Timeline != nil {
		t.Errorf("empty slices not nil in the clone: %+v", c)
	}
}

// scribble overwrites every element of every slice reachable from v.
func scribble(v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Field(i).CanSet() {
				scribble(v.Field(i))
			}
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			scribble(v.Index(i))
		}
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(^v.Uint())
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Int:
		v.SetInt(^v.Int())
	case reflect.String:
		v.SetString(v.String() + "x")
	case reflect.Bool:
		v.SetBool(!v.Bool())
	}
}

// TestBatchKeep: Keep drops the records marked false and keeps the others
// in order; a single-value batch is dropped whole and then Empty.
func TestBatchKeep(t *testing.T) {
	for _, b := range sampleBatches() {
		n := b.Len()
		if !b.Type.Known() {
			n = 1
		}
		want := b.Clone()
		keep := make([]bool, n)
		for i := range keep {
			keep[i] = i%2 == 1
		}
		b.Keep(keep)
		switch {
		case !b.Type.Known(), b.Type == TypeGFXIP, b.Type == TypeRTFrequency:
			if !b.Empty() {
				t.Errorf("%v: dropped single-value batch not empty", b.Type)
			}
			continue
		}
		var got, exp []string
		for i := 0; i < b.Len(); i++ {
			got = append(got, string(projectRecord(&b, i)))
		}
		for i := 1; i < n; i += 2 {
			exp = append(exp, string(projectRecord(&want, i)))
		}
		if !reflect.DeepEqual(got, exp) {
			t.Errorf("%v: kept %q, want %q", b.Type, got, exp)
		}
		if b.Empty() != (len(exp) == 0) {
			t.Errorf("%v: Empty() = %v with %d records", b.Type, b.Empty(), len(exp))
		}
	}
	g := Batch{Type: TypeGFXIP, GFXIP: 9}
	if g.Keep([]bool{true}); g.Empty() || g.GFXIP != 9 {
		t.Errorf("kept gfxip batch: %+v", g)
	}
}

// projectRecord is the JSON projection of record i of b, for
// comparisons.
func projectRecord(b *Batch, i int) []byte {
	var j JSONWriter
	h := sampleHeader()
	return j.AppendRecord(nil, &h, b, i)
}

// records lists every record a Reader with SetMaxBatch(n) returns, as
// "type: JSON projection" lines, with the size of each batch returned.
func recordsRead(t testing.TB, data []byte, n int) (recs []string, sizes []int, err error) {
	rd := NewReader(bytes.NewReader(data), "test")
	rd.SetMaxBatch(n)
	for rd.Scan() {
		if rd.Kind() != KindBatch {
			recs = append(recs, fmt.Sprintf("header %+v", *rd.Header()))
			continue
		}
		b := rd.Batch()
		if !b.Type.Known() {
			sizes = append(sizes, -b.Len()) // not cut: told apart
		} else {
			sizes = append(sizes, b.Len())
		}
		for i := 0; i < b.Len(); i++ {
			recs = append(recs, fmt.Sprintf("%v: %s", b.Type, projectRecord(b, i)))
		}
	}
	return recs, sizes, rd.Err()
}

// TestMaxBatch checks that SetMaxBatch cuts every batch of more than n
// records into ceil(len/n) pieces of at most n, in order, so that the
// records read are the same as without it; and that a batch cut short by
// the end of the input is still an error.
func TestMaxBatch(t *testing.T) {
	in := sampleBatches()
	for i := range in { // 7 records in every record-array batch
		b := &in[i]
		for k := 1; k < 7 && b.Type.Known() && b.Type != TypeGFXIP && b.Type != TypeRTFrequency; k++ {
			switch b.Type {
			case TypeInfo:
				b.Info = append(b.Info, Info(k))
			case TypeOccupancy:
				b.Occupancy = append(b.Occupancy, Occupancy{Time: uint64(k)})
			case TypePerfEvent:
				b.PerfEvents = append(b.PerfEvents, PerfEvent{Time: int64(k)})
			case TypeWave:
				b.Waves = append(b.Waves, Wave{BeginTime: int64(k), Instructions: []Instruction{{Time: int64(k)}}})
			case TypeEvent:
				b.Events = append(b.Events, Event{Time: int64(k)})
			case TypeShaderData:
				b.ShaderData = append(b.ShaderData, ShaderData{Time: int64(k)})
			case TypeRealtime:
				b.Realtime = append(b.Realtime, Realtime{ShaderClock: int64(k)})
			case TypeInstOtherSIMD:
				b.OtherSIMD = append(b.OtherSIMD, OtherSIMD{Time: int64(k)})
			case TypeDispatch:
				b.Dispatches = append(b.Dispatches, Dispatch{Time: int64(k)})
			case TypeMarker:
				b.Markers = append(b.Markers, Marker{MarkerID: uint32(k)})
			}
		}
	}
	data := encodeStream(t, sampleHeader(), in)
	// Twice, to check that Reset keeps the bound and a cut batch's rest
	// does not carry over.
	data = append(data, data...)
	whole, wholeSizes, err := recordsRead(t, data, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(wholeSizes) != 2*len(in) {
		t.Fatalf("%d batches read whole, want %d", len(wholeSizes), 2*len(in))
	}
	for _, n := range []int{1, 2, 3, 6, 7, 8} {
		got, sizes, err := recordsRead(t, data, n)
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		if !slices.Equal(got, whole) {
			t.Errorf("n=%d: records differ from the whole batches':\n%s", n, testutil.FirstDiff([]byte(strings.Join(got, "\n")), []byte(strings.Join(whole, "\n"))))
		}
		var want []int
		for _, s := range wholeSizes {
			if s <= n { // an unknown type's batch (s < 0) included
				want = append(want, s)
				continue
			}
			for left := s; left > 0; left -= n {
				want = append(want, min(left, n))
			}
		}
		if !slices.Equal(sizes, want) {
			t.Errorf("n=%d: batch sizes %v, want %v", n, sizes, want)
		}
	}
	// Truncated inside the rest of a cut batch: an error, not a short batch
	// taken for the end.
	cut := encodeStream(t, sampleHeader(), in[4:5]) // the 7 waves
	cut = cut[:len(cut)-3]
	if _, _, err := recordsRead(t, cut, 2); err == nil {
		t.Error("truncated stream read with SetMaxBatch(2): no error")
	}
}
