package main

import (
	"strings"
	"testing"

	"github.com/attkit/attkit/internal/arch/archtest"
)

// TestArchMismatch: records of another family or gfx9 generation than the
// index's code objects (an index stream, or a code.json through its code
// objects) are refused with exit 3 naming both; --any-arch reads them.
func TestArchMismatch(t *testing.T) {
	dir := t.TempDir()
	for _, c := range archtest.Cases(t, dir) {
		for _, any := range []bool{false, true} {
			args := []string{"--index", c.Index, c.Stream}
			want := c.Code
			if any {
				args, want = append([]string{"--any-arch"}, args...), 0
			}
			r := runTool(t, nil, args...)
			code, errs := r.code, r.stderr
			if code != want {
				t.Errorf("%s (--any-arch %v): exit %d, want %d; stderr %q", c.Name, any, code, want, errs)
				continue
			}
			for _, n := range c.Names {
				if !any && !strings.Contains(errs, n) {
					t.Errorf("%s: stderr %q does not name %s", c.Name, errs, n)
				}
			}
		}
	}
}
