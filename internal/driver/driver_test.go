package driver

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/attkit/attkit/internal/exitcode"
	"github.com/attkit/attkit/internal/testutil"
	"github.com/attkit/attkit/internal/wire"
)

func TestParseCodeObject(t *testing.T) {
	co, err := parseCodeObject("3=/a/b@c.co@0x7000")
	if err != nil || co.id != 3 || co.path != "/a/b@c.co" || co.addr != 0x7000 {
		t.Errorf("%+v %v", co, err)
	}
	for _, s := range []string{"3", "x=a@1", "3=a", "3=@1", "3=a@zz"} {
		if _, err := parseCodeObject(s); err == nil {
			t.Errorf("%q accepted", s)
		}
	}
}

// recorder is a Sink that keeps what it is given.
type recorder struct {
	hdr     *wire.Header
	batches int
}

func (r *recorder) Header(h *wire.Header) error { c := *h; r.hdr = &c; return nil }
func (r *recorder) Batch(b *wire.Batch) error   { r.batches++; return nil }

// TestDecode: the header is stamped (producer, backend, trace, GFXIP), the
// architecture rule refuses a trace of another GPU than the index's code
// objects with exit code 3 before the sink sees anything, and an empty
// trace gets its header and a warning.
func TestDecode(t *testing.T) {
	var warnings []string
	d, err := New(Options{Backend: "native", Producer: "test 1", Warn: func(tr, text string) {
		warnings = append(warnings, tr+": "+text)
	}})
	if err != nil {
		t.Fatal(err)
	}
	b1 := testutil.Unhex(t, testutil.VectorB1) // a gfx9 trace
	var r recorder
	res, err := d.Decode(context.Background(), Trace{Name: "b1.att", Header: wire.Trace{Path: "b1.att", SE: 2, Run: 3},
		Input: bytes.NewReader(b1)}, &r)
	if err != nil || r.hdr == nil || r.hdr.Producer != "test 1" || r.hdr.Backend == "" || r.hdr.Trace.SE != 2 ||
		r.hdr.Trace.Run != 3 || r.hdr.Trace.GFXIP != 9 || r.batches == 0 || res.Bytes != int64(len(b1)) {
		t.Fatalf("decode: %v, header %+v, %d batches, %+v", err, r.hdr, r.batches, res)
	}

	rdna := NewCode(&wire.Index{Objects: []wire.CodeObject{{Path: "k.hsaco", Target: "gfx1100"}}})
	r = recorder{}
	_, err = d.Decode(context.Background(), Trace{Name: "b1.att", Input: bytes.NewReader(b1), Code: rdna}, &r)
	want := "b1.att: a gfx9 trace, but the code objects are for gfx1100: give the code objects of this trace's GPU, or --any-arch"
	if err == nil || err.Error() != want || exitcode.Of(err) != exitcode.Format || r.hdr != nil || r.batches != 0 {
		t.Errorf("arch mismatch: %v (exit %d), sink %+v; want %q", err, exitcode.Of(err), r, want)
	}

	r = recorder{}
	warnings = nil
	res, err = d.Decode(context.Background(), Trace{Name: "e.att", Input: strings.NewReader("")}, &r)
	if err != nil || r.hdr == nil || !res.Empty || len(warnings) != 1 || warnings[0] != "e.att: empty trace, no records" {
		t.Errorf("empty trace: %v %+v %q", err, res, warnings)
	}
}
