package sqtt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/attkit/attkit/internal/isa"
	"github.com/attkit/attkit/internal/testutil"
	"github.com/attkit/attkit/internal/wire"
)

// FuzzDecode feeds arbitrary bytes to the decoder: it must never panic or
// hang, and it may only fail with the documented errors.
func FuzzDecode(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.att"))
	for _, p := range files {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	for _, tr := range seedTraces() {
		f.Add(tr)
	}
	f.Add([]byte{})
	f.Add([]byte{0x11, 0xa0, 0, 0, 0, 0, 0, 0, 0x01})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<16 {
			return
		}
		isa := newTable(0, b1Rows(0x1000)...)
		for pc, e := range newTable(7, b1Rows(0)...).m {
			isa.m[pc] = e
		}
		// Odd lengths also cover the 0.1.6 mode and small pools.
		d := &Decoder{Compat: CompatIf(len(data)%2 == 1), PoolLimit: 1 + len(data)%3*8}
		fuzzDecode(t, d, data, isa)
		splitMatches(t, *d, data, isa)
		scanMatchesRead(t, data, isa)
	})
}

// fuzzDecode is the check of both fuzz targets: d decodes data in at most
// 5 seconds, without panicking, GFXIP first, and fails only with the
// documented errors.
func fuzzDecode(t *testing.T, d *Decoder, data []byte, p isa.Provider) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	defer func() {
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("decoding %d bytes took %v", len(data), d)
		}
	}()
	n := 0
	err := d.Decode(ctx, bytes.NewReader(data), p, func(b *wire.Batch) error {
		n++
		if n == 1 && b.Type != wire.TypeGFXIP {
			t.Fatalf("first batch is %v", b.Type)
		}
		return nil
	})
	var ae *ArchError
	var de *DataError
	if err != nil && !errors.As(err, &ae) && !errors.As(err, &de) {
		t.Fatalf("unexpected error %v", err)
	}
}

// splitMatches checks that a split decode (Decoder.Split: the tokens read
// on one goroutine, the waves stitched and emitted on another) writes the
// record stream of a one-goroutine decode of data, byte for byte, and
// fails with the same error: with the default bounds, with chunks of 3
// elements and every batch handed over without a copy, and with an RDNA
// decode's token scan all done by the back (Decoder.backScans).
func splitMatches(t *testing.T, d Decoder, data []byte, p *table) {
	t.Helper()
	stream := func(d *Decoder) ([]byte, error) {
		var buf bytes.Buffer
		w := wire.NewWriter(&buf)
		err := d.Decode(context.Background(), bytes.NewReader(data), provider(p), w.WriteBatch)
		if ferr := w.Flush(); ferr != nil {
			t.Fatal(ferr)
		}
		return buf.Bytes(), err
	}
	want, werr := stream(&d)
	for _, bounds := range [][3]int{{0, 0, 0}, {3, -1, 0}, {0, 0, 1}} {
		s := d
		s.Split, s.SplitChunk, s.SplitBig, s.backScans = true, bounds[0], bounds[1], bounds[2] == 1
		got, err := stream(&s)
		if fmt.Sprint(err) != fmt.Sprint(werr) || !bytes.Equal(got, want) {
			t.Fatalf("%v, pool limit %d, split bounds %v: the split decode differs: error %v, want %v; %d bytes of records, want %d", d.Compat, d.PoolLimit, bounds, err, werr, len(got), len(want))
		}
	}
}

// seedTraces are the hand-built traces of the scenario tests.
func seedTraces() [][]byte {
	var out [][]byte
	for _, s := range []string{testutil.VectorB1, testutil.VectorB2} {
		b, _ := testutil.UnhexErr(s)
		out = append(out, b)
	}
	out = append(out,
		withCodeObject().at(100).waveStart(0, 0, 0, 1, 0, 1, 0).
			at(120).issue1(isInst).at(124).inst(0, 0, instVALU32).
			at(140).misc(0, miscSaveContext).
			at(164).waveStart(0, 0, 0, 1, 0, 70, 0).
			at(200).waveStart(0, 0, 0, 1, 0, 70, 0).
			at(208).inst(0, 0, instPC).instPC(0, 0, 0x1004).
			at(220).issue1(isInst).at(224).inst(0, 0, instVALU32).
			at(236).issue1(isImmed).at(244).waveEnd(0, 0, 0).bytes(),
		newTB(5, 0, false).roc().ud2(opAgentInfo, 1, 64).pgm(1, 0, 0x1000).
			at(100).waveStart(0, 0, 0, 1, 0, 1, 0).
			at(120).issue1(isInst).at(124).inst(0, 0, instVMEMRd).
			at(140).issue1(isInst).at(144).inst(0, 0, instVALU32).
			at(176).issue1(isInst).at(180).inst(0, 0, 21).
			at(184).perf(0, 0, [4]uint64{1, 2, 3, 4}).
			misc(0, miscTimeReset).misc(3, miscTime).timeTok(5000).
			at(208).waveEnd(0, 0, 0).bytes(),
	)
	return out
}
