//go:build cgo

package cdec

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/attkit/attkit/internal/backend"
	"github.com/attkit/attkit/internal/exitcode"
	"github.com/attkit/attkit/internal/wire"
)

// buildFixture compiles testdata/fixture.c, the test-fixture library that
// stands in for librocprof-trace-decoder, with go env CC and puts it at
// dir/name. Each variant (set of -D flags) is compiled once per test binary
// and copied, so every test loads its own instance.
func buildFixture(t testing.TB, dir, name string, defines ...string) string {
	t.Helper()
	key := strings.Join(defines, " ")
	fixtureMu.Lock()
	built, ok := fixtureBuilt[key]
	if !ok {
		var err error
		built, err = compileFixture(defines)
		if err != nil {
			fixtureMu.Unlock()
			t.Fatal(err)
		}
		fixtureBuilt[key] = built
	}
	fixtureMu.Unlock()
	data, err := os.ReadFile(built)
	if err != nil {
		t.Fatal(err)
	}
	lib := filepath.Join(dir, name)
	if err := os.WriteFile(lib, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return lib
}

var (
	fixtureMu    sync.Mutex
	fixtureBuilt = map[string]string{}
	fixtureDir   string // removed by TestMain
)

func compileFixture(defines []string) (string, error) {
	out, err := exec.Command("go", "env", "CC").Output()
	if err != nil {
		return "", fmt.Errorf("go env CC: %v", err)
	}
	cc := strings.Fields(string(out))
	if len(cc) == 0 {
		return "", errors.New("go env CC is empty: a C compiler is needed to build the test fixture library")
	}
	if _, err := exec.LookPath(cc[0]); err != nil {
		return "", fmt.Errorf("C compiler %q (go env CC) not found: it is needed to build the test fixture library: %v", cc[0], err)
	}
	lib := filepath.Join(fixtureDir, fmt.Sprintf("fixture%d.so", len(fixtureBuilt)))
	args := append(cc[1:len(cc):len(cc)], "-shared", "-fPIC", "-fvisibility=hidden", "-O1", "-Wall", "-Werror")
	args = append(args, defines...)
	args = append(args, "-o", lib, filepath.Join("testdata", "fixture.c"), "-lpthread")
	if msg, err := exec.Command(cc[0], args...).CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the fixture library: %v\n%s", err, msg)
	}
	return lib, nil
}

// loadFixture builds a fixture variant and loads it.
func loadFixture(t testing.TB, defines ...string) *Decoder {
	t.Helper()
	lib := buildFixture(t, t.TempDir(), "fixture.so", defines...)
	d, err := Load(lib)
	if err != nil {
		t.Fatalf("Load(%s): %v", lib, err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// pat is the fixture's pattern byte i of record k.
func pat(seed, k, i uint64) byte { return byte(seed*131 + k*29 + i*7 + 1) }

func image(n int, seed, k uint64) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = pat(seed, k, uint64(i))
	}
	return b
}

var le = binary.LittleEndian

func u64(b []byte, off int) uint64 { return le.Uint64(b[off:]) }
func i64(b []byte, off int) int64  { return int64(le.Uint64(b[off:])) }
func u32(b []byte, off int) uint32 { return le.Uint32(b[off:]) }
func i32(b []byte, off int) int32  { return int32(le.Uint32(b[off:])) }
func u16(b []byte, off int) uint16 { return le.Uint16(b[off:]) }
func pcAt(b []byte, off int) wire.PC {
	return wire.PC{Address: u64(b, off), CodeObjectID: u64(b, off+8)}
}

func sdAt(b []byte, off int) wire.ShaderData {
	return wire.ShaderData{Time: i64(b, off), Value: u64(b, off+8), CU: b[off+16], SIMD: b[off+17],
		WaveID: b[off+18], Flags: b[off+19], Reserved: u32(b, off+20)}
}

// expect builds the batch the fixture's "rec T COUNT SEED [SZ]" must turn
// into, decoding the pattern bytes at the offsets of sqtt-format.md §4.5.
func expect(typ wire.RecordType, count int, seed uint64, sz int) wire.Batch {
	b := wire.Batch{Type: typ}
	natural := map[wire.RecordType]int{1: 32, 2: 24, 3: 64, 4: 4, 5: 40, 6: 24, 7: 24, 8: 8, 9: 24, 10: 80, 11: 104}[typ]
	if sz == 0 {
		sz = natural
	}
	for k := range count {
		r := image(sz, seed, uint64(k))
		switch typ {
		case wire.TypeEvent, wire.TypeInstOtherSIMD, wire.TypeDispatch, wire.TypeMarker:
			le.PutUint64(r, uint64(sz))
		}
		switch typ {
		case wire.TypeOccupancy:
			o := wire.Occupancy{PC: pcAt(r, 0), Time: u64(r, 16), Reserved: r[24], CU: r[25], SIMD: r[26], WaveID: r[27]}
			o.SetWord(u32(r, 28))
			b.Occupancy = append(b.Occupancy, o)
		case wire.TypePerfEvent:
			b.PerfEvents = append(b.PerfEvents, wire.PerfEvent{Time: i64(r, 0),
				Events: [4]uint16{u16(r, 8), u16(r, 10), u16(r, 12), u16(r, 14)}, CU: r[16], Bank: r[17]})
		case wire.TypeWave:
			w := wire.Wave{CU: r[0], SIMD: r[1], WaveID: r[2], Contexts: r[3], Dispatcher: r[4],
				WorkgroupID: r[5], ClusterID: r[6], Reserved: r[7], Size: u64(r, 8),
				BeginTime: i64(r, 16), EndTime: i64(r, 24)}
			for j := range 3 + k {
				s := image(8, seed+1, uint64(j))
				w.Timeline = append(w.Timeline, wire.WaveState{Type: wire.WaveStateType(i32(s, 0)), Duration: i32(s, 4)})
			}
			for j := range 5 + k {
				s := image(32, seed+2, uint64(j))
				word := u32(s, 0)
				w.Instructions = append(w.Instructions, wire.Instruction{Category: wire.InstCategory(word),
					Stall: word >> 8, Duration: i32(s, 4), Time: i64(s, 8), PC: pcAt(s, 16)})
			}
			b.Waves = append(b.Waves, w)
		case wire.TypeInfo:
			b.Info = append(b.Info, wire.Info(u32(r, 0)))
		case wire.TypeEvent:
			b.Events = append(b.Events, wire.Event{Size: u64(r, 0), Time: i64(r, 8), Type: wire.EventType(i32(r, 16)),
				MEID: r[20], PipeID: r[21], Flags: u16(r, 22), Payload: u64(r, 24), ByteOffset: u64(r, 32)})
		case wire.TypeShaderData:
			b.ShaderData = append(b.ShaderData, sdAt(r, 0))
		case wire.TypeRealtime:
			b.Realtime = append(b.Realtime, wire.Realtime{ShaderClock: i64(r, 0), RealtimeClock: u64(r, 8), Reserved: u64(r, 16)})
		case wire.TypeRTFrequency:
			b.RTFrequency = u64(r, 0)
		case wire.TypeInstOtherSIMD:
			b.OtherSIMD = append(b.OtherSIMD, wire.OtherSIMD{Size: u64(r, 0), Time: i64(r, 8), Cycles: u16(r, 16),
				WGP: r[18], Category: wire.InstCategory(r[19])})
		case wire.TypeDispatch:
			b.Dispatches = append(b.Dispatches, wire.Dispatch{Size: u64(r, 0), Time: i64(r, 8), MEID: r[16],
				PipeID: r[17], UserSGPRs: u16(r, 18), Flags: i32(r, 20), VGPRs: u32(r, 24), SGPRs: u32(r, 28),
				LDSSize: u32(r, 32), ThreadDim: [3]uint32{u32(r, 36), u32(r, 40), u32(r, 44)},
				DispatchPktAddr: u64(r, 48), ByteOffset: u64(r, 56), EntryPoint: pcAt(r, 64)})
		case wire.TypeMarker:
			m := wire.Marker{Size: u64(r, 0), ShaderData: sdAt(r, 8), KernelEntry: pcAt(r, 32),
				CodeObjectID: u64(r, 48), MarkerID: u32(r, 72), RecordKind: wire.MarkerRecordKind(u32(r, 76)),
				MarkerKind: wire.MarkerKind(u32(r, 80)), MarkerFlags: u32(r, 84), PayloadIndex: u32(r, 88),
				PayloadCount: u32(r, 92), Delay: i32(r, 96), Reserved: u32(r, 100)}
			if k%3 != 2 {
				m.Name = fmt.Sprintf("name-%d-%d", seed, k)
			} else {
				m.NameNull = true
			}
			if k%3 != 1 {
				m.SourceLocation = fmt.Sprintf("file%d.c:%d", seed, k)
			} else {
				m.SourceNull = true
			}
			b.Markers = append(b.Markers, m)
		}
	}
	return b
}

func expectRaw(typ wire.RecordType, count int, seed uint64, sz int) wire.Batch {
	b := wire.Batch{Type: typ, Raw: wire.Raw{Count: uint64(count)}}
	if sz == 0 {
		return b
	}
	b.Raw.ElemSize = uint64(sz)
	for k := range count {
		r := image(sz, seed, uint64(k))
		le.PutUint64(r, uint64(sz))
		b.Raw.Data = append(b.Raw.Data, r...)
	}
	return b
}

// collector gathers deep copies of the emitted batches.
type collector struct{ batches []wire.Batch }

func (c *collector) emit(b *wire.Batch) error {
	c.batches = append(c.batches, b.Clone())
	return nil
}

func compareBatches(t *testing.T, got, want []wire.Batch) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("got %d batches, want %d", len(got), len(want))
	}
	for i := range min(len(got), len(want)) {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("batch %d (%s):\n got %+v\nwant %+v", i, want[i].Type, got[i], want[i])
		}
	}
}

// bothAPIs runs f as two subtests: on the fixture with the V2 handle API
// and on its V1-only build (parse_data).
func bothAPIs(t *testing.T, f func(t *testing.T, d *Decoder)) {
	for _, v1 := range []bool{false, true} {
		t.Run(fmt.Sprintf("v1=%v", v1), func(t *testing.T) {
			var defines []string
			if v1 {
				defines = append(defines, "-DFIXTURE_V1_ONLY")
			}
			f(t, loadFixture(t, defines...))
		})
	}
}

// mapISA is a Provider over a map.
type mapISA map[wire.PC]struct {
	text string
	size uint64
}

func (m mapISA) ISA(pc wire.PC) (string, uint64, bool) {
	e, ok := m[pc]
	return e.text, e.size, ok
}

var noISA = mapISA{}

const everyRecord = `gfxip 9
rec 1 3 11
rec 2 2 12
rec 3 2 13
rec 4 3 14
rec 5 2 15
rec 6 4 16
rec 7 2 17
rec 8 1 18
rec 9 3 19
rec 10 2 20
rec 11 4 21
recsz 5 2 22 56
recsz 10 2 23 96
recsz 11 3 24 112
recsz 9 2 25 32
raw 200 3 26 24
raw 300 2 27 0
null 6 5
null 300 4
wavenull 7
threadrec 6 2 28
rec 6 0 29
`

func everyRecordWant() []wire.Batch {
	nullWave := image(64, 5, 0)
	want := []wire.Batch{{Type: wire.TypeGFXIP, GFXIP: 9}}
	for t := wire.RecordType(1); t <= 11; t++ {
		n := map[wire.RecordType]int{1: 3, 2: 2, 3: 2, 4: 3, 5: 2, 6: 4, 7: 2, 8: 1, 9: 3, 10: 2, 11: 4}[t]
		want = append(want, expect(t, n, uint64(t)+10, 0))
	}
	want = append(want,
		expect(wire.TypeEvent, 2, 22, 56),
		expect(wire.TypeDispatch, 2, 23, 96),
		expect(wire.TypeMarker, 3, 24, 112),
		expect(wire.TypeInstOtherSIMD, 2, 25, 32),
		expectRaw(200, 3, 26, 24),
		expectRaw(300, 2, 27, 0),
		wire.Batch{Type: wire.TypeShaderData},
		wire.Batch{Type: 300, Raw: wire.Raw{Count: 4}},
		wire.Batch{Type: wire.TypeWave, Waves: []wire.Wave{{CU: nullWave[0], SIMD: nullWave[1],
			WaveID: nullWave[2], Contexts: nullWave[3], Dispatcher: nullWave[4], WorkgroupID: nullWave[5],
			ClusterID: nullWave[6], Reserved: nullWave[7], Size: u64(nullWave, 8),
			BeginTime: i64(nullWave, 16), EndTime: i64(nullWave, 24)}}},
		expect(wire.TypeShaderData, 2, 28, 0),
		wire.Batch{Type: wire.TypeShaderData},
	)
	return want
}

func TestEveryRecordType(t *testing.T) {
	for _, tc := range []struct {
		name    string
		defines []string
		buffers bool
	}{
		{"v2-parse", nil, false},
		{"v2-data-callback", nil, true},
		{"v1", []string{"-DFIXTURE_V1_ONLY"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := loadFixture(t, tc.defines...)
			var c collector
			var err error
			if tc.buffers {
				err = d.DecodeBuffers(context.Background(), [][]byte{[]byte(everyRecord)}, noISA, c.emit)
			} else {
				err = d.Decode(context.Background(), strings.NewReader(everyRecord), noISA, c.emit)
			}
			if err != nil {
				t.Fatal(err)
			}
			compareBatches(t, c.batches, everyRecordWant())
		})
	}
}

// TestLargeBatches sends batches large enough to be converted in parallel
// parts, and wave batches that overflow a ring chunk, and checks every
// record (the library gives a trace's whole occupancy in one callback).
func TestLargeBatches(t *testing.T) {
	d := loadFixture(t)
	n := parallelMin + 4321
	script := fmt.Sprintf("rec 1 %d 3\nrec 2 %d 4\nrec 6 %d 5\nrec 3 1500 6\nrec 11 3000 7\nrec 6 1 8\n", n, n, n)
	var c collector
	if err := d.Decode(context.Background(), strings.NewReader(script), noISA, c.emit); err != nil {
		t.Fatal(err)
	}
	compareBatches(t, c.batches, []wire.Batch{
		expect(wire.TypeOccupancy, n, 3, 0), expect(wire.TypePerfEvent, n, 4, 0), expect(wire.TypeShaderData, n, 5, 0),
		expect(wire.TypeWave, 1500, 6, 0), expect(wire.TypeMarker, 3000, 7, 0), expect(wire.TypeShaderData, 1, 8, 0)})
}

// TestConcurrentCallbacks has the library call back from 8 threads at
// once (trace and ISA callbacks interleaved): every batch arrives whole,
// each exactly as often as it was sent.
func TestConcurrentCallbacks(t *testing.T) {
	d := loadFixture(t)
	provider := mapISA{}
	for i := range 16 {
		provider[wire.PC{Address: uint64(4096 + 4*i)}] = struct {
			text string
			size uint64
		}{fmt.Sprintf("s_nop %d", i), 4}
	}
	var c collector
	if err := d.Decode(context.Background(), strings.NewReader("parrec 3 24 100 8\n"), provider, c.emit); err != nil {
		t.Fatal(err)
	}
	waves := map[uint64]int{}
	wants := map[uint64]wire.Batch{}
	for seed := uint64(100); seed < 108; seed++ {
		wants[seed] = expect(wire.TypeWave, 24, seed, 0)
	}
	isas := 0
	for _, b := range c.batches {
		if b.Type == 201 {
			e := parseISAEcho(t, b)
			if e.first != StatusSuccess || !strings.HasPrefix(e.text, "s_nop ") {
				t.Errorf("ISA answer %+v", e)
			}
			isas++
			continue
		}
		found := false
		for seed, w := range wants {
			if reflect.DeepEqual(b, w) {
				waves[seed]++
				found = true
				break
			}
		}
		if !found {
			t.Fatalf("a %v batch of %d records matches none sent", b.Type, b.Len())
		}
	}
	for seed := uint64(100); seed < 108; seed++ {
		if waves[seed] != 50 {
			t.Errorf("seed %d: %d batches, want 50", seed, waves[seed])
		}
	}
	if isas != 400 {
		t.Errorf("%d ISA answers, want 400", isas)
	}
}

// TestRingBackpressure runs more batches through the parse thread's ring
// than it holds, with a consumer slower than the library: every batch
// arrives in order; an emit error or a cancel while the library waits for
// room ends the decode (no deadlock) after exactly the batches before it.
func TestRingBackpressure(t *testing.T) {
	d := loadFixture(t)
	const waves = 6000 // 72 instructions each: about 14 MB through a 4 MiB ring
	script := fmt.Sprintf("bench %d 72\nrec 6 1 9\n", waves)
	n := 0
	err := d.Decode(context.Background(), strings.NewReader(script), noISA, func(b *wire.Batch) error {
		if n%500 == 0 {
			time.Sleep(time.Millisecond) // let the ring fill up
		}
		n++
		if n <= waves && (b.Type != wire.TypeWave || len(b.Waves) != 1 || len(b.Waves[0].Instructions) != 72) {
			return fmt.Errorf("batch %d: %v with %d records", n, b.Type, b.Len())
		}
		return nil
	})
	if err != nil || n != waves+1 {
		t.Fatalf("got %d batches (err %v), want %d", n, err, waves+1)
	}

	stop := errors.New("stop here")
	for _, at := range []int{1, 100, 3000} {
		calls := 0
		err := d.Decode(context.Background(), strings.NewReader(script), noISA, func(b *wire.Batch) error {
			calls++
			if calls == at {
				time.Sleep(20 * time.Millisecond) // the library is waiting for room now
				return stop
			}
			return nil
		})
		if !errors.Is(err, stop) || calls != at {
			t.Errorf("emit error at %d: got %v after %d calls", at, err, calls)
		}
		ctx, cancel := context.WithCancel(context.Background())
		calls = 0
		err = d.Decode(ctx, strings.NewReader(script), noISA, func(b *wire.Batch) error {
			calls++
			if calls == at {
				// The library fills the ring meanwhile; the cancellation
				// comes before the next emit, whatever the machine's
				// load (no timing is asserted).
				time.Sleep(20 * time.Millisecond)
				cancel()
			}
			return nil
		})
		cancel()
		if !errors.Is(err, context.Canceled) || calls != at {
			t.Errorf("cancel at %d: got %v after %d calls", at, err, calls)
		}
	}
}

// isaEcho is the fixture's report of one "isa" command.
type isaEcho struct {
	first, second int
	memSize       uint64
	text          string
	calls         uint64
}

func parseISAEcho(t *testing.T, b wire.Batch) isaEcho {
	t.Helper()
	if b.Type != 201 || b.Raw.Count != 1 || len(b.Raw.Data) < 48 || uint64(len(b.Raw.Data)) != b.Raw.ElemSize {
		t.Fatalf("not an ISA report: %+v", b)
	}
	r := b.Raw.Data
	n := u64(r, 32)
	return isaEcho{first: int(u64(r, 8)), second: int(u64(r, 16)), memSize: u64(r, 24),
		text: string(r[48 : 48+n]), calls: u64(r, 40)}
}

func TestISACallback(t *testing.T) {
	long := strings.Repeat("v_add_f32_e32 v1, v0, v0 ", 8)
	provider := mapISA{
		{Address: 0x1000}:                  {"s_nop 0", 4},
		{Address: 0x1004}:                  {long, 8},
		{Address: 0x100c}:                  {"", 0},
		{Address: 0x1010, CodeObjectID: 3}: {"s_endpgm", 4},
		{Address: 0x1014}:                  {"s_cbranch_scc0 65534 ; ü", 12},
	}
	script := `isa 4096 0 64
isa 4100 0 4
isa 4104 0 64
isa 4108 0 0
isa 4112 3 8
isa 4112 0 64
isa 4116 0 16
`
	want := []isaEcho{
		{StatusSuccess, StatusSuccess, 4, "s_nop 0", 1},
		{StatusOutOfResources, StatusSuccess, 8, long, 2},
		{StatusInvalidArgument, StatusInvalidArgument, 0, "", 1},
		{StatusSuccess, StatusSuccess, 4, "", 1},
		{StatusSuccess, StatusSuccess, 4, "s_endpgm", 1},
		{StatusInvalidArgument, StatusInvalidArgument, 0, "", 1},
		{StatusOutOfResources, StatusSuccess, 12, "s_cbranch_scc0 65534 ; ü", 2},
	}
	bothAPIs(t, func(t *testing.T, d *Decoder) {
		var c collector
		if err := d.Decode(context.Background(), strings.NewReader(script), provider, c.emit); err != nil {
			t.Fatal(err)
		}
		if len(c.batches) != len(want) {
			t.Fatalf("got %d reports, want %d", len(c.batches), len(want))
		}
		for i, b := range c.batches {
			if got := parseISAEcho(t, b); got != want[i] {
				t.Errorf("query %d: got %+v, want %+v", i, got, want[i])
			}
		}
	})
}

// countingISA counts the provider's questions per PC.
type countingISA struct {
	mapISA
	mu    sync.Mutex
	calls map[wire.PC]int
}

func (c *countingISA) ISA(pc wire.PC) (string, uint64, bool) {
	c.mu.Lock()
	c.calls[pc]++
	c.mu.Unlock()
	return c.mapISA.ISA(pc)
}

// TestISACache checks that the C-side ISA cache asks the provider once per
// PC in a parse (known PCs and misses alike, from several threads too) and
// still plays the buffer-size protocol on every query.
func TestISACache(t *testing.T) {
	long := strings.Repeat("s_waitcnt vmcnt(0) ", 10)
	base := mapISA{
		{Address: 0x1000}:                  {"s_nop 0", 4},
		{Address: 0x1004}:                  {long, 8},
		{Address: 0x1010, CodeObjectID: 3}: {"", 2},
	}
	var script strings.Builder
	var want []isaEcho
	for range 3 {
		script.WriteString("isa 4096 0 64\nisa 4100 0 4\nisa 4100 0 400\nisa 4104 0 64\nisa 4112 3 0\nisa 4112 0 8\n")
		want = append(want,
			isaEcho{StatusSuccess, StatusSuccess, 4, "s_nop 0", 1},
			isaEcho{StatusOutOfResources, StatusSuccess, 8, long, 2},
			isaEcho{StatusSuccess, StatusSuccess, 8, long, 1},
			isaEcho{StatusInvalidArgument, StatusInvalidArgument, 0, "", 1},
			isaEcho{StatusSuccess, StatusSuccess, 4, "", 1},
			isaEcho{StatusInvalidArgument, StatusInvalidArgument, 0, "", 1},
		)
	}
	bothAPIs(t, func(t *testing.T, d *Decoder) {
		for run := range 2 { // each parse has its own cache
			p := &countingISA{mapISA: base, calls: map[wire.PC]int{}}
			var c collector
			if err := d.Decode(context.Background(), strings.NewReader(script.String()), p, c.emit); err != nil {
				t.Fatal(err)
			}
			if len(c.batches) != len(want) {
				t.Fatalf("run %d: got %d reports, want %d", run, len(c.batches), len(want))
			}
			for i, b := range c.batches {
				if got := parseISAEcho(t, b); got != want[i] {
					t.Errorf("run %d query %d: got %+v, want %+v", run, i, got, want[i])
				}
			}
			wantCalls := map[wire.PC]int{{Address: 0x1000}: 1, {Address: 0x1004}: 1, {Address: 0x1008}: 1,
				{Address: 0x1010, CodeObjectID: 3}: 1, {Address: 0x1010}: 1}
			if !reflect.DeepEqual(p.calls, wantCalls) {
				t.Errorf("run %d: provider questions %v, want one per PC %v", run, p.calls, wantCalls)
			}
		}
	})
}

// echoes returns the buffers the fixture's "echo" command reported.
func echoes(t *testing.T, bs []wire.Batch) [][]byte {
	t.Helper()
	var out [][]byte
	for _, b := range bs {
		if b.Type != 202 || b.Raw.ElemSize != 8 || uint64(len(b.Raw.Data)) != 8*b.Raw.Count || len(b.Raw.Data) < 16 {
			t.Fatalf("not an echo: %+v", b)
		}
		n := u64(b.Raw.Data, 8)
		out = append(out, b.Raw.Data[16:16+n])
	}
	return out
}

func randomChunk(rng *rand.Rand, n int) []byte {
	b := append([]byte("echo\n\x00"), make([]byte, n)...) // the NUL ends the script
	for i := 6; i < len(b); i++ {
		b[i] = byte(rng.Uint32())
	}
	return b
}

func TestDataCallbackChunks(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	chunks := [][]byte{randomChunk(rng, 1000), randomChunk(rng, 1<<20), nil, randomChunk(rng, 3)}
	want := [][]byte{chunks[0], chunks[1], chunks[3]} // an empty buffer is skipped
	bothAPIs(t, func(t *testing.T, d *Decoder) {
		var c collector
		if err := d.DecodeBuffers(context.Background(), chunks, noISA, c.emit); err != nil {
			t.Fatal(err)
		}
		got := echoes(t, c.batches)
		if len(got) != len(want) {
			t.Fatalf("got %d buffers, want %d", len(got), len(want))
		}
		for i := range want {
			if !bytes.Equal(got[i], want[i]) {
				t.Errorf("buffer %d: %d bytes arrived, want %d identical bytes", i, len(got[i]), len(want[i]))
			}
		}
		// A single buffer through Decode arrives whole too.
		c = collector{}
		if err := d.Decode(context.Background(), bytes.NewReader(chunks[1]), noISA, c.emit); err != nil {
			t.Fatal(err)
		}
		if got := echoes(t, c.batches); len(got) != 1 || !bytes.Equal(got[0], chunks[1]) {
			t.Errorf("Decode: the buffer did not arrive intact")
		}
	})
}

func TestErrorStatusMidParse(t *testing.T) {
	bothAPIs(t, func(t *testing.T, d *Decoder) {
		var c collector
		err := d.DecodeBuffers(context.Background(),
			[][]byte{[]byte("rec 6 2 1\nfail 4\nrec 6 1 2\n"), []byte("echo\n")}, noISA, c.emit)
		if err == nil || exitcode.Of(err) != exitcode.Format || !strings.Contains(err.Error(), "FIXTURE_INVALID_SHADER_DATA") {
			t.Fatalf("got error %v (exit %d), want the library's INVALID_SHADER_DATA text and exit 3", err, exitcode.Of(err))
		}
		compareBatches(t, c.batches, []wire.Batch{expect(wire.TypeShaderData, 2, 1, 0)})

		c = collector{}
		err = d.Decode(context.Background(), strings.NewReader("gfxip 11\nfail 1\n"), noISA, c.emit)
		if exitcode.Of(err) != exitcode.Failed || !strings.Contains(err.Error(), "FIXTURE_ERROR") {
			t.Fatalf("got %v, want FIXTURE_ERROR with exit 1", err)
		}
		compareBatches(t, c.batches, []wire.Batch{{Type: wire.TypeGFXIP, GFXIP: 11}})
	})
}

// TestImplausibleSizes checks that counts from C are bounded before any
// memory is read.
func TestImplausibleSizes(t *testing.T) {
	d := loadFixture(t)
	for _, script := range []string{"huge 6\n", "huge 3\n", "huge 300\n", "hugewave\n"} {
		var c collector
		err := d.Decode(context.Background(), strings.NewReader("rec 6 1 1\n"+script+"rec 6 1 2\n"), noISA, c.emit)
		if err == nil || !strings.Contains(err.Error(), "implausible") || exitcode.Of(err) != exitcode.Failed {
			t.Errorf("%q: got %v", script, err)
		}
		if len(c.batches) != 1 {
			t.Errorf("%q: %d batches delivered, want only the one before", script, len(c.batches))
		}
	}
}

type panicISA struct{}

func (panicISA) ISA(wire.PC) (string, uint64, bool) { panic("provider exploded") }

func TestCallbackFailures(t *testing.T) {
	d := loadFixture(t)
	ctx := context.Background()
	script := "rec 6 1 1\nrec 6 1 2\nisa 4096 0 64\nrec 6 1 3\n"

	// A panic in emit becomes an error; later callbacks are refused.
	calls := 0
	err := d.Decode(ctx, strings.NewReader(script), noISA, func(b *wire.Batch) error {
		calls++
		panic("emit exploded")
	})
	if err == nil || !strings.Contains(err.Error(), "emit exploded") || calls != 1 {
		t.Errorf("panic in emit: err %v after %d calls, want the panic as an error after 1 call", err, calls)
	}

	// An error from emit stops the decode and is returned as is.
	stop := errors.New("stop here")
	calls = 0
	err = d.Decode(ctx, strings.NewReader(script), noISA, func(b *wire.Batch) error {
		calls++
		if calls == 2 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || calls != 2 {
		t.Errorf("emit error: got %v after %d calls", err, calls)
	}

	// A panic in the provider becomes an error.
	var c collector
	err = d.Decode(ctx, strings.NewReader(script), panicISA{}, c.emit)
	if err == nil || !strings.Contains(err.Error(), "provider exploded") {
		t.Errorf("panic in provider: got %v", err)
	}
	if len(c.batches) != 2 {
		t.Errorf("panic in provider: %d batches delivered, want the 2 before it", len(c.batches))
	}

	// A cancelled context stops delivery.
	cctx, cancel := context.WithCancel(ctx)
	calls = 0
	err = d.Decode(cctx, strings.NewReader(script), noISA, func(b *wire.Batch) error {
		calls++
		cancel()
		return nil
	})
	if !errors.Is(err, context.Canceled) || calls != 1 {
		t.Errorf("cancel: got %v after %d calls", err, calls)
	}

	// The decoder is still usable afterwards.
	c = collector{}
	if err := d.Decode(ctx, strings.NewReader("rec 6 1 1\n"), noISA, c.emit); err != nil {
		t.Fatal(err)
	}
	compareBatches(t, c.batches, []wire.Batch{expect(wire.TypeShaderData, 1, 1, 0)})
}

func TestConcurrentDecoders(t *testing.T) {
	lib := buildFixture(t, t.TempDir(), "fixture.so")
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 4 {
		d, err := Load(lib)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		wg.Add(2)
		for range 2 { // two goroutines share each decoder
			go func() {
				defer wg.Done()
				for range 5 {
					var c collector
					if err := d.Decode(context.Background(), strings.NewReader(everyRecord), noISA, c.emit); err != nil {
						errs <- err
						return
					}
					if !reflect.DeepEqual(c.batches, everyRecordWant()) {
						errs <- errors.New("records differ under concurrency")
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestV1Fallback(t *testing.T) {
	dir := t.TempDir()
	lib := buildFixture(t, dir, "librocprof-trace-decoder.so.0.1.6", "-DFIXTURE_V1_ONLY", "-DFIXTURE_NO_DISASM")
	d, err := Load(lib)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if d.API() != "v1" || d.Version() != "0.1.6" || d.Name() != "rocm" {
		t.Errorf("API %q version %q name %q, want v1 0.1.6 rocm", d.API(), d.Version(), d.Name())
	}
	err = d.AddCodeObject(1, 0, 16, []byte("\x7fELF"))
	if exitcode.Of(err) != exitcode.NoLibrary || !strings.Contains(err.Error(), "V1") {
		t.Errorf("AddCodeObject on V1: %v", err)
	}
	err = d.Decode(context.Background(), strings.NewReader("gfxip 9\n"), nil, (&collector{}).emit)
	if exitcode.Of(err) != exitcode.NoLibrary || !strings.Contains(err.Error(), "index") {
		t.Errorf("Decode without provider on V1: %v", err)
	}
}

func TestVersionFallbacks(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		file    string
		defines []string
		want    string
	}{
		// AMD's release binary has no version in its name: the API says 0.1.
		{"librocprof-trace-decoder.so", []string{"-DFIXTURE_V1_ONLY"}, "0.1"},
		{"v2-soname.so", []string{"-DFIXTURE_NO_VERSION", "-Wl,-soname,librocprof-trace-decoder.so.0.3"}, "0.3"},
		{"v2.so", []string{"-DFIXTURE_NO_VERSION"}, "0.2"},
		{"librocprof-trace-decoder.so.0.1.7", []string{"-DFIXTURE_V1_ONLY"}, "0.1.7"},
		{"librocprof-trace-decoder.so.0.1.x", []string{"-DFIXTURE_V1_ONLY"}, "0.1"},
	} {
		sub := filepath.Join(dir, strings.ReplaceAll(tc.file, ".", "_"))
		os.Mkdir(sub, 0o755)
		d, err := Load(buildFixture(t, sub, tc.file, tc.defines...))
		if err != nil {
			t.Fatal(err)
		}
		if d.Version() != tc.want {
			t.Errorf("%s %v: version %q, want %q", tc.file, tc.defines, d.Version(), tc.want)
		}
	}
	if v := versionSuffix("librocprof-trace-decoder.so.0.2.10"); v != "0.2.10" {
		t.Errorf("versionSuffix: %q", v)
	}
}

func TestVersionAndStrings(t *testing.T) {
	d := loadFixture(t)
	if d.API() != "v2" || d.Version() != "0.2.99" {
		t.Errorf("API %q version %q, want v2 0.2.99 (from get_version)", d.API(), d.Version())
	}
	if got := d.StatusString(StatusNotImplemented); got != "FIXTURE_NOT_IMPLEMENTED" {
		t.Errorf("StatusString: %q", got)
	}
	if got := d.InfoString(wire.InfoDataLost); got != "FIXTURE_INFO_1" {
		t.Errorf("InfoString: %q", got)
	}
	if got := StatusString(42); got != "FIXTURE_STATUS_UNKNOWN" {
		t.Errorf("package StatusString after Load: %q", got)
	}
	if got := InfoString(3); got != "FIXTURE_INFO_3" {
		t.Errorf("package InfoString after Load: %q", got)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := d.Decode(context.Background(), strings.NewReader(""), noISA, (&collector{}).emit); err == nil {
		t.Error("Decode after Close succeeded")
	}
}

func TestCodeObjects(t *testing.T) {
	d := loadFixture(t)
	elf := append([]byte("\x7fELF"), make([]byte, 60)...)
	if err := d.AddCodeObject(7, 0x1000, 0x200, elf); err != nil {
		t.Fatal(err)
	}
	// Overwrite the Go slice: the library must read its own copy.
	clear(elf)
	var c collector
	if err := d.Decode(context.Background(), strings.NewReader("isa 16 7 8\nisa 16 8 64\n"), nil, c.emit); err != nil {
		t.Fatal(err)
	}
	if len(c.batches) != 2 {
		t.Fatalf("%d batches", len(c.batches))
	}
	want := isaEcho{StatusOutOfResources, StatusSuccess, 4, "builtin id=7 addr=16 elf=7f454c46 size=64", 2}
	if got := parseISAEcho(t, c.batches[0]); got != want {
		t.Errorf("built-in disassembly: got %+v, want %+v", got, want)
	}
	if got := parseISAEcho(t, c.batches[1]); got.first != StatusInvalidArgument {
		t.Errorf("unknown code object: %+v", got)
	}
	if err := d.AddCodeObject(8, 0, 16, []byte("not an elf")); err == nil || !strings.Contains(err.Error(), "FIXTURE_ERROR") {
		t.Errorf("loading a non-ELF: %v", err)
	}
	if err := d.RemoveCodeObject(7); err != nil {
		t.Error(err)
	}
	if err := d.RemoveCodeObject(7); err == nil {
		t.Error("removing an unknown code object succeeded")
	}
	// With no code object left and no provider, the library cannot disassemble.
	err := d.Decode(context.Background(), strings.NewReader("gfxip 9\n"), nil, c.emit)
	if exitcode.Of(err) != exitcode.NoLibrary || !strings.Contains(err.Error(), "FIXTURE_NOT_IMPLEMENTED") {
		t.Errorf("Decode without ISA source: %v", err)
	}

	nd := loadFixture(t, "-DFIXTURE_NO_DISASM")
	err = nd.AddCodeObject(1, 0, 16, []byte("\x7fELF"))
	if exitcode.Of(err) != exitcode.NoLibrary || !strings.Contains(err.Error(), "without a disassembler") {
		t.Errorf("NOT_IMPLEMENTED codeobj_load: %v", err)
	}
}

func TestMissingSymbols(t *testing.T) {
	for _, tc := range []struct {
		define, symbol string
	}{
		{"-DFIXTURE_NO_STATUS_STRING", "rocprof_trace_decoder_get_status_string"},
		{"-DFIXTURE_V2_NO_PARSE", "rocprof_trace_decoder_parse"},
		{"-DFIXTURE_V1_ONLY -DFIXTURE_NO_PARSE_DATA", "rocprof_trace_decoder_create_handle (V2) or rocprof_trace_decoder_parse_data (V1)"},
	} {
		lib := buildFixture(t, t.TempDir(), "fixture.so", strings.Fields(tc.define)...)
		_, err := Load(lib)
		if exitcode.Of(err) != exitcode.NoLibrary || !strings.Contains(err.Error(), "missing symbol(s) "+tc.symbol) ||
			!strings.Contains(err.Error(), lib) {
			t.Errorf("%s: got %v (exit %d), want exit 4 naming %s and the file", tc.define, err, exitcode.Of(err), tc.symbol)
		}
	}
}

// isolate points every lookup variable at dir (or nothing).
func isolate(t *testing.T, dir string) {
	t.Setenv(EnvLib, "")
	t.Setenv("LD_LIBRARY_PATH", dir)
	t.Setenv("ROCM_HOME", "")
	t.Setenv("ROCM_PATH", filepath.Join(dir, "rocm"))
	t.Setenv("VIRTUAL_ENV", "")
	t.Setenv("CONDA_PREFIX", "")
}

func TestLoadFromSearchPath(t *testing.T) {
	dir := t.TempDir()
	isolate(t, dir)
	lib := buildFixture(t, dir, "librocprof-trace-decoder.so.0")
	d, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if d.Path() != lib {
		t.Errorf("loaded %s, want %s", d.Path(), lib)
	}

	other := t.TempDir()
	envLib := buildFixture(t, other, "any-name.so", "-DFIXTURE_V1_ONLY")
	t.Setenv(EnvLib, envLib)
	d2, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	if d2.Path() != envLib || d2.API() != "v1" {
		t.Errorf("%s did not win: loaded %s", EnvLib, d2.Path())
	}
}

func TestMissingLibrary(t *testing.T) {
	dir := t.TempDir()
	isolate(t, dir)
	d, err := Load("")
	if err == nil {
		d.Close()
		t.Skipf("a decoder library is installed in the loader's path (%s): cannot test its absence", d.Path())
	}
	msg := err.Error()
	if exitcode.Of(err) != exitcode.NoLibrary {
		t.Errorf("exit code %d, want 4", exitcode.Of(err))
	}
	for _, want := range []string{EnvLib, dir, filepath.Join(dir, "rocm", "lib"), "/opt/rocm/lib",
		"dynamic loader: librocprof-trace-decoder.so", "dynamic loader: librocprof-trace-decoder.so.0.1"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message does not mention %q:\n%s", want, msg)
		}
	}
	if strings.Index(msg, dir+":") > strings.Index(msg, "/opt/rocm/lib") {
		t.Errorf("places listed out of order:\n%s", msg)
	}

	missing := filepath.Join(dir, "nope.so")
	_, err = Load(missing)
	if exitcode.Of(err) != exitcode.NoLibrary || !strings.Contains(err.Error(), "--lib "+missing) {
		t.Errorf("Load(%s): %v", missing, err)
	}
	t.Setenv(EnvLib, missing)
	_, err = Load("")
	if exitcode.Of(err) != exitcode.NoLibrary || !strings.Contains(err.Error(), EnvLib+" "+missing) {
		t.Errorf("%s=%s: %v", EnvLib, missing, err)
	}
}

// A batch emitted to backend.Emit is reused between callbacks.
var _ backend.Emit = (&collector{}).emit

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "cdec-fixture-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fixtureDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// procsISA records GOMAXPROCS when the parse thread asks it about a PC.
// With meet and read set, it reads it once the other decodes of the test
// have asked too, and returns once they have all read it, so that the
// parses run at the same time.
type procsISA struct {
	got        chan int
	meet, read *sync.WaitGroup
}

func (p procsISA) ISA(wire.PC) (string, uint64, bool) {
	if p.meet != nil {
		p.meet.Done()
		p.meet.Wait()
		defer p.read.Wait()
		defer p.read.Done()
	}
	p.got <- runtime.GOMAXPROCS(0)
	return "s_nop 0", 4, true
}

// TestProcsWhileParsing checks that Go's processors make room for the
// parse threads while they run (procs): GOMAXPROCS less one per running
// parse, at least 1, and the value of before once every parse returned,
// after a failed decode too.
func TestProcsWhileParsing(t *testing.T) {
	prev := runtime.GOMAXPROCS(3)
	t.Cleanup(func() { runtime.GOMAXPROCS(prev) })
	bothAPIs(t, func(t *testing.T, d *Decoder) {
		p := procsISA{got: make(chan int, 1)}
		var c collector
		if err := d.Decode(context.Background(), strings.NewReader("isa 4096 0 64\n"), p, c.emit); err != nil {
			t.Fatal(err)
		}
		if got := <-p.got; got != 2 {
			t.Errorf("GOMAXPROCS during the parse: %d, want 2 (3 less the parse thread)", got)
		}
		if got := runtime.GOMAXPROCS(0); got != 3 {
			t.Errorf("GOMAXPROCS after the parse: %d, want 3 again", got)
		}
		if err := d.Decode(context.Background(), strings.NewReader("isa 4096 0 64\n"), panicISA{}, c.emit); err == nil {
			t.Error("a panicking provider: no error")
		}
		if got := runtime.GOMAXPROCS(0); got != 3 {
			t.Errorf("GOMAXPROCS after a failed parse: %d, want 3 again", got)
		}
	})

	// Three parses at once: 3 less 3, but at least 1.
	lib := buildFixture(t, t.TempDir(), "fixture.so")
	var meet, read, wg sync.WaitGroup
	meet.Add(3)
	read.Add(3)
	p := procsISA{got: make(chan int, 3), meet: &meet, read: &read}
	for range 3 {
		d, err := Load(lib)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		wg.Go(func() {
			var c collector
			if err := d.Decode(context.Background(), strings.NewReader("isa 4096 0 64\n"), p, c.emit); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	for range 3 {
		if got := <-p.got; got != 1 {
			t.Errorf("GOMAXPROCS during three parses: %d, want 1", got)
		}
	}
	if got := runtime.GOMAXPROCS(0); got != 3 {
		t.Errorf("GOMAXPROCS after three parses: %d, want 3 again", got)
	}
}

// waitISA answers every PC once emit has seen the batch before it (seen),
// so that the parse is still running while emit looks at GOMAXPROCS.
type waitISA struct{ seen chan struct{} }

func (w waitISA) ISA(wire.PC) (string, uint64, bool) {
	select {
	case <-w.seen:
	case <-time.After(10 * time.Second):
	}
	return "s_nop 0", 4, true
}

// TestProcsForPools checks that a whole-trace pool (occupancy, perf
// counters, realtime), large enough to be converted in parts, gets every
// processor back while the parse still runs, and another large batch
// (shader data) does not.
func TestProcsForPools(t *testing.T) {
	prev := runtime.GOMAXPROCS(3)
	t.Cleanup(func() { runtime.GOMAXPROCS(prev) })
	bothAPIs(t, func(t *testing.T, d *Decoder) {
		n := parallelMin + 10
		// Each large batch is sealed by the small one after it; the
		// ISA question then waits for emit.
		script := fmt.Sprintf("rec 6 %d 1\nrec 6 1 2\nisa 4096 0 64\nrec 1 %d 3\nrec 6 1 4\nisa 4100 0 64\n", n, n)
		w := waitISA{seen: make(chan struct{}, 2)}
		got := map[wire.RecordType]int{}
		emit := func(b *wire.Batch) error {
			if b.Len() >= parallelMin {
				got[b.Type] = runtime.GOMAXPROCS(0)
				w.seen <- struct{}{}
			}
			return nil
		}
		if err := d.Decode(context.Background(), strings.NewReader(script), w, emit); err != nil {
			t.Fatal(err)
		}
		want := map[wire.RecordType]int{wire.TypeShaderData: 2, wire.TypeOccupancy: 3}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("GOMAXPROCS at the large batches: %v, want %v", got, want)
		}
		if got := runtime.GOMAXPROCS(0); got != 3 {
			t.Errorf("GOMAXPROCS after the parse: %d, want 3 again", got)
		}
	})
}
