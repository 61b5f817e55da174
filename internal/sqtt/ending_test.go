package sqtt_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/attkit/attkit/internal/sqtt"
	"github.com/attkit/attkit/internal/testutil"
	"github.com/attkit/attkit/internal/wire"
)

// endOf decodes data natively; it returns how the trace ended and the
// number of wave slots the records leave running, counted here from the
// occupancy records without EndWatch.
func endOf(t *testing.T, data []byte, compat bool) (sqtt.Ending, int) {
	t.Helper()
	var e sqtt.Ending
	running := map[[3]uint8]bool{}
	d := &sqtt.Decoder{Compat: sqtt.CompatIf(compat), Ended: func(x sqtt.Ending) { e = x }}
	err := d.Decode(context.Background(), bytes.NewReader(data), nil, func(b *wire.Batch) error {
		for _, o := range b.Occupancy {
			running[[3]uint8{o.CU, o.SIMD, o.WaveID}] = o.Start
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	open := 0
	for _, r := range running {
		if r {
			open++
		}
	}
	return e, open
}

// TestEndingRealTraces: no full real trace is cut (sqtt-format.md 1.7), in
// either mode; every cut of one whose records leave waves running is Cut
// with that many open waves; and the share of cuts that warn is what the
// spec states (15 cuts between 20% and 80% of every trace, every size from
// 40 to 154 bytes).
func TestEndingRealTraces(t *testing.T) {
	type count struct{ warned, cuts int }
	mid, small := map[string]*count{}, &count{}
	for _, c := range testutil.RealCorpus(t) {
		fam := c.Arch[:6]
		if mid[fam] == nil {
			mid[fam] = &count{}
		}
		for _, tr := range c.Traces {
			name := c.Name + "/" + filepath.Base(tr.File)
			data, err := os.ReadFile(tr.File)
			if err != nil {
				t.Fatal(err)
			}
			for _, compat := range []bool{false, true} {
				if e, _ := endOf(t, data, compat); e.Cut() || e.Bytes != int64(len(data)) || e.Warning() != "" {
					t.Errorf("%s (compat %v): the whole trace ends %+v", name, compat, e)
				}
			}
			cut := func(k int, n *count) {
				e, open := endOf(t, data[:k], false)
				if e.OpenWaves != open || open > 0 && !e.Cut() || e.Bytes != int64(k) {
					t.Errorf("%s cut to %d bytes: %+v, the records leave %d waves running", name, k, e, open)
				}
				n.cuts++
				if e.Cut() {
					n.warned++
				}
			}
			for i := range 15 {
				cut(len(data)*(20+60*i/14)/100, mid[fam])
			}
			for k := 40; k <= 154; k++ {
				cut(k, small)
			}
		}
	}
	all := &count{}
	for fam, n := range mid {
		t.Logf("%s: %d of %d cuts between 20%% and 80%% warn", fam, n.warned, n.cuts)
		all.warned += n.warned
		all.cuts += n.cuts
	}
	t.Logf("all: %d of %d cuts between 20%% and 80%% warn; %d of %d sizes from 40 to 154 bytes", all.warned, all.cuts, small.warned, small.cuts)
	// The figures of sqtt-format.md 1.7.
	if all.warned != 1300 || all.cuts != 1890 || small.warned != 8319 || small.cuts != 14490 {
		t.Errorf("the spec (1.7) says 1300 of 1890 and 8319 of 14490")
	}
}

// TestEndingWarning: the warning names the waves and tells a full buffer
// from a file cut afterwards.
func TestEndingWarning(t *testing.T) {
	for _, tc := range []struct {
		e    sqtt.Ending
		want []string
	}{
		{sqtt.Ending{Bytes: 96 << 20, OpenWaves: 12}, []string{"12 waves still running", "96 MiB, is a whole buffer", "--att-buffer-size"}},
		{sqtt.Ending{Bytes: 64<<20 + 8, OpenWaves: 1}, []string{"1 wave still running", "64 MiB", "probably filled"}},
		{sqtt.Ending{Bytes: 12345, InToken: true, MissingBits: 40}, []string{"inside a token (40 bits missing)", "12345 bytes, is no buffer size"}},
		{sqtt.Ending{Bytes: 1 << 20, InToken: true, MissingBits: 8, OpenWaves: 3}, []string{"inside a token (8 bits missing) with 3 waves"}},
	} {
		w := tc.e.Warning()
		for _, s := range tc.want {
			if !bytes.Contains([]byte(w), []byte(s)) {
				t.Errorf("%+v: %q lacks %q", tc.e, w, s)
			}
		}
	}
	if w := (sqtt.Ending{Bytes: 1 << 20}).Warning(); w != "" {
		t.Errorf("a whole trace warns %q", w)
	}
	for n, full := range map[int64]bool{1 << 20: true, 1<<20 + 8: true, 3 << 20: true, 1<<20 + 32: false, 4096: false, 8: false} {
		if sqtt.FullBufferSize(n) != full {
			t.Errorf("FullBufferSize(%d) = %v", n, !full)
		}
	}
}
