package sqtt_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attkit/attkit/internal/isa"
	"github.com/attkit/attkit/internal/sqtt"
	"github.com/attkit/attkit/internal/testutil"
	"github.com/attkit/attkit/internal/wire"
)

// The real-hardware corpus (../shared/real): traces recorded on Radeon RX
// 7900 XTX (gfx1100), an RDNA4 card (gfx1200) and Instinct MI350 (gfx950),
// with what AMD's 0.1.6 library decoded from each. These are the ground
// truth: the tests below need no library.

// realISA is a capture's code.json as the decoder's ISA.
func realISA(t *testing.T, c testutil.RealCapture) isa.Provider {
	t.Helper()
	raw, err := os.ReadFile(c.CodeJSON)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := wire.ParseCodeJSON(raw)
	if err != nil {
		t.Fatalf("%s: %v", c.CodeJSON, err)
	}
	return isa.NewTable(ix)
}

// realDecode decodes one real trace natively into att-decode's JSON
// projection (one record per line).
func realDecode(t *testing.T, d *sqtt.Decoder, p isa.Provider, tr testutil.RealTrace) []byte {
	t.Helper()
	data, err := os.ReadFile(tr.File)
	if err != nil {
		t.Fatal(err)
	}
	h := wire.Header{Trace: wire.Trace{SE: tr.ShaderEngine, Run: 1}}
	var jw wire.JSONWriter
	var out []byte
	err = d.Decode(context.Background(), bytes.NewReader(data), p, func(b *wire.Batch) error {
		out = jw.AppendBatch(out, &h, b)
		return nil
	})
	if err != nil {
		t.Fatalf("%s: %v", tr.File, err)
	}
	return out
}

// TestRealTraces016 decodes every real trace with the native decoder in
// 0.1.6 compatibility (as att-decode --compat 0.1.6 does) and requires AMD's
// 0.1.6 records exactly: the same records, fields and order, byte for byte
// in the JSON projection.
func TestRealTraces016(t *testing.T) {
	n := 0
	for _, c := range testutil.RealCorpus(t) {
		p := realISA(t, c)
		for _, tr := range c.Traces {
			name := c.Name + "/" + filepath.Base(tr.File)
			got := realDecode(t, &sqtt.Decoder{Compat: sqtt.Lib016, PoolLimit: -1}, p, tr)
			want, err := os.ReadFile(tr.Expected)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s: %s", name, firstLineDiff(got, want))
			}
			n++
		}
	}
	t.Logf("%d real traces equal AMD's 0.1.6 records", n)
}

func firstLineDiff(got, want []byte) string {
	g, w := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
	for i := 0; i < len(g) && i < len(w); i++ {
		if !bytes.Equal(g[i], w[i]) {
			j := 0
			for j < len(g[i]) && j < len(w[i]) && g[i][j] == w[i][j] {
				j++
			}
			from := max(j-80, 0)
			return fmt.Sprintf("record %d differs from byte %d:\n native ...%s\n    amd ...%s", i, j,
				g[i][from:min(j+120, len(g[i]))], w[i][from:min(j+120, len(w[i]))])
		}
	}
	return fmt.Sprintf("%d native records, %d amd records", len(g)-1, len(w)-1)
}

// TestRealTracesNewest decodes every real trace with the native decoder's
// default (newest library) behaviour, as att-decode does by default, and
// requires the newest library's records (expected-0.3.0/, see the corpus
// README) exactly: every record, field and order, byte for byte in the JSON
// projection.
func TestRealTracesNewest(t *testing.T) {
	n := 0
	for _, c := range testutil.RealCorpus(t) {
		p := realISA(t, c)
		for _, tr := range c.Traces {
			name := c.Name + "/" + filepath.Base(tr.File)
			got := realDecode(t, sqtt.New(), p, tr)
			want, err := os.ReadFile(expected030(tr))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s: %s", name, firstLineDiff(got, want))
			}
			n++
		}
	}
	t.Logf("%d real traces equal the newest library's records", n)
}

// expected030 is where the corpus keeps the newest library's (0.3.0)
// records of a trace.
func expected030(tr testutil.RealTrace) string {
	return filepath.Join(filepath.Dir(tr.File), "expected-0.3.0",
		strings.TrimSuffix(filepath.Base(tr.File), ".att")+".jsonl")
}
