package testutil

import (
	"encoding/hex"
	"strings"
	"testing"
)

// The trace vectors of Appendix B of sqtt-format.md, as hex dumps printed
// there; Unhex turns them into bytes.
const (
	// VectorB1 is B.1: gfx9 without instrumentation.
	VectorB1 = `
11 a0 0f 00 00 00 00 00 05 18 10 00 00 00 05 1a
00 00 00 00 90 01 03 00 44 00 43 8c 44 00 50 00
0d 02 00 00 10 00 0a 00 20 00 0d 03 00 00 30 00
0d 02 00 00 1a 28 1d 02 00 00 1a 60 1d 01 00 00
20 00 0d 02 00 00 1a 28 1d 02 00 00 1a 68 1d 02
00 00 40 00 0a 20 1c 00 cd ab 00 00 1d 03 00 00
30 00 06 00 1e 10 00 04 c0 00 20 00 56 8c 00 00
00 00 00 00 00 00`

	// VectorB2 is B.2: the B.1 trace with code-object instrumentation and
	// a realtime timestamp.
	VectorB2 = `
11 a0 0f 00 00 00 00 00 02 80 42 c3 00 52 4f 43
02 80 42 c3 06 00 6a 18 02 80 42 c3 04 02 00 00
02 80 42 c3 00 10 00 00 02 80 42 c3 04 03 00 00
02 80 42 c3 00 00 00 00 02 80 42 c3 04 01 00 00
02 80 42 c3 00 01 00 00 02 80 42 c3 04 00 00 00
02 80 42 c3 1e 00 00 00 05 18 10 00 00 00 05 1a
00 00 00 00 90 01 03 00 44 00 43 8c 44 00 50 00
0d 02 00 00 10 00 0a 00 20 00 0d 03 00 00 30 00
0d 02 00 00 1a 28 1d 02 00 00 1a 60 1d 01 00 00
20 00 0d 02 00 00 1a 28 1d 02 00 00 1a 68 1d 02
00 00 40 00 0a 20 1c 00 cd ab 00 00 1d 03 00 00
02 80 43 c3 05 00 00 00 02 80 43 c3 10 00 00 00
02 80 43 c3 02 00 00 00 02 80 43 c3 20 00 00 00
30 00 06 00 1e 10 00 04 c0 00 20 00 56 8c 00 00
00 00 00 00 00 00`

	// VectorB3 is B.3: gfx12.
	VectorB3 = `
11 02 00 00 00 00 00 00 09 80 0c 00 20 00 00 00
09 80 0d 00 00 00 00 00 f8 f8 f8 f8 f8 18 0c 00
00 02 22 10 b0 01 74 01 00 2a a0 d0 05 f5 00 00
00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00`

	// VectorB4 is B.4: gfx11, with a barrier.
	VectorB4 = `
91 01 00 00 00 00 00 00 09 80 0c 00 20 00 00 00
09 80 0d 00 00 00 00 00 f8 f8 f8 f8 f8 18 0c 00
00 02 42 20 b0 01 74 01 00 52 40 21 05 26 3b 50
0f 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
00 00`
)

// UnhexErr turns a hex dump (bytes as hex pairs, any white space) into bytes.
func UnhexErr(s string) ([]byte, error) {
	return hex.DecodeString(strings.Join(strings.Fields(s), ""))
}

// Unhex is UnhexErr that fails the test on a malformed dump.
func Unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := UnhexErr(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
