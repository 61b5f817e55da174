package main

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestReadOnly: -only reads divergent.txt's lines per family and refuses
// lines it cannot use.
func TestReadOnly(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "divergent.txt")
	if err := os.WriteFile(good, []byte("gfx9 12 wave.EndTime\n\nrdna 7 occupancy.count (native fewer)\ngfx9 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := readOnly(good)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]int{"gfx9": {12, 3}, "rdna": {7}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("readOnly = %v, want %v", got, want)
	}
	for _, bad := range []string{"gfx10 1\n", "gfx9\n", "gfx9 x\n", "rdna -1\n"} {
		p := filepath.Join(dir, "bad.txt")
		if err := os.WriteFile(p, []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := readOnly(p); err == nil || !strings.Contains(err.Error(), "bad.txt:1") {
			t.Errorf("readOnly(%q) = %v, want an error naming bad.txt:1", bad, err)
		}
	}
}

// TestCheckOutside: reproducers must not be written into the repository.
func TestCheckOutside(t *testing.T) {
	if err := checkOutside("testdata-out"); err == nil {
		t.Error("an -out inside the repository was accepted")
	}
	if err := checkOutside(t.TempDir()); err != nil {
		t.Errorf("an -out outside the repository: %v", err)
	}
}

// TestUsage: bad flags and a missing library end with the documented exit
// codes before any decoding.
func TestUsage(t *testing.T) {
	t.Setenv("ROCPROF_TRACE_DECODER_LIB", "")
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"-arch", "gfx10"}, 2, `-arch "gfx10"`},
		{[]string{"extra"}, 2, "no arguments"},
		{[]string{"-n", "1"}, 4, "ROCPROF_TRACE_DECODER_LIB is not set"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(c.args, &stdout, &stderr); code != c.code || !strings.Contains(stderr.String(), c.msg) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, code, stderr.String(), c.code, c.msg)
		}
	}
}
