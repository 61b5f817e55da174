package main

import (
	"encoding/binary"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestImplausibleRefused: a valid header followed by random bytes is
// refused with exit 3 and a message by every backend, before any decoder
// runs (--backend rocm with a stand-in library refuses too), from a file and
// from standard input. On 478e79a the native decoder gave exit 0 and
// fake waves (RDNA) for such buffers.
func TestImplausibleRefused(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	dir := t.TempDir()
	lib := rocmFixtureLib(t) // a stand-in library that would decode anything
	for _, h := range []uint64{0x11 | 3<<7, 0x11 | 4<<7, 0x11 | 2<<7, 0x11 | 5<<13} {
		b := make([]byte, 20<<10)
		for j := 0; j < len(b); j += 8 {
			binary.LittleEndian.PutUint64(b[j:], rng.Uint64())
		}
		binary.LittleEndian.PutUint64(b, h)
		path := filepath.Join(dir, "x.att")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{
			{"--backend", "native", path},
			{"--backend", "rocm", "--lib", lib, path},
			{"--backend", "auto", "--format", "json", path},
			{"--backend", "native", "-"},
		} {
			code, out, errs := runCmd(b, args...)
			if code != 3 || out != "" || !strings.Contains(errs, "not a plausible") ||
				!strings.HasPrefix(errs, "att-decode: ") {
				t.Errorf("header %#x, %q: exit %d, %d bytes out, stderr %q; want exit 3, no output, a message",
					h, args, code, len(out), errs)
			}
		}
	}
}
