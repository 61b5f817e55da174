package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attkit/attkit/internal/isa"
	"github.com/attkit/attkit/internal/sqtt"
	"github.com/attkit/attkit/internal/sqttgen"
	"github.com/attkit/attkit/internal/wire"
)

// TestRun generates a trace with its expected records and checks that the
// native decoder gives those records.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	idx := "../../internal/sqttgen/testdata/gfx90a.index"
	att, rec := filepath.Join(dir, "x.att"), filepath.Join(dir, "x.rec")
	var out, errb bytes.Buffer
	if code := run([]string{"-index", idx, "-seed", "3", "-o", att, "-expect", rec, "-size", "300KB", "-all", "-wild"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "MB/s") {
		t.Errorf("summary %q", out.String())
	}
	trace, err := os.ReadFile(att)
	if err != nil || len(trace) < 300000 {
		t.Fatalf("trace: %d bytes, %v", len(trace), err)
	}
	f, err := os.Open(rec)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var want []wire.Batch
	rd := wire.NewReader(f, rec)
	for rd.Scan() {
		if rd.Kind() == wire.KindBatch {
			want = append(want, rd.Batch().Clone())
		}
	}
	if err := rd.Err(); err != nil {
		t.Fatal(err)
	}
	ix, err := wire.ReadIndexFile(idx)
	if err != nil {
		t.Fatal(err)
	}
	var got []wire.Batch
	err = sqtt.New().Decode(context.Background(), bytes.NewReader(trace), isa.NewTable(ix), func(b *wire.Batch) error {
		got = append(got, b.Clone())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if d := sqttgen.Diff(want, got); d != "" {
		t.Fatal(d)
	}
}

func TestUsage(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run(nil, &out, &errb); code != 2 {
		t.Errorf("no flags: exit %d, want 2", code)
	}
	if code := run([]string{"-index", "/nonexistent", "-o", filepath.Join(t.TempDir(), "x")}, &out, &errb); code != 1 {
		t.Errorf("missing index: exit %d, want 1", code)
	}
	for _, s := range []string{"12", "3KB", "100MB", "1g"} {
		if _, err := parseSize(s); err != nil {
			t.Errorf("parseSize(%q): %v", s, err)
		}
	}
	if _, err := parseSize("lots"); err == nil {
		t.Error("parseSize(lots): no error")
	}
}
