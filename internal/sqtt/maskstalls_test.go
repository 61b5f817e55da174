package sqtt

import (
	"testing"

	"github.com/attkit/attkit/internal/wire"
)

// TestMaskStalls checks that maskStalls keeps the low 24 bits of every
// entry's Stall, and touches nothing else, for lengths below, at and past
// its four-entry turns (where the last entries are masked twice).
func TestMaskStalls(t *testing.T) {
	for n := range 11 {
		ins := make([]wire.Instruction, n)
		for i := range ins {
			ins[i] = wire.Instruction{Stall: 0xFF000000 | uint32(i)<<20 | 7, Duration: int32(i), Time: int64(i)}
		}
		maskStalls(ins)
		for i, in := range ins {
			want := wire.Instruction{Stall: uint32(i)<<20&0xFFFFFF | 7, Duration: int32(i), Time: int64(i)}
			if in != want {
				t.Errorf("n %d: entry %d is %+v, want %+v", n, i, in, want)
			}
		}
	}
}
