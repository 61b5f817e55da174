package jq

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/attkit/attkit/internal/exitcode"
	"github.com/attkit/attkit/internal/wire"
)

// sample reads the JSON projection of one record of every type that
// internal/wire keeps as its golden file, one batch per record.
func sample(t *testing.T) (wire.Header, []wire.Batch) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "wire", "testdata", "all-types.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	rd := wire.NewReader(bytes.NewReader(data), "all-types.jsonl")
	var h wire.Header
	var bs []wire.Batch
	for rd.Scan() {
		switch rd.Kind() {
		case wire.KindHeader:
			h = *rd.Header()
		case wire.KindBatch:
			bs = append(bs, rd.Batch().Clone())
		}
	}
	if rd.Err() != nil || len(bs) < 13 {
		t.Fatalf("%d batches, %v", len(bs), rd.Err())
	}
	return h, bs
}

func records(b *wire.Batch) int {
	if !b.Type.Known() {
		return 1
	}
	return b.Len()
}

// TestAgreesWithRealJQ checks the --jq contract: a filter prints what
// `jq -c` prints on the tools' JSON output.
func TestAgreesWithRealJQ(t *testing.T) {
	jq, err := exec.LookPath("jq")
	if err != nil {
		t.Skip("jq not on PATH (apt-get install jq)")
	}
	h, bs := sample(t)
	// jq 1.6 prints integers above 2^53 as rounded doubles; gojq keeps them
	// exact. Keep the comparison to values both print alike.
	for i := range bs {
		for k := range bs[i].Events {
			bs[i].Events[k].Payload &= 1<<40 - 1
		}
		for k := range bs[i].Waves {
			for n := range bs[i].Waves[k].Instructions {
				bs[i].Waves[k].Instructions[n].PC.Address &= 1<<40 - 1
			}
		}
	}
	var jw wire.JSONWriter
	var projection []byte
	for i := range bs {
		projection = jw.AppendBatch(projection, &h, &bs[i])
	}
	in := filepath.Join(t.TempDir(), "in.jsonl")
	if err := os.WriteFile(in, projection, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{
		".",
		"select(.type == \"wave\") | .instructions[] | select(.category == \"valu\")",
		"select(.type == \"occupancy\") | {cu, simd, start}",
		"select(.type == \"event\") | .event_type",
		".type",
		"select(.type == \"marker\") | .name, .shaderdata.value",
		"select(.type == \"wave\") | [.timeline[].duration] | add",
		"empty",
		"select(.se == 0 and .run == 1) | keys",
	} {
		want, err := exec.Command(jq, "-c", f, in).Output()
		if err != nil {
			t.Fatalf("jq %q: %v", f, err)
		}
		flt, err := Compile(f)
		if err != nil {
			t.Fatal(err)
		}
		var got []byte
		for i := range bs {
			for k := 0; k < records(&bs[i]); k++ {
				if got, err = flt.AppendResults(got, &h, &bs[i], k); err != nil {
					t.Fatal(err)
				}
			}
		}
		if !bytes.Equal(got, want) {
			t.Errorf("filter %q:\n gojq: %s\n   jq: %s", f, got, want)
		}
	}
}

func TestApply(t *testing.T) {
	h, bs := sample(t)
	f, err := Compile(`.type != "occupancy" or .start == 1`)
	if err != nil {
		t.Fatal(err)
	}
	starts, ends := 0, 0
	for i := range bs {
		for _, o := range bs[i].Occupancy {
			if o.Start {
				starts++
			} else {
				ends++
			}
		}
		if err := f.Apply(&h, &bs[i]); err != nil {
			t.Fatal(err)
		}
		for _, o := range bs[i].Occupancy {
			if !o.Start {
				t.Errorf("an occupancy end passed the filter: %+v", o)
			}
			starts--
		}
		if bs[i].Type != wire.TypeOccupancy && bs[i].Empty() {
			t.Errorf("%v batch emptied", bs[i].Type)
		}
	}
	if starts != 0 || ends == 0 {
		t.Errorf("%d occupancy starts lost, %d ends in the sample", starts, ends)
	}
	g, _ := Compile(`.type == "gfxip" | not`)
	b := wire.Batch{Type: wire.TypeGFXIP, GFXIP: 9}
	if err := g.Apply(&h, &b); err != nil || !b.Empty() {
		t.Errorf("rejected gfxip batch: empty %v, %v", b.Empty(), err)
	}
}

// TestErrors: a program that does not compile is a usage error, one that
// fails on a record a processing error; both messages say --jq once.
func TestErrors(t *testing.T) {
	_, err := Compile("select((")
	var je *Error
	if !errors.As(err, &je) || exitcode.Of(err) != exitcode.Usage || err.Error() != "--jq: unexpected EOF" {
		t.Errorf("bad program: %v (exit %d)", err, exitcode.Of(err))
	}
	h, bs := sample(t)
	f, _ := Compile(`error("boom")`)
	_, err = f.AppendResults(nil, &h, &bs[0], 0)
	if exitcode.Of(err) != exitcode.Failed || err.Error() != "--jq: error: boom" {
		t.Errorf("failing program: %v (exit %d)", err, exitcode.Of(err))
	}
	if err := f.Apply(&h, &bs[0]); err == nil || err.Error() != "--jq: error: boom" {
		t.Errorf("failing program in Apply: %v", err)
	}
	halt, _ := Compile(`halt`)
	if out, err := halt.AppendResults(nil, &h, &bs[0], 0); err != nil || len(out) != 0 {
		t.Errorf("halt: %q, %v", out, err)
	}
}
