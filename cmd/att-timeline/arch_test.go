package main

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/attkit/attkit/internal/arch/archtest"
)

// TestArchMismatch: records of another family or gfx9 generation than the
// index's code objects (an index stream, or a code.json through its code
// objects) are refused with exit 3 naming both; --any-arch reads them.
func TestArchMismatch(t *testing.T) {
	dir := t.TempDir()
	archtest.Check(t, func(n int) []string { return []string{"-o", filepath.Join(dir, fmt.Sprintf("out%d.json", n))} }, func(args []string) (int, string) {
		code, _, stderr := runCmd(t, nil, args...)
		return code, stderr
	})
}
