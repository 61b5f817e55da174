package driver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/attkit/attkit/internal/backend"
	"github.com/attkit/attkit/internal/isa"
	"github.com/attkit/attkit/internal/sqtt"
	"github.com/attkit/attkit/internal/sqttgen"
	"github.com/attkit/attkit/internal/testutil"
	"github.com/attkit/attkit/internal/wire"
)

// pipeBounds are the split decode's bounds the tests run: every batch
// handed over and waited for, every item in a chunk of its own, small
// chunks with the larger batches handed over, and the defaults (0).
var pipeBounds = []struct{ chunkLen, bigLen int }{
	{1, -1}, {1, 1 << 30}, {7, 3}, {40, 200}, {0, 0},
}

// pipeTrace is one trace of the identity tests, with its instructions.
type pipeTrace struct {
	name string
	data []byte
	prov isa.Provider
	ix   *wire.Index
}

// generatedTraces are small traces of every family the generator makes,
// with and without the optional tokens, cut short or not.
func generatedTraces(t *testing.T) []pipeTrace {
	t.Helper()
	var out []pipeTrace
	add := func(name string, ix *wire.Index, data []byte, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out = append(out, pipeTrace{name, data, isa.NewTable(ix), ix})
	}
	index := func(name string) *wire.Index {
		t.Helper()
		ix, err := wire.ReadIndexFile(filepath.Join("..", "sqttgen", "testdata", name+".index"))
		if err != nil {
			t.Fatal(err)
		}
		return ix
	}
	for _, v := range []uint8{4, 5, 6} {
		ix := index(map[uint8]string{4: "gfx90a", 5: "gfx942", 6: "gfx942"}[v])
		for i, g := range []sqttgen.GFX9{
			{Version2: v},
			{Version2: v, Perf: true, PerfInterval: 300, Pipeline: true, ContextSwitch: true, MergeIssues: true, Traps: true, Replays: true},
		} {
			cfg := sqttgen.Config{Index: ix, Seed: uint64(v) + uint64(i), Instrument: true, LateLoad: i == 1,
				ShaderData: i == 1, Dispatch: i == 1, Events: i == 1, PacketLoss: i == 1, TargetBytes: 96 << 10, GFX9: g}
			data, _, err := sqttgen.Generate(cfg)
			add(fmt.Sprintf("gfx9-v%d-%d", v, i), ix, data, err)
			cfg.TargetBytes, cfg.Truncate = 0, true
			data, _, err = sqttgen.Generate(cfg)
			add(fmt.Sprintf("gfx9-v%d-%d-truncated", v, i), ix, data, err)
		}
	}
	for _, gen := range []int{10, 11, 12} {
		ix := index(map[int]string{10: "gfx1030", 11: "gfx1100", 12: "gfx1201"}[gen])
		for i, r := range []sqttgen.RDNA{
			{GFXIP: gen},
			{GFXIP: gen, ExtStarts: true, OtherSIMD: gen >= 11, Noise: true, Reorder: true, ContextSwitch: true},
		} {
			cfg := sqttgen.Config{Index: ix, Seed: uint64(gen) + uint64(i), Instrument: true, LateLoad: i == 1,
				ShaderData: i == 1, Dispatch: i == 1, Events: i == 1, TargetBytes: 96 << 10}
			data, _, err := sqttgen.GenerateRDNA(cfg, r)
			add(fmt.Sprintf("gfx%d-%d", gen, i), ix, data, err)
			cfg.TargetBytes, cfg.Truncate = 0, true
			data, _, err = sqttgen.GenerateRDNA(cfg, r)
			add(fmt.Sprintf("gfx%d-%d-truncated", gen, i), ix, data, err)
		}
	}
	return out
}

// realTraces are the traces of the real-hardware corpus (skipped when it
// is absent).
func realTraces(t *testing.T) []pipeTrace {
	t.Helper()
	var out []pipeTrace
	for _, c := range testutil.RealCorpus(t) {
		raw, err := os.ReadFile(c.CodeJSON)
		if err != nil {
			t.Fatal(err)
		}
		ix, err := wire.ParseCodeJSON(raw)
		if err != nil {
			t.Fatalf("%s: %v", c.CodeJSON, err)
		}
		for _, tr := range c.Traces {
			data, err := os.ReadFile(tr.File)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, pipeTrace{c.Name + "/" + tr.File, data, isa.NewTable(ix), ix})
		}
	}
	return out
}

// wireEmit returns an Emit that encodes every batch as att-decode writes
// it, and the function that returns the bytes.
func wireEmit() (backend.Emit, func() []byte) {
	var buf bytes.Buffer
	w := wire.NewWriter(&buf)
	return w.WriteBatch, func() []byte {
		w.Flush()
		return buf.Bytes()
	}
}

// decodeBoth decodes data on one core and split over two with the given
// bounds, and fails unless both give the same bytes and the same error.
func decodeBoth(t *testing.T, name string, dec *sqtt.Decoder, data []byte, p isa.Provider) {
	t.Helper()
	emit, serial := wireEmit()
	errSerial := dec.Decode(context.Background(), bytes.NewReader(data), p, emit)
	want := serial()
	for _, b := range pipeBounds {
		emit, split := wireEmit()
		two := *dec
		two.Split, two.SplitChunk, two.SplitBig = true, b.chunkLen, b.bigLen
		err := two.Decode(context.Background(), bytes.NewReader(data), p, emit)
		if got := split(); !bytes.Equal(got, want) {
			t.Errorf("%s, chunks %d/%d: the split decode's records differ from one core's (%d bytes, want %d): %s",
				name, b.chunkLen, b.bigLen, len(got), len(want), testutil.FirstDiff(got, want))
		}
		if fmt.Sprint(err) != fmt.Sprint(errSerial) {
			t.Errorf("%s, chunks %d/%d: error %v, one core's %v", name, b.chunkLen, b.bigLen, err, errSerial)
		}
	}
}

// TestPipeIdentical: a split decode (two cores) gives the records of one
// core, byte for byte (batches, their order and boundaries included), on
// every generated family and every real trace, in both compat modes, with
// the pools flushed early (PoolLimit 5, 64), at the default and at the
// trace's end, for whole traces and traces cut anywhere (inside a token,
// inside a wave, mid-batch), under every chunk bound.
func TestPipeIdentical(t *testing.T) {
	traces := generatedTraces(t)
	if testutil.RealDir() != "" {
		traces = append(traces, realTraces(t)...)
	}
	for _, tr := range traces {
		for _, compat := range []sqtt.Compat{sqtt.Newest, sqtt.Lib016} {
			for _, limit := range []int{0, -1, 5, 64} {
				dec := &sqtt.Decoder{Compat: compat, PoolLimit: limit}
				name := fmt.Sprintf("%s %v pool %d", tr.name, compat, limit)
				decodeBoth(t, name, dec, tr.data, tr.prov)
				if limit == 5 {
					for _, cut := range []int{len(tr.data) / 3, len(tr.data)/2 + 1, len(tr.data) - 3} {
						decodeBoth(t, fmt.Sprintf("%s cut at %d", name, cut), dec, tr.data[:cut], tr.prov)
					}
				}
			}
		}
	}
}

// streamSink writes what a decode gives as att-decode does, and fails the
// batch failAt (counting from 1; 0 never).
type streamSink struct {
	buf    bytes.Buffer
	w      *wire.Writer
	n      int
	failAt int
}

func newStreamSink(failAt int) *streamSink {
	s := &streamSink{failAt: failAt}
	s.w = wire.NewWriter(&s.buf)
	return s
}

func (s *streamSink) Header(h *wire.Header) error { return s.w.WriteHeader(h) }

var errFull = errors.New("disk full")

func (s *streamSink) Batch(b *wire.Batch) error {
	if s.n++; s.n == s.failAt {
		return errFull
	}
	return s.w.WriteBatch(b)
}

func (s *streamSink) bytes() []byte {
	s.w.Flush()
	return s.buf.Bytes()
}

// TestDecodeCores: through the Driver, one core and two give the same
// stream (header included) and the same Result, also when the sink fails
// mid-stream (the same batches written before, its error returned) and
// when the architecture check refuses the trace at its first batch.
func TestDecodeCores(t *testing.T) {
	traces := generatedTraces(t)
	for _, tr := range []pipeTrace{traces[2], traces[len(traces)-2]} {
		batches := 0
		run := func(cores, failAt int, code *Code) ([]byte, Result, error) {
			d, err := New(Options{Backend: "native", Producer: "test", Cores: cores})
			if err != nil {
				t.Fatal(err)
			}
			d.chunkLen, d.bigLen = 5, 20 // small: many hand-overs
			s := newStreamSink(failAt)
			res, err := d.Decode(context.Background(), Trace{Name: tr.name, Input: bytes.NewReader(tr.data), Code: code}, s)
			batches = s.n
			return s.bytes(), res, err
		}
		run(1, 0, NewCode(tr.ix))
		if batches < 8 {
			t.Fatalf("%s: only %d batches", tr.name, batches)
		}
		for _, failAt := range []int{0, 1, 2, batches / 2, batches} {
			want, wantRes, wantErr := run(1, failAt, NewCode(tr.ix))
			got, res, err := run(2, failAt, NewCode(tr.ix))
			if !bytes.Equal(got, want) || fmt.Sprint(res) != fmt.Sprint(wantRes) {
				t.Errorf("%s, sink failing at %d: two cores: %d bytes, %+v, %v; one: %d bytes, %+v, %v (%s)",
					tr.name, failAt, len(got), res, err, len(want), wantRes, wantErr, testutil.FirstDiff(got, want))
			}
			if fmt.Sprint(err) != fmt.Sprint(wantErr) || (failAt > 0) != errors.Is(err, errFull) {
				t.Errorf("%s, sink failing at %d: error %v, one core's %v", tr.name, failAt, err, wantErr)
			}
		}
		other := NewCode(&wire.Index{Objects: []wire.CodeObject{{Path: "k.hsaco", Target: "gfx1030"}}})
		if tr.name[:4] != "gfx9" {
			other = NewCode(&wire.Index{Objects: []wire.CodeObject{{Path: "k.hsaco", Target: "gfx942"}}})
		}
		want, _, wantErr := run(1, 0, other)
		got, _, err := run(2, 0, other)
		if wantErr == nil || fmt.Sprint(err) != fmt.Sprint(wantErr) || !bytes.Equal(got, want) {
			t.Errorf("%s, other GPU's code: two cores: %v, %d bytes; one: %v, %d bytes", tr.name, err, len(got), wantErr, len(want))
		}
	}
}

// TestPipelineBudget: a decode takes a spare core for its split, and
// gives it back when done; without one (Cores 1, or AtOnce decodes using
// them all, or another decode holding it) it runs on one core.
func TestPipelineBudget(t *testing.T) {
	for _, c := range []struct {
		cores, atOnce int
		want          []bool // for decodes started one after another, all running
	}{
		{1, 0, []bool{false, false}},
		{2, 0, []bool{true, false}},
		{2, 2, []bool{false, false}},
		{4, 2, []bool{true, true, false}},
	} {
		d, err := New(Options{Backend: "native", Cores: c.cores, AtOnce: c.atOnce})
		if err != nil {
			t.Fatal(err)
		}
		var stops []func()
		for i, want := range c.want {
			got, stop := d.splitCore()
			stops = append(stops, stop)
			if got != want {
				t.Errorf("cores %d, at once %d: decode %d split %v, want %v", c.cores, c.atOnce, i, got, want)
			}
		}
		for _, stop := range stops {
			stop()
		}
		if got, want := d.spare.Load(), int64(c.cores-max(c.atOnce, 1)); got != want {
			t.Errorf("cores %d, at once %d: %d spare after the decodes, want %d", c.cores, c.atOnce, got, want)
		}
	}
}

// batchSink records which batches it was handed.
type batchSink struct{ seen map[*wire.Batch]bool }

func (s *batchSink) Header(*wire.Header) error { return nil }
func (s *batchSink) Batch(b *wire.Batch) error { s.seen[b] = true; return nil }

// TestThreadedNotPiped: the rocm backend, which parses on a thread of its
// own, hands its batches to the sink itself even with a core spare, and
// leaves the spare core alone.
func TestThreadedNotPiped(t *testing.T) {
	lib := os.Getenv("ROCPROF_TRACE_DECODER_LIB")
	if lib == "" {
		t.Skip("set ROCPROF_TRACE_DECODER_LIB to AMD's rocprof-trace-decoder library")
	}
	tr := generatedTraces(t)[0]
	d, err := New(Options{Backend: "rocm", Lib: lib, Producer: "test", Cores: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	s := &batchSink{seen: map[*wire.Batch]bool{}}
	if _, err := d.Decode(context.Background(), Trace{Name: tr.name, Input: bytes.NewReader(tr.data), Code: NewCode(tr.ix)}, s); err != nil {
		t.Fatal(err)
	}
	if len(s.seen) != 1 || d.spare.Load() != 1 {
		t.Errorf("the sink saw %d distinct batches (want the decoder's one, reused), %d cores spare after (want 1)", len(s.seen), d.spare.Load())
	}
}
