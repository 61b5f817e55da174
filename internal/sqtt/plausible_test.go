package sqtt_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/attkit/attkit/internal/exitcode"
	"github.com/attkit/attkit/internal/sqtt"
	"github.com/attkit/attkit/internal/sqttgen"
	"github.com/attkit/attkit/internal/testutil"
	"github.com/attkit/attkit/internal/wire"
)

// plausibleLayouts are the header layouts of every architecture the native
// decoder reads: the RDNA HEADER versions 1..4 and the gfx9 software
// header versions 4..6 (sqtt-format.md 1.2). Header bits beyond the ones
// Detect reads are random in each buffer.
var plausibleLayouts = []struct {
	name  string
	low   uint64 // the bits Detect reads
	fixed uint64 // their mask
}{
	{"gfx10 v1", 0x11 | 1<<7, 0x1FFF},
	{"gfx10 v2", 0x11 | 2<<7, 0x1FFF},
	{"gfx11", 0x11 | 3<<7, 0x1FFF},
	{"gfx12", 0x11 | 4<<7, 0x1FFF},
	{"gfx9 v4", 0x11 | 4<<13, 0xFFFF},
	{"gfx9 v5", 0x11 | 5<<13, 0xFFFF},
	{"gfx9 v6 legacy 0", 6 << 13, 0xFFFF},
}

// TestPlausibleRefusesRandomBodies: a valid header followed by random bytes
// (4 to 100 KB in all) is refused, exit code 3, in at least 99% of 300
// buffers of every layout (fixed seeds). On 478e79a there was no such
// check: att-decode decoded them all.
func TestPlausibleRefusesRandomBodies(t *testing.T) {
	const n = 300
	for i, l := range plausibleLayouts {
		rng := rand.New(rand.NewPCG(uint64(i), 22))
		refused := 0
		for range n {
			b := make([]byte, 4096+rng.IntN(100<<10-4096+1))
			for j := 0; j < len(b); j += 8 {
				var w [8]byte
				binary.LittleEndian.PutUint64(w[:], rng.Uint64())
				copy(b[j:], w[:])
			}
			h := rng.Uint64()&^l.fixed | l.low
			binary.LittleEndian.PutUint64(b, h)
			err := sqtt.CheckPlausible(b)
			var ie *sqtt.ImplausibleError
			switch {
			case err == nil:
			case errors.As(err, &ie) && exitcode.Of(err) == exitcode.Format:
				refused++
			default:
				t.Fatalf("%s: %v (%T), want an *ImplausibleError", l.name, err, err)
			}
		}
		t.Logf("%s: %d of %d random bodies refused", l.name, refused, n)
		if refused*100 < n*99 {
			t.Errorf("%s: %d of %d random bodies refused, want at least 99%%", l.name, refused, n)
		}
	}
}

// TestPlausibleRealTraces: no real trace is refused, nor any prefix of one
// (a trace cut short is warned about, not refused), nor a generated one of
// testdata.
func TestPlausibleRealTraces(t *testing.T) {
	gen, _ := filepath.Glob(filepath.Join("testdata", "rdna", "*.att"))
	gen = append(gen, filepath.Join("testdata", "b1.att"), filepath.Join("testdata", "b2.att"))
	for _, f := range gen {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := sqtt.CheckPlausible(data); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	n, cuts := 0, 0
	for _, c := range testutil.RealCorpus(t) {
		for _, tr := range c.Traces {
			data, err := os.ReadFile(tr.File)
			if err != nil {
				t.Fatal(err)
			}
			if err := sqtt.CheckPlausible(data); err != nil {
				t.Errorf("%s: %v", tr.File, err)
			}
			n++
			step := max(len(data)/40, 1)
			for k := 8; k < len(data); k += step {
				cuts++
				if err := sqtt.CheckPlausible(data[:k]); err != nil {
					t.Fatalf("%s cut to %d bytes: %v", tr.File, k, err)
				}
			}
		}
	}
	t.Logf("%d real traces and %d cuts of them pass", n, cuts)
}

// TestPlausiblePrefix: PlausiblePrefix reads the same prefix from a file and
// from a stream, hands a file back unchanged and a stream wrapped, and the
// reader it returns still holds every byte.
func TestPlausiblePrefix(t *testing.T) {
	data := make([]byte, sqtt.PlausibleScanBytes+1000)
	for i := range data {
		data[i] = byte(i * 7)
	}
	path := filepath.Join(t.TempDir(), "t.att")
	if err := os.WriteFile(path, data, 0o666); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, rest, err := sqtt.PlausiblePrefix(f)
	if err != nil || rest != io.Reader(f) || !bytes.Equal(p, data[:sqtt.PlausibleScanBytes]) {
		t.Fatalf("file: %d bytes, same reader %v, %v", len(p), rest == io.Reader(f), err)
	}
	all, _ := io.ReadAll(rest)
	if !bytes.Equal(all, data) {
		t.Fatalf("file: the reader gives %d bytes, want %d", len(all), len(data))
	}
	for _, size := range []int{0, 5, 100, len(data)} {
		p, rest, err = sqtt.PlausiblePrefix(io.MultiReader(bytes.NewReader(data[:size])))
		if err != nil || !bytes.Equal(p, data[:min(size, sqtt.PlausibleScanBytes)]) {
			t.Fatalf("stream of %d: prefix of %d bytes, %v", size, len(p), err)
		}
		all, _ = io.ReadAll(rest)
		if !bytes.Equal(all, data[:size]) {
			t.Fatalf("stream of %d: the reader gives %d bytes", size, len(all))
		}
	}
}

// TestPlausibleShortAndForeign: an empty buffer, a header alone, a header
// with a few random bytes, and headers the native decoder does not decode
// (unknown, MI400) pass: those are for the decoder to report.
func TestPlausibleShortAndForeign(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	body := make([]byte, 64)
	for i := range body {
		body[i] = byte(rng.Uint32())
	}
	for _, b := range [][]byte{
		nil,
		{0x91, 0x01, 0, 0, 0, 0, 0, 0},
		append([]byte{0x91, 0x01, 0, 0, 0, 0, 0, 0}, body...),
		append([]byte{0x91, 0x02, 0, 0, 0, 0, 0, 0}, bytes.Repeat(body, 200)...), // MI400
		append([]byte("not a trace at all"), bytes.Repeat(body, 200)...),
	} {
		if err := sqtt.CheckPlausible(b); err != nil {
			t.Errorf("%x...: %v", b[:min(len(b), 8)], err)
		}
	}
}

// BenchmarkCheckPlausible scans the 256 KiB prefix of a generated gfx11
// trace, the most the check reads of any trace.
func BenchmarkCheckPlausible(b *testing.B) {
	ix, err := wire.ReadIndexFile(filepath.Join("testdata", "rdna", "gfx1100.index"))
	if err != nil {
		b.Fatal(err)
	}
	data, _, err := sqttgen.GenerateRDNA(sqttgen.Config{Index: ix, Seed: 1, Instrument: true, TargetBytes: sqtt.PlausibleScanBytes},
		sqttgen.RDNA{GFXIP: 11})
	if err != nil {
		b.Fatal(err)
	}
	data = data[:min(len(data), sqtt.PlausibleScanBytes)]
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if err := sqtt.CheckPlausible(data); err != nil {
			b.Fatal(err)
		}
	}
}
