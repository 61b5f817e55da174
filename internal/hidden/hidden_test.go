package hidden

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/attkit/attkit/internal/wire"
)

var (
	target  = wire.PC{CodeObjectID: 1, Address: 0x100}
	otherPC = wire.PC{CodeObjectID: 1, Address: 0x200}
)

func ins(cat wire.InstCategory, pc wire.PC, time int64, stall uint32, dur int32) wire.Instruction {
	return wire.Instruction{Category: cat, PC: pc, Time: time, Stall: stall, Duration: dur}
}

func wave(simd uint8, begin int64, in ...wire.Instruction) wire.Wave {
	return wire.Wave{SIMD: simd, BeginTime: begin, Instructions: in}
}

func analyze(t *testing.T, ses []Capture, matrix func(wire.PC) bool) *Result {
	t.Helper()
	r, err := Analyze(ses, matrix)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestIntervalKnownAnswers checks the interval helpers of §8.2 on the
// spec's examples.
func TestIntervalKnownAnswers(t *testing.T) {
	if got, want := Coalesce([]Span{{0, 10}, {2, 3}, {20, 2}}), []Interval{{13, 13}, {22, 2}}; !reflect.DeepEqual(got, want) {
		t.Errorf("coalesce = %v, want %v", got, want)
	}
	if got, want := Union([]Interval{{10, 10}}, []Interval{{15, 10}, {30, 5}}), []Interval{{15, 15}, {30, 5}}; !reflect.DeepEqual(got, want) {
		t.Errorf("union = %v, want %v", got, want)
	}
	if got, want := Window(NewList([]Interval{{20, 20}}), 0, 5, 5, 10), (Latency{5, 5, 5}); got != want {
		t.Errorf("window = %v, want %v", got, want)
	}
	if got := Window(NewList(nil), 0, 5, 5, 10); got != (Latency{}) {
		t.Errorf("window of an empty list = %v", got)
	}
	// Zero-length spans take part: one at the first start is absorbed,
	// one alone makes an empty interval that a union then skips.
	if got, want := Coalesce([]Span{{5, 0}, {5, 3}, {9, 0}}), []Interval{{8, 3}, {9, 0}}; !reflect.DeepEqual(got, want) {
		t.Errorf("coalesce with empty spans = %v, want %v", got, want)
	}
	if got, want := Union([]Interval{{8, 3}, {9, 0}}, nil), []Interval{{8, 3}}; !reflect.DeepEqual(got, want) {
		t.Errorf("union skipping empty = %v, want %v", got, want)
	}
	// Touching spans add up, and touching intervals merge in a union.
	if got, want := Coalesce([]Span{{0, 4}, {4, 4}}), []Interval{{8, 8}}; !reflect.DeepEqual(got, want) {
		t.Errorf("touching = %v, want %v", got, want)
	}
	if got, want := Union([]Interval{{4, 4}}, []Interval{{8, 4}}), []Interval{{8, 8}}; !reflect.DeepEqual(got, want) {
		t.Errorf("touching union = %v, want %v", got, want)
	}
}

// TestKnownAnswers is the table of §8.2: a target instruction at PC
// (1, 0x100) in a wave beginning at 0, another wave on the same SIMD.
func TestKnownAnswers(t *testing.T) {
	type row struct {
		name   string
		target wire.Instruction
		other  wire.Instruction
		matrix bool
		want   Latency
	}
	rows := []row{
		{"valu", ins(wire.CatVALU, target, 10, 4, 10), ins(wire.CatVALU, otherPC, 0, 0, 14), false, Latency{10, 4, 0}},
		{"vmem", ins(wire.CatVMEM, target, 10, 4, 10), ins(wire.CatVALU, otherPC, 14, 0, 6), false, Latency{0, 0, 6}},
	}
	for _, c := range []wire.InstCategory{wire.CatVMEM, wire.CatLDS, wire.CatFLAT} {
		rows = append(rows, row{"salu-" + c.String(), ins(wire.CatSALU, target, 10, 4, 10), ins(c, otherPC, 14, 0, 6), false, Latency{0, 0, 6}})
	}
	for _, c := range []wire.InstCategory{wire.CatImmed, wire.CatNone, wire.CatJump, wire.CatNext, wire.CatContext, wire.CatMessage, wire.CatBVH} {
		rows = append(rows, row{c.String() + "-smem", ins(c, target, 10, 4, 10), ins(wire.CatSMEM, otherPC, 14, 0, 6), false, Latency{0, 0, 6}})
	}
	for _, c := range []wire.InstCategory{wire.CatVMEM, wire.CatLDS, wire.CatFLAT, wire.CatSALU, wire.CatSMEM} {
		rows = append(rows, row{"same-" + c.String(), ins(c, target, 0, 0, 6), ins(c, otherPC, 0, 0, 6), false, Latency{}})
	}
	rows = append(rows, row{"salu-matrix", ins(wire.CatSALU, target, 0, 0, 8), ins(wire.CatVALU, otherPC, 0, 0, 8), true, Latency{0, 0, 8}})
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			matrix := func(pc wire.PC) bool { return r.matrix && pc == otherPC }
			ses := []Capture{{Waves: []wire.Wave{wave(0, 0, r.target), wave(0, 0, r.other)}}}
			res := analyze(t, ses, matrix)
			if got := res.ByPC[target]; got != r.want {
				t.Errorf("hidden = %+v, want %+v", got, r.want)
			}
			checkOracle(t, ses, matrix, res)
		})
	}
}

// checkOracle compares a result with the brute-force oracle.
func checkOracle(t *testing.T, ses []Capture, matrix func(wire.PC) bool, res *Result) {
	t.Helper()
	want := oracle(ses, matrix)
	if len(want) != len(res.ByPC) {
		t.Errorf("%d PCs, oracle %d", len(res.ByPC), len(want))
	}
	n := 0
	for pc, w := range want {
		if got := res.ByPC[pc]; got != (Latency{w[0], w[1], w[2]}) {
			if n++; n <= 5 {
				t.Errorf("PC %d:%#x: hidden %+v, oracle %v", pc.CodeObjectID, pc.Address, got, w)
			}
		}
	}
}

// TestMatrixPipes: an 8-cycle matrix issue is 8 cycles of MATRIX and 6
// of VALU.
func TestMatrixPipes(t *testing.T) {
	a := New(Options{Matrix: func(pc wire.PC) bool { return pc == otherPC }, InMemory: true})
	defer a.Close()
	w := wave(0, 0, ins(wire.CatVALU, otherPC, 10, 2, 10))
	if err := a.AddWave(0, &w); err != nil {
		t.Fatal(err)
	}
	wk := &walker{a: a}
	if err := wk.read(a.scopes[0]); err != nil {
		t.Fatal(err)
	}
	for _, b := range wk.parts {
		if err := wk.busy(b, a.matrix); err != nil {
			t.Fatal(err)
		}
	}
	if got := wk.pipes[pipeMatrix].intervals(); !reflect.DeepEqual(got, []Interval{{20, 8}}) {
		t.Errorf("MATRIX %v, want [{20 8}]", got)
	}
	if got := wk.pipes[pipeValu].intervals(); !reflect.DeepEqual(got, []Interval{{18, 6}}) {
		t.Errorf("VALU %v, want [{18 6}]", got)
	}
	if !IsMatrix("v_mfma_f32_32x32x8f16 a[0:15], v[0:1], v[2:3], 0") || !IsMatrix("v_wmma_f32_16x16x16_f16 v[0:7]") ||
		!IsMatrix("v_smfmac_f32_16x16x32_f16 v[0:3]") || !IsMatrix("v_swmmac_f32_16x16x32_f16 v[0:7]") || IsMatrix("v_fma_f32 v0, v1, v2, v3") {
		t.Error("IsMatrix")
	}
	ix := &wire.Index{Rows: []wire.Row{{CodeObj: 1, Vaddr: 0x200, Text: "v_mfma_f32_4x4x1f32 v[0:3], v0, v1, v[0:3]"},
		{CodeObj: 1, Vaddr: 0x100, Text: "v_add_f32 v0, v1, v2"}, {Kind: wire.RowFunction, CodeObj: 1, Vaddr: 0x300, Text: "; _v_mfma"}}}
	m := MatrixPCs(ix)
	if !m(otherPC) || m(target) || m(wire.PC{CodeObjectID: 1, Address: 0x300}) || MatrixPCs(nil)(otherPC) {
		t.Error("MatrixPCs")
	}
}

// TestProperties: the properties §9 says upstream's tests pin.
func TestProperties(t *testing.T) {
	t.Run("other SIMD hides nothing", func(t *testing.T) {
		ses := []Capture{{Waves: []wire.Wave{wave(0, 0, ins(wire.CatVMEM, target, 10, 4, 10)), wave(1, 0, ins(wire.CatVALU, otherPC, 0, 0, 40))}}}
		if got := analyze(t, ses, nil).ByPC[target]; got != (Latency{}) {
			t.Errorf("hidden %+v by a busy pipe on SIMD 1", got)
		}
		// Nor does another shader engine's SIMD of the same number.
		ses = []Capture{{Waves: []wire.Wave{wave(0, 0, ins(wire.CatVMEM, target, 10, 4, 10))}}, {Waves: []wire.Wave{wave(0, 0, ins(wire.CatVALU, otherPC, 0, 0, 40))}}}
		if got := analyze(t, ses, nil).ByPC[target]; got != (Latency{}) {
			t.Errorf("hidden %+v by another shader engine", got)
		}
	})
	t.Run("other-SIMD vector memory hides pipe-less issue", func(t *testing.T) {
		ses := []Capture{{
			Waves: []wire.Wave{wave(2, 0, ins(wire.CatImmed, target, 10, 4, 10))},
			Other: []wire.OtherSIMD{{Time: 14, Cycles: 6, Category: wire.CatVMEM}, {Time: 0, Cycles: 0, Category: wire.CatVMEM}},
		}}
		res := analyze(t, ses, nil)
		if got := res.ByPC[target]; got != (Latency{0, 0, 6}) {
			t.Errorf("hidden %+v, want {0 0 6}", got)
		}
		checkOracle(t, ses, nil, res)
	})
	t.Run("zero other-SIMD cycles ignored", func(t *testing.T) {
		ses := []Capture{{
			Waves: []wire.Wave{wave(0, 0, ins(wire.CatImmed, target, 10, 4, 10))},
			Other: []wire.OtherSIMD{{Time: 11, Cycles: 0}, {Time: 14, Cycles: 0}},
		}}
		if got := analyze(t, ses, nil).ByPC[target]; got != (Latency{}) {
			t.Errorf("hidden %+v", got)
		}
		// A zero-length record would otherwise have made (11, 0) the
		// start of an interval that the span at 11 joins: check that the
		// positive record still counts.
		ses[0].Other = append(ses[0].Other, wire.OtherSIMD{Time: 11, Cycles: 3})
		if got := analyze(t, ses, nil).ByPC[target]; got != (Latency{0, 3, 0}) {
			t.Errorf("hidden %+v, want {0 3 0}", got)
		}
	})
	t.Run("unresolved PC never in the result", func(t *testing.T) {
		ses := []Capture{{Waves: []wire.Wave{wave(0, 0, ins(wire.CatImmed, wire.PC{}, 10, 4, 10), ins(wire.CatImmed, target, 30, 0, 4)),
			wave(0, 0, ins(wire.CatVALU, otherPC, 0, 0, 40))}}}
		res := analyze(t, ses, nil)
		if _, ok := res.ByPC[wire.PC{}]; ok {
			t.Error("(0, 0) in ByPC")
		}
		for _, m := range res.ByScope {
			if _, ok := m[wire.PC{}]; ok {
				t.Error("(0, 0) in ByScope")
			}
		}
		// The unresolved instruction still ends at 20: the target's idle
		// counts from there (10 cycles, all hidden by the VALU; 30 if the
		// unresolved instruction were skipped).
		if got := res.ByPC[target]; got != (Latency{10, 0, 4}) {
			t.Errorf("target %+v, want {10 0 4}", got)
		}
		checkOracle(t, ses, nil, res)
	})
	t.Run("bounds", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(11451, 0))
		for trial := range 64 {
			ses := randomCaptures(rng, 2, 3, 6, 20)
			res := analyze(t, ses, randomMatrix)
			// Bound per PC by the sums of its own stall and issue cycles.
			stall, issue := map[wire.PC]int64{}, map[wire.PC]int64{}
			for _, c := range ses {
				for _, w := range c.Waves {
					for _, in := range w.Instructions {
						st := int64(in.Stall)
						stall[in.PC] += st
						issue[in.PC] += max(st, int64(in.Duration)) - st
					}
				}
			}
			for pc, h := range res.ByPC {
				if h.Stall > stall[pc] || h.Issue > issue[pc] || h.Idle < 0 || h.Stall < 0 || h.Issue < 0 {
					t.Fatalf("trial %d PC %v: hidden %+v, stall %d, issue %d", trial, pc, h, stall[pc], issue[pc])
				}
			}
			checkOracle(t, ses, randomMatrix, res)
		}
	})
}

// TestScopes: results are kept per (shader engine, SIMD), and a PC adds
// up over scopes (issue 4 + 4 = 8).
func TestScopes(t *testing.T) {
	var ses []Capture
	for range 2 {
		ses = append(ses, Capture{Waves: []wire.Wave{
			wave(3, 0, ins(wire.CatVMEM, target, 10, 0, 4)), wave(3, 0, ins(wire.CatVALU, otherPC, 10, 0, 4)),
			wave(1, 0, ins(wire.CatSALU, otherPC, 0, 0, 2)),
		}})
	}
	res := analyze(t, ses, nil)
	if want := []Scope{{0, 1}, {0, 3}, {1, 1}, {1, 3}}; !reflect.DeepEqual(res.Scopes, want) {
		t.Errorf("scopes %v, want %v", res.Scopes, want)
	}
	for _, s := range []Scope{{0, 3}, {1, 3}} {
		if got := res.ByScope[s][target]; got != (Latency{0, 0, 4}) {
			t.Errorf("scope %v: %+v", s, got)
		}
	}
	if got := res.ByPC[target]; got != (Latency{0, 0, 8}) {
		t.Errorf("by PC %+v, want {0 0 8}", got)
	}
	if _, ok := res.ByScope[Scope{0, 1}][target]; ok {
		t.Error("target in a scope it never ran in")
	}
}

// TestPreviousEnd: the idle window starts at the previous instruction's
// end, not at the furthest end so far (which §4.1's idle uses).
func TestPreviousEnd(t *testing.T) {
	ses := []Capture{{Waves: []wire.Wave{
		wave(0, 0, ins(wire.CatSALU, otherPC, 0, 0, 10), ins(wire.CatSALU, otherPC, 2, 0, 2), ins(wire.CatImmed, target, 8, 0, 1)),
		wave(0, 0, ins(wire.CatVALU, wire.PC{CodeObjectID: 1, Address: 0x300}, 0, 0, 20)),
	}}}
	res := analyze(t, ses, nil)
	if got := res.ByPC[target]; got != (Latency{4, 0, 1}) {
		t.Errorf("hidden %+v, want idle 4 (from 4 to 8), issue 1", got)
	}
	checkOracle(t, ses, nil, res)
}

var randomPCs = func() []wire.PC {
	var pcs []wire.PC
	for i := range 12 {
		pcs = append(pcs, wire.PC{CodeObjectID: 1 + uint64(i%2), Address: 0x100 + 4*uint64(i)})
	}
	return append(pcs, wire.PC{})
}()

func randomMatrix(pc wire.PC) bool { return pc.CodeObjectID == 2 && pc.Address%16 == 0 }

var randomCats = []wire.InstCategory{wire.CatNone, wire.CatSMEM, wire.CatSALU, wire.CatVMEM, wire.CatFLAT, wire.CatLDS,
	wire.CatVALU, wire.CatVALU, wire.CatVALU, wire.CatJump, wire.CatNext, wire.CatImmed, wire.CatContext, wire.CatMessage,
	wire.CatBVH, wire.CatUnresolved}

// randomCaptures makes ses shader engines of waves on simds SIMDs, with
// up to n instructions a wave over a short time range, so that pipes
// overlap a lot. Durations may be below stalls.
func randomCaptures(rng *rand.Rand, ses, simds, waves, n int) []Capture {
	var out []Capture
	for range ses {
		var c Capture
		for range waves {
			w := wire.Wave{SIMD: uint8(rng.IntN(simds)), BeginTime: int64(rng.IntN(50))}
			t := w.BeginTime + int64(rng.IntN(5))
			for range rng.IntN(n + 1) {
				in := wire.Instruction{Category: randomCats[rng.IntN(len(randomCats))], PC: randomPCs[rng.IntN(len(randomPCs))],
					Time: t, Stall: uint32(rng.IntN(6)), Duration: int32(rng.IntN(12) - 1)}
				w.Instructions = append(w.Instructions, in)
				t += int64(rng.IntN(8))
			}
			c.Waves = append(c.Waves, w)
		}
		for range rng.IntN(6) {
			c.Other = append(c.Other, wire.OtherSIMD{Time: int64(rng.IntN(150)), Cycles: uint16(rng.IntN(10)), Category: wire.CatVMEM})
		}
		out = append(out, c)
	}
	return out
}

// TestRandomAgainstOracle: generated captures, every category, matrix
// PCs, other-SIMD records, several scopes.
func TestRandomAgainstOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(942, 0))
	for trial := range 200 {
		ses := randomCaptures(rng, 1+rng.IntN(3), 1+rng.IntN(4), 1+rng.IntN(8), 30)
		res := analyze(t, ses, randomMatrix)
		checkOracle(t, ses, randomMatrix, res)
		if t.Failed() {
			t.Fatalf("trial %d", trial)
		}
		// The per-scope results add up to the per-PC ones.
		sum := map[wire.PC]Latency{}
		for _, m := range res.ByScope {
			for pc, h := range m {
				s := sum[pc]
				s.Add(h)
				sum[pc] = s
			}
		}
		for pc, h := range res.ByPC {
			if sum[pc] != h {
				t.Fatalf("trial %d: scopes sum to %+v for %v, by PC %+v", trial, sum[pc], pc, h)
			}
		}
	}
}

// TestIntervalsAgainstOracle: the helpers against bitmaps, 256 random
// cases.
func TestIntervalsAgainstOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(942, 1))
	for trial := range 256 {
		var a, b []Span
		for range rng.IntN(12) {
			a = append(a, Span{int64(rng.IntN(60)), int64(rng.IntN(10))})
		}
		for range rng.IntN(12) {
			b = append(b, Span{int64(rng.IntN(60)), int64(rng.IntN(10))})
		}
		q := []int64{int64(rng.IntN(80) - 5), int64(rng.IntN(80)), int64(rng.IntN(6)), int64(rng.IntN(12))}
		if msg := checkIntervals(a, b, q); msg != "" {
			t.Fatalf("trial %d: %s", trial, msg)
		}
	}
}

// checkIntervals compares Coalesce (all at once and incrementally),
// Union, Covered and Window with the bitmaps for spans a and b and a
// window query q (last, clock, stall, cycles); it returns what differs.
func checkIntervals(a, b []Span, q []int64) string {
	lo, hi := int64(0), int64(1)
	for _, s := range slices.Concat(a, b) {
		lo, hi = min(lo, s.Start), max(hi, s.Start+1)
	}
	for _, s := range slices.Concat(a, b) {
		hi += s.Len
	}
	for _, v := range q {
		lo, hi = min(lo, v), max(hi, v+1)
	}
	hi += q[2] + q[3] + 1
	ba, bb := queueBitmap(a, lo, hi), queueBitmap(b, lo, hi)
	ca, cb := Coalesce(slices.Clone(a)), Coalesce(slices.Clone(b))
	inc := coalescer{every: 3}
	for _, s := range a {
		inc.add(s)
	}
	if got := inc.intervals(); !reflect.DeepEqual(nonEmpty(got), nonEmpty(ca)) || coveredOf(got) != coveredOf(ca) {
		return fmt.Sprintf("incremental %v, at once %v", got, ca)
	}
	u := Union(ca, cb)
	for i := 1; i < len(u); i++ {
		if u[i].Start() <= u[i-1].End || u[i].Len <= 0 {
			return fmt.Sprintf("union %v not disjoint", u)
		}
	}
	la, lu := NewList(ca), NewList(u)
	bu := orBitmaps(ba, bb)
	for c := lo; c <= hi; c++ {
		if la.Covered(c) != ba.covered(c) {
			return fmt.Sprintf("coalesce %v of %v: covered(%d) = %d, bitmap %d", ca, a, c, la.Covered(c), ba.covered(c))
		}
		if lu.Covered(c) != bu.covered(c) {
			return fmt.Sprintf("union %v: covered(%d) = %d, bitmap %d", u, c, lu.Covered(c), bu.covered(c))
		}
	}
	// Backwards too, for the cursor.
	for c := hi; c >= lo; c -= 3 {
		if lu.Covered(c) != bu.covered(c) {
			return fmt.Sprintf("union %v: covered(%d) backwards = %d, bitmap %d", u, c, lu.Covered(c), bu.covered(c))
		}
	}
	last, clock, stall, cycles := q[0], q[1], q[2], max(q[2], q[3])
	i1, i2, i3 := bu.window(last, clock, stall, cycles, true)
	if got := Window(lu, last, clock, stall, cycles); got != (Latency{i1, i2, i3}) {
		return fmt.Sprintf("window(%v) of %v = %+v, bitmap %d %d %d", q, u, got, i1, i2, i3)
	}
	if got := ownWindow(lu, last, clock, stall); got != (Latency{i1, i2, 0}) {
		return fmt.Sprintf("own window(%v) of %v = %+v, bitmap %d %d", q, u, got, i1, i2)
	}
	return ""
}

func nonEmpty(ivs []Interval) []Interval {
	var out []Interval
	for _, iv := range ivs {
		if iv.Len > 0 {
			out = append(out, iv)
		}
	}
	return out
}

func coveredOf(ivs []Interval) int64 {
	var n int64
	for _, iv := range ivs {
		n += iv.Len
	}
	return n
}

// TestCoalescerAgrees: coalescing in steps (compacting every 1 to 3
// spans or by the default, with intervals of another coalescer and whole
// coalesced waves added) gives what coalescing everything at once gives,
// zero-length intervals included.
func TestCoalescerAgrees(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	compactions := 0
	for trial := range 300 {
		var all []Span
		var c, other coalescer
		c.every = trial % 4 // 0: the default
		for range rng.IntN(40) {
			s := Span{int64(rng.IntN(200)), int64(rng.IntN(9))}
			all = append(all, s)
			switch rng.IntN(4) {
			case 0:
				other.add(s)
			case 1:
				c.addIntervals(Coalesce([]Span{s}))
			default:
				done := c.done
				c.add(s)
				if c.done != done {
					compactions++
				}
			}
		}
		c.addIntervals(other.intervals()) // as the other-SIMD intervals join the VMEM pipe
		got, want := c.intervals(), Coalesce(all)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("trial %d: in steps %v, at once %v (spans %v)", trial, got, want, all)
		}
	}
	if compactions < 300 {
		t.Errorf("%d compactions while adding: want many", compactions)
	}
}

// FuzzIntervals checks the interval code against the bitmaps on spans
// and a query drawn from the input.
func FuzzIntervals(f *testing.F) {
	f.Add([]byte{0, 10, 2, 3, 20, 2, 255, 10, 10, 0, 5, 5, 10})
	f.Add([]byte{5, 0, 5, 3, 9, 0, 255, 1, 1, 8, 0, 0, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 256 {
			return
		}
		var a, b []Span
		cur := &a
		i := 0
		for ; i+1 < len(data); i += 2 {
			if data[i] == 255 {
				if cur == &b {
					break
				}
				cur = &b
				i--
				continue
			}
			*cur = append(*cur, Span{int64(int8(data[i])), int64(data[i+1] % 32)})
		}
		q := make([]int64, 4)
		for k := range q {
			if i+k < len(data) {
				q[k] = int64(int8(data[i+k]))
			}
		}
		q[2], q[3] = abs(q[2])%40, abs(q[3])%40
		if msg := checkIntervals(a, b, q); msg != "" {
			t.Fatal(msg)
		}
	})
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// FuzzAnalyze runs the whole analysis on records drawn from the input and
// compares it with the oracle.
func FuzzAnalyze(f *testing.F) {
	f.Add([]byte{6, 10, 4, 10, 6, 0, 0, 14, 3, 14, 0, 6})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 400 {
			return
		}
		var ses []Capture
		c := Capture{}
		w := wire.Wave{}
		for i := 0; i+3 < len(data); i += 4 {
			op := data[i]
			switch {
			case op >= 240: // new wave on SIMD op%4, or new shader engine
				if len(w.Instructions) > 0 {
					c.Waves = append(c.Waves, w)
				}
				w = wire.Wave{SIMD: op % 4, BeginTime: int64(data[i+1])}
				if op >= 252 {
					ses = append(ses, c)
					c = Capture{}
				}
			case op >= 200:
				c.Other = append(c.Other, wire.OtherSIMD{Time: int64(data[i+1]), Cycles: uint16(data[i+2] % 40), Category: wire.CatVMEM})
			default:
				w.Instructions = append(w.Instructions, wire.Instruction{
					Category: wire.InstCategory(op % 16), PC: randomPCs[int(op/16)%len(randomPCs)],
					Time: int64(data[i+1]), Stall: uint32(data[i+2] % 16), Duration: int32(int8(data[i+3])) % 40})
			}
		}
		if len(w.Instructions) > 0 {
			c.Waves = append(c.Waves, w)
		}
		ses = append(ses, c)
		res, err := Analyze(ses, randomMatrix)
		if err != nil {
			t.Fatal(err)
		}
		want := oracle(ses, randomMatrix)
		for pc, w := range want {
			if got := res.ByPC[pc]; got != (Latency{w[0], w[1], w[2]}) {
				t.Fatalf("PC %v: %+v, oracle %v", pc, got, w)
			}
		}
		if len(want) != len(res.ByPC) {
			t.Fatalf("%d PCs, oracle %d", len(res.ByPC), len(want))
		}
	})
}

// TestFileSpool: the spool in a file (written in per-scope sections much
// smaller than the spool) gives what the in-memory spool gives, and Close removes
// the file.
func TestFileSpool(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	ses := randomCaptures(rng, 3, 4, 300, 40)
	want := analyze(t, ses, randomMatrix)
	dir := t.TempDir()
	a := New(Options{Matrix: randomMatrix, SpoolDir: dir})
	a.window = 4096
	for se := range ses {
		a.AddOther(se, ses[se].Other)
		for i := range ses[se].Waves {
			if err := a.AddWave(se, &ses[se].Waves[i]); err != nil {
				t.Fatal(err)
			}
		}
	}
	got, err := a.Result()
	if err != nil {
		t.Fatal(err)
	}
	if a.spoolOff < 8*int64(a.window) {
		t.Fatalf("spool of %d bytes: want several windows of %d", a.spoolOff, a.window)
	}
	if !reflect.DeepEqual(got.ByPC, want.ByPC) {
		t.Errorf("file spool %v, memory %v", got.ByPC, want.ByPC)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("spool left behind: %v", ents)
	}
}

// TestCoalescerRadix: large compactions (nearly sorted or not, bucketed
// and insertion-sorted or radix-sorted in several digits, negative and
// huge starts) agree with Coalesce.
func TestCoalescerRadix(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	for _, spread := range []int64{100, 1 << 20, 1 << 40, -1, -2, -3} {
		var all []Span
		var c coalescer
		for k := range 20000 {
			var s Span
			switch spread {
			case -1: // anywhere
				s = Span{rng.Int64() - 1<<62, int64(rng.IntN(50))}
			case -2: // crowded buckets: the range is wide, the starts are not
				s = Span{rng.Int64N(1 << 20), int64(rng.IntN(50))}
				if k%5000 == 0 {
					s.Start = 1 << 50
				}
			case -3: // nearly sorted, as waves add them
				s = Span{int64(k*20) + rng.Int64N(200), int64(rng.IntN(50))}
			default:
				s = Span{rng.Int64N(spread) - spread/2, int64(rng.IntN(50))}
			}
			all = append(all, s)
			c.add(s)
		}
		if got, want := c.intervals(), Coalesce(all); !reflect.DeepEqual(got, want) {
			t.Errorf("spread %d: %d intervals in steps, %d at once", spread, len(got), len(want))
		}
	}
}

// TestEndSE: ending shader engines as they complete (the second pass then
// runs while later ones are added) gives the results of ending none, on
// one CPU and on several; adding to an ended shader engine is an error;
// Close without Result stops the second pass and removes the spool.
func TestEndSE(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	ses := randomCaptures(rng, 4, 3, 200, 30)
	run := func(end bool) *Result {
		a := New(Options{Matrix: randomMatrix, ByScope: true, SpoolDir: t.TempDir()})
		a.window = 2048
		defer a.Close()
		for se := range ses {
			a.AddOther(se, ses[se].Other)
			for i := range ses[se].Waves {
				if err := a.AddWave(se, &ses[se].Waves[i]); err != nil {
					t.Fatal(err)
				}
			}
			if end {
				if err := a.EndSE(se); err != nil {
					t.Fatal(err)
				}
			}
		}
		r, err := a.Result()
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	want := run(false)
	if len(want.ByPC) == 0 || len(want.Scopes) < 8 {
		t.Fatalf("%d PCs, %d scopes: want a real test", len(want.ByPC), len(want.Scopes))
	}
	for _, procs := range []int{1, 2, 4} {
		old := runtime.GOMAXPROCS(procs)
		got := run(true)
		runtime.GOMAXPROCS(old)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("GOMAXPROCS %d: ending each shader engine changes the result", procs)
		}
	}

	a := New(Options{Matrix: randomMatrix, InMemory: true})
	defer a.Close()
	if err := a.AddWave(0, &ses[0].Waves[0]); err != nil {
		t.Fatal(err)
	}
	if err := a.EndSE(0); err != nil {
		t.Fatal(err)
	}
	if err := a.AddWave(0, &ses[0].Waves[1]); err == nil || !strings.Contains(err.Error(), "after EndSE") {
		t.Errorf("AddWave after EndSE: %v", err)
	}
	if _, err := a.Result(); err == nil {
		t.Error("Result after a failed AddWave: no error")
	}

	dir := t.TempDir()
	b := New(Options{Matrix: randomMatrix, SpoolDir: dir})
	b.window = 1024
	for se := range ses {
		for i := range ses[se].Waves {
			if err := b.AddWave(se, &ses[se].Waves[i]); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.EndSE(se); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("spool left behind: %v", ents)
	}
}

// TestSpoolRecords: a wave's spool records, narrow and wide, decode to
// what went in; a cut record or an unknown PC number is an error, never a
// panic.
func TestSpoolRecords(t *testing.T) {
	type rec struct {
		id    uint32
		cat   wire.InstCategory
		dt    int64
		stall uint32
		dur   int32
	}
	recs := []rec{
		{1, wire.CatVALU, 4, 0, 8},
		{2, wire.CatSALU, 1<<14 - 1, 1<<13 - 1, 1<<13 - 1}, // the largest narrow record
		{3, wire.CatVMEM, 1 << 14, 0, 4},                   // wide: time
		{4, wire.CatLDS, -3, 0, 4},                         // wide: time going back
		{5, wire.CatSMEM, 0, 1 << 13, 4},                   // wide: stall
		{6, wire.CatFLAT, 0, 0, -1},                        // wide: negative duration
		{1 << 20, wire.CatJump, 0, 0, 1},                   // wide: PC number
		{7, wire.CatUnresolved + 1, 0, 0, 1},               // wide: category 15
		{8, wire.CatImmed, 1 << 40, 1<<32 - 1, 1<<31 - 1},  // wide: everything large
	}
	b := binary.LittleEndian.AppendUint64(nil, uint64(100))
	b = binary.LittleEndian.AppendUint64(b, uint64(len(recs)))
	narrow := 0
	for _, r := range recs {
		n := len(b)
		b = appendInst(b, r.id, r.cat, r.dt, r.stall, r.dur)
		if len(b)-n == 8 {
			narrow++
		}
	}
	if narrow != 2 {
		t.Fatalf("%d narrow records, want 2", narrow)
	}
	begin, ins, rest, err := decodeWave(b, nil, 1<<20+1)
	if err != nil || begin != 100 || len(rest) != 0 || len(ins) != len(recs) {
		t.Fatalf("decode: begin %d, %d instructions, %d bytes left, %v", begin, len(ins), len(rest), err)
	}
	clock := int64(100)
	for k, r := range recs {
		clock += r.dt
		want := inst{id: r.id, cat: r.cat, clock: clock, stall: int64(r.stall), cycle: max(int64(r.stall), int64(r.dur))}
		if ins[k] != want {
			t.Errorf("record %d: %+v, want %+v", k, ins[k], want)
		}
	}
	for n := range len(b) {
		if _, _, _, err := decodeWave(b[:n], nil, 1<<20+1); err == nil {
			t.Errorf("a wave cut to %d of %d bytes decodes", n, len(b))
		}
	}
	if _, _, _, err := decodeWave(b, nil, 1<<20); err == nil {
		t.Error("PC number 1<<20 of 1<<20 decodes")
	}
}
