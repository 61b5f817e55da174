package main

import (
	"testing"

	"github.com/attkit/attkit/internal/arch/archtest"
)

// TestArchMismatch: records of another family or gfx9 generation than the
// index's code objects (an index stream, or a code.json through its code
// objects) are refused with exit 3 naming both; --any-arch reads them.
func TestArchMismatch(t *testing.T) {
	archtest.Check(t, func(int) []string { return nil }, func(args []string) (int, string) {
		r := runTool(t, nil, args...)
		return r.code, r.stderr
	})
}
