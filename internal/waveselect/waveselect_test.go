package waveselect

import (
	"bytes"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/attkit/attkit/internal/exitcode"
	"github.com/attkit/attkit/internal/wire"
)

func pc(co, addr uint64) wire.PC { return wire.PC{Address: addr, CodeObjectID: co} }

// testIndex has two kernels in code object 1 (one only a function label)
// and code object 2 with rows but no kernel.
func testIndex() *wire.Index {
	row := func(kind wire.RowKind, co uint64, text, src string, vaddr uint64) wire.Row {
		return wire.Row{Kind: kind, CodeObj: co, Vaddr: vaddr, Size: 4, Text: text, Source: src}
	}
	return &wire.Index{
		Objects: []wire.CodeObject{{ID: 1, Ranges: []wire.LoadRange{{Begin: 0x1000, End: 0x1100}}}},
		Rows: []wire.Row{
			row(wire.RowFunction, 1, "; _alpha", "alpha", 0x1000),
			row(wire.RowInstruction, 1, "s_nop 0", "", 0x1000),
			row(wire.RowInstruction, 1, "s_endpgm", "", 0x1004),
			row(wire.RowFunction, 1, "; _beta", "beta", 0x1040),
			row(wire.RowInstruction, 1, "s_nop 0", "", 0x1040),
			row(wire.RowInstruction, 1, "s_endpgm", "", 0x1044),
			row(wire.RowInstruction, 2, "s_nop 0", "", 0x200),
			row(wire.RowInstruction, 2, "s_endpgm", "", 0x204),
		},
		Kernels: []wire.Kernel{{Address: 0x1000, CodeObj: 1, Name: "_Z5alphav", Demangled: "alpha()"}},
	}
}

func TestKernels(t *testing.T) {
	k := NewKernels(testIndex())
	for _, c := range []struct {
		pc   wire.PC
		name string
		ok   bool
	}{
		{pc(1, 0x1000), "alpha()", true},
		{pc(1, 0x103c), "alpha()", true},
		{pc(1, 0x1040), "beta", true},
		{pc(1, 0x10fc), "beta", true},
		{pc(1, 0x1100), "", false}, // past the load range
		{pc(1, 0xfff), "", false},
		{pc(2, 0x200), "2 / 0x200", true},
		{pc(2, 0x207), "2 / 0x200", true},
		{pc(2, 0x208), "", false},
		{pc(3, 0x200), "", false},
	} {
		name, ok := k.Lookup(c.pc)
		if name != c.name || ok != c.ok {
			t.Errorf("Lookup(%v) = %q, %v; want %q, %v", c.pc, name, ok, c.name, c.ok)
		}
	}
	if b, e, ok := k.Range(1, "_Z5alphav"); !ok || b != 0x1000 || e != 0x1040 {
		t.Errorf("Range alpha = %#x %#x %v", b, e, ok)
	}
}

type part struct {
	se, run int
	batches []wire.Batch
}

func stream(t testing.TB, parts ...part) []byte {
	var b bytes.Buffer
	for _, p := range parts {
		if err := wire.WriteStream(&b, &wire.Header{Producer: "test", Trace: wire.Trace{SE: p.se, Run: p.run}}, p.batches...); err != nil {
			t.Fatal(err)
		}
	}
	return b.Bytes()
}

func wave(cu, simd, slot, dispatcher uint8, begin, end int64, first ...wire.PC) wire.Wave {
	w := wire.Wave{CU: cu, SIMD: simd, WaveID: slot, Dispatcher: dispatcher, BeginTime: begin, EndTime: end}
	for i, p := range first {
		w.Instructions = append(w.Instructions, wire.Instruction{PC: p, Time: begin + int64(i)})
	}
	return w
}

func waves(ws ...wire.Wave) wire.Batch { return wire.Batch{Type: wire.TypeWave, Waves: ws} }

func dispatch(t int64, me, pipe uint8, entry wire.PC) wire.Batch {
	return wire.Batch{Type: wire.TypeDispatch, Dispatches: []wire.Dispatch{{Time: t, MEID: me, PipeID: pipe, EntryPoint: entry}}}
}

// run reads data once through s (Select, then Pick) and returns the IDs
// of the waves kept and the count of the other records.
func run(t testing.TB, s *Selector, data []byte) (kept []string, others int) {
	rd := wire.NewReader(bytes.NewReader(data), "test")
	for rd.Scan() {
		if rd.Kind() == wire.KindHeader {
			s.BeginPart(rd.Header())
			continue
		}
		b := rd.Batch()
		s.Select(b)
		s.Pick(b)
		if b.Type != wire.TypeWave {
			others += b.Len()
			continue
		}
		for i := range b.Waves {
			kept = append(kept, s.Describe(&b.Waves[i]).Key.String())
		}
	}
	if err := rd.Err(); err != nil {
		t.Fatal(err)
	}
	return kept, others
}

// sampleStream: SE 0 with a dispatch of alpha on queue (1, 0) and of beta
// on (1, 1); SE 1 with a wave without instructions of alpha's dispatch.
func sampleStream(t testing.TB) []byte {
	return stream(t,
		part{se: 0, run: 1, batches: []wire.Batch{
			dispatch(10, 1, 0, pc(1, 0x1000)),
			dispatch(20, 1, 1, pc(1, 0x1040)),
			{Type: wire.TypeOccupancy, Occupancy: make([]wire.Occupancy, 3)},
			waves(wave(0, 0, 0, 0x10, 100, 300, pc(1, 0x1000)), wave(0, 1, 0, 0x11, 110, 200, pc(1, 0x1040))),
			waves(wave(0, 0, 1, 0x10, 120, 320, pc(1, 0x1000)), wave(0, 2, 0, 0x00, 5, 9, pc(2, 0x200))),
		}},
		part{se: 1, run: 1, batches: []wire.Batch{
			dispatch(10, 1, 0, pc(1, 0x1000)),
			waves(wave(1, 0, 0, 0x10, 100, 150)),
			{Type: wire.TypePerfEvent, PerfEvents: make([]wire.PerfEvent, 2)},
		}},
	)
}

func TestSelect(t *testing.T) {
	data := sampleStream(t)
	for _, c := range []struct {
		opt  Options
		want string
	}{
		{Options{}, "se0.cu0.simd0.slot0@100 se0.cu0.simd1.slot0@110 se0.cu0.simd0.slot1@120 se0.cu0.simd2.slot0@5 se1.cu1.simd0.slot0@100"},
		{Options{Kernels: []string{"alpha*"}}, "se0.cu0.simd0.slot0@100 se0.cu0.simd0.slot1@120 se1.cu1.simd0.slot0@100"},
		{Options{Kernels: []string{"_Z5*"}}, "se0.cu0.simd0.slot0@100 se0.cu0.simd0.slot1@120 se1.cu1.simd0.slot0@100"},
		{Options{Kernels: []string{"beta", "2 / 0x200"}}, "se0.cu0.simd1.slot0@110 se0.cu0.simd2.slot0@5"},
		{Options{Kernels: []string{"2*0x2??"}}, "se0.cu0.simd2.slot0@5"},
		{Options{Dispatches: []string{"1"}}, "se0.cu0.simd1.slot0@110"},
		{Options{Dispatches: []string{"0"}}, "se0.cu0.simd0.slot0@100 se0.cu0.simd0.slot1@120 se1.cu1.simd0.slot0@100"},
		{Options{Dispatches: []string{"0"}, Kernels: []string{"beta"}}, ""},
		{Options{Wave: "se0.cu0.simd1.slot0@110"}, "se0.cu0.simd1.slot0@110"},
		{Options{Wave: "se1.cu1.simd0.slot0@100", Kernels: []string{"alpha()"}}, "se1.cu1.simd0.slot0@100"},
	} {
		s, err := New(testIndex(), c.opt)
		if err != nil {
			t.Fatal(err)
		}
		kept, others := run(t, s, data)
		if got := strings.Join(kept, " "); got != c.want {
			t.Errorf("%+v: kept %q, want %q", c.opt, got, c.want)
		}
		if others != 8 {
			t.Errorf("%+v: %d other records, want 8", c.opt, others)
		}
	}
}

func TestNothingMatched(t *testing.T) {
	data := sampleStream(t)
	for _, c := range []struct {
		opt  Options
		want string
	}{
		{Options{Kernels: []string{"gamma"}}, `--kernel "gamma" matched no wave; the input's 5 waves belong to kernels 2 / 0x200 (1 waves), alpha() (3 waves), beta (1 waves)`},
		{Options{Dispatches: []string{"7"}}, "--dispatch 7 matched no wave; the input's 5 waves belong to kernels 2 / 0x200 (1 waves), alpha() (3 waves), beta (1 waves); to dispatches 0: alpha() (3 waves), 1: beta (1 waves) (1 waves to none)"},
		{Options{Wave: "se0.cu0.simd0.slot0@101"}, "--wave se0.cu0.simd0.slot0@101: no such wave in the input"},
	} {
		s, _ := New(testIndex(), c.opt)
		run(t, s, data)
		err := s.Check()
		if err == nil || !strings.Contains(err.Error(), c.want) || exitcode.Of(err) != exitcode.Failed {
			t.Errorf("%+v: %v (exit %d), want %q (exit 1)", c.opt, err, exitcode.Of(err), c.want)
		}
	}
	s, _ := New(testIndex(), Options{Kernels: []string{"alpha*"}})
	run(t, s, data)
	if err := s.Check(); err != nil {
		t.Errorf("a matching selection: %v", err)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, o := range []Options{
		{Kernels: []string{"[a"}},
		{Dispatches: []string{"x"}},
		{Dispatches: []string{"-1"}},
		{Wave: "slow"},
		{Wave: "se0.cu0.simd0.slot256@1"},
		{Wave: "se0.cu0.simd0@1"},
	} {
		_, err := New(nil, o)
		var e *Error
		if !errors.As(err, &e) || exitcode.Of(err) != exitcode.Usage {
			t.Errorf("%+v: %v, want a usage error", o, err)
		}
	}
}

func TestWaveKeyRoundTrip(t *testing.T) {
	for _, k := range []WaveKey{{}, {SE: 31, CU: 255, SIMD: 3, Slot: 19, Begin: -5}, {SE: 2, Begin: math.MaxInt64}} {
		got, err := ParseWaveKey(k.String())
		if err != nil || got != k {
			t.Errorf("%v: %v, %v", k, got, err)
		}
	}
}

func FuzzParseWaveKey(f *testing.F) {
	f.Add("se0.cu1.simd2.slot3@4500")
	f.Add("se0.cu1.simd2.slot3@")
	f.Fuzz(func(t *testing.T, s string) {
		k, err := ParseWaveKey(s)
		if err == nil && k.String() != s {
			t.Errorf("%q reads as %v, written %q", s, k, k.String())
		}
	})
}

// TestTwoPass checks --wave slowest and fastest against a brute force
// over random waves read from a file and through a pipe (copied).
func TestTwoPass(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var ws []wire.Wave
	for i := range 300 {
		b := r.Int64N(1000)
		ws = append(ws, wave(uint8(i%7), uint8(i%4), uint8(i%11), 0x10, b, b+r.Int64N(50), pc(1, 0x1000+uint64(i%2)*0x40)))
	}
	var batches []wire.Batch
	for i := 0; i < len(ws); i += 17 {
		batches = append(batches, waves(ws[i:min(i+17, len(ws))]...))
	}
	data := stream(t, part{se: 3, run: 1, batches: batches})
	file := t.TempDir() + "/s.rec"
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, which := range []string{"slowest", "fastest"} {
		for _, kernel := range []string{"", "beta"} {
			// brute force: the first wave of the extreme duration
			best := -1
			for i, w := range ws {
				if kernel != "" && w.Instructions[0].PC.Address != 0x1040 {
					continue
				}
				d := w.EndTime - w.BeginTime
				if bd := int64(0); best >= 0 {
					bd = ws[best].EndTime - ws[best].BeginTime
					if which == "slowest" && d > bd || which == "fastest" && d < bd {
						best = i
					}
				} else {
					best = i
				}
			}
			want := WaveKey{SE: 3, CU: ws[best].CU, SIMD: ws[best].SIMD, Slot: ws[best].WaveID, Begin: ws[best].BeginTime}.String()
			for _, path := range []string{file, "-"} {
				opt := Options{Wave: which}
				if kernel != "" {
					opt.Kernels = []string{kernel}
				}
				s, err := New(testIndex(), opt)
				if err != nil {
					t.Fatal(err)
				}
				open := func(p string) (io.ReadCloser, string, error) {
					if p == "-" {
						return io.NopCloser(struct{ io.Reader }{bytes.NewReader(data)}), "<stdin>", nil
					}
					f, err := os.Open(p)
					return f, p, err
				}
				in := NewInputs(open)
				in.Dir = t.TempDir()
				if err := s.FirstPass(in, []string{path}, nil, nil); err != nil {
					t.Fatal(err)
				}
				if path == "-" {
					if ents, _ := os.ReadDir(in.Dir); len(ents) != 0 {
						t.Errorf("the copy of stdin is visible: %v", ents)
					}
				}
				rc, _, err := in.Open(path)
				if err != nil {
					t.Fatal(err)
				}
				got, err := io.ReadAll(rc)
				rc.Close()
				if err != nil || !bytes.Equal(got, data) {
					t.Fatalf("%s: second reading differs (%d bytes, want %d): %v", path, len(got), len(data), err)
				}
				kept, _ := run(t, s, data)
				if len(kept) != 1 || kept[0] != want {
					t.Errorf("%s %s %s: kept %v, want %s", which, kernel, path, kept, want)
				}
				if err := s.Check(); err != nil {
					t.Error(err)
				}
				if err := in.Close(); err != nil {
					t.Error(err)
				}
			}
		}
	}
}

// TestBins checks the bin of every duration against its bounds, and the
// bounds' shape.
func TestBins(t *testing.T) {
	check := func(d int64) {
		i := BinOf(d)
		lo, hi := BinBounds(i)
		if d < lo || d >= hi && hi != math.MaxInt64 || i < 0 || i >= NumBins {
			t.Fatalf("duration %d: bin %d [%d, %d)", d, i, lo, hi)
		}
	}
	for d := int64(0); d < 1<<16; d++ {
		check(d)
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 100000 {
		check(r.Int64N(math.MaxInt64))
	}
	check(math.MaxInt64)
	for i := 1; i < NumBins; i++ {
		plo, phi := BinBounds(i - 1)
		lo, hi := BinBounds(i)
		if lo != phi || hi <= lo || i >= 4 && (hi-lo)*4 > lo || plo >= lo {
			t.Fatalf("bin %d [%d, %d) after [%d, %d)", i, lo, hi, plo, phi)
		}
	}
}

func TestHistogram(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	h := NewHistogram()
	want := map[string]map[[2]int64]int64{}
	for i := range 5000 {
		k := []string{"a", "b", ""}[i%3]
		d := r.Int64N(1 << uint(1+i%20))
		if i == 7 {
			d = -3
		}
		h.Add(WaveInfo{Kernel: k, Key: WaveKey{Begin: int64(i)}, Begin: int64(i), End: int64(i) + d})
		if want[k] == nil {
			want[k] = map[[2]int64]int64{}
		}
		// brute force: the bin is [lo, hi) with lo the largest bound <= d
		if d >= 0 {
			var lo, hi int64
			for lo = d; lo >= 0; lo-- {
				if lo < 4 || isBound(lo) {
					break
				}
			}
			for hi = d + 1; !(hi <= 4 || isBound(hi)); hi++ {
			}
			want[k][[2]int64{lo, hi}]++
		}
	}
	var total int64
	for _, kh := range h.Kernels() {
		got := map[[2]int64]int64{}
		for _, b := range kh.Bins() {
			if b.Count > 0 {
				got[[2]int64{b.Lo, b.Hi}] = b.Count
			}
			total += b.Count
		}
		if len(got) != len(want[kh.Kernel]) {
			t.Errorf("kernel %q: %d bins, want %d", kh.Kernel, len(got), len(want[kh.Kernel]))
		}
		for b, n := range want[kh.Kernel] {
			if got[b] != n {
				t.Errorf("kernel %q bin %v: %d, want %d", kh.Kernel, b, got[b], n)
			}
		}
		total += kh.Negative
	}
	if total != 5000 {
		t.Errorf("%d waves binned, want 5000", total)
	}
	var text, js bytes.Buffer
	if err := h.WriteText(&text); err != nil || !strings.Contains(text.String(), "kernel a: 1667 waves") {
		t.Errorf("text: %v\n%s", err, text.String())
	}
	if err := h.WriteJSON(&js); err != nil || strings.Count(js.String(), "\n") != 3 {
		t.Errorf("json: %v\n%s", err, js.String())
	}
}

// isBound reports whether v (>= 4) is a bin bound: (4+j) * 2^k, j < 4.
func isBound(v int64) bool {
	for v >= 8 && v%2 == 0 {
		v /= 2
	}
	return v >= 4 && v < 8
}

// TestCheckAll: a pattern that matches in one of several selectors passes.
func TestCheckAll(t *testing.T) {
	data := sampleStream(t)
	opt := Options{Kernels: []string{"beta", "alpha*"}}
	a, _ := New(testIndex(), opt)
	b, _ := New(testIndex(), opt)
	run(t, a, stream(t, part{se: 4, run: 2})) // reads no wave
	run(t, b, data)
	if err := CheckAll(a, b); err != nil {
		t.Error(err)
	}
	if a.Check() == nil {
		t.Error("a selector that read nothing passes alone")
	}
	c, _ := New(testIndex(), Options{Kernels: []string{"gamma"}})
	d, _ := New(testIndex(), Options{Kernels: []string{"gamma"}})
	run(t, c, data)
	run(t, d, data)
	if err := CheckAll(c, d); err == nil || !strings.Contains(err.Error(), "the input's 10 waves belong to kernels 2 / 0x200 (2 waves), alpha() (6 waves), beta (2 waves)") {
		t.Errorf("CheckAll: %v", err)
	}
}
