package sqtt

import (
	"bytes"
	"context"
	"testing"

	"github.com/attkit/attkit/internal/wire"
)

// ending decodes data natively and returns how it ended.
func ending(t *testing.T, data []byte, compat bool) Ending {
	t.Helper()
	var e Ending
	called := 0
	d := &Decoder{Compat: CompatIf(compat), Ended: func(x Ending) { e = x; called++ }}
	if err := d.Decode(context.Background(), bytes.NewReader(data), nil, func(*wire.Batch) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if called != 1 {
		t.Fatalf("Ended called %d times", called)
	}
	return e
}

// TestEndingInToken: a buffer that ends inside a token is InToken with
// the missing bits, one that ends inside a TIMESTAMP or on a token boundary
// is not (sqtt-format.md 1.7), on every generation and in both modes.
func TestEndingInToken(t *testing.T) {
	for _, gen := range []int{10, 11, 12} {
		version := map[int]int{10: 2, 11: 3, 12: 4}[gen]
		start := func() *rb {
			return newRB(gen).header(version, 0, 0, 0, 0, 0, 0).at(10).waveStart(0, 1, 2, 3, 0, 0, 0)
		}
		whole := start().at(20).reg(false, 0, 0, 0x1234, 7).waveEnd(0, 1, 2, 3).pad()
		tsBits := map[int]int{10: 64, 11: 48, 12: 64}[gen]
		for _, compat := range []bool{false, true} {
			if e := ending(t, whole, compat); e.Cut() || e.Bytes != int64(len(whole)) {
				t.Errorf("gfx%d compat %v: a whole trace: %+v", gen, compat, e)
			}
			// A REG token cut 3 bytes before its end, a wave running.
			reg := start().at(20).reg(false, 0, 0, 0x1234, 7).bytes()
			if e := ending(t, reg[:len(reg)-3], compat); !e.InToken || e.MissingBits < 24 || e.OpenWaves != 1 {
				t.Errorf("gfx%d compat %v: a cut REG: %+v, want InToken, 24 or more bits, 1 open wave", gen, compat, e)
			}
			// A TIMESTAMP cut the same way is how real buffers end.
			ts := start().at(20).tok(0b0000001, tsBits, 0, -1, 0).bytes()
			if e := ending(t, ts[:len(ts)-3], compat); e.InToken || e.OpenWaves != 1 {
				t.Errorf("gfx%d compat %v: a cut TIMESTAMP: %+v, want not InToken, 1 open wave", gen, compat, e)
			}
		}
	}
	// gfx9: fewer bytes than the token's type needs.
	b1 := append([]byte{0x11, 0xA0, 0, 0, 0, 0, 0, 0}, 0x02, 0, 0, 0, 0, 0, 0) // a REG cut to 7 of 8 bytes
	if e := ending(t, b1, false); !e.InToken || e.MissingBits != 8 {
		t.Errorf("gfx9 cut REG: %+v", e)
	}
	if e := ending(t, b1[:8+6], false); !e.InToken || e.MissingBits != 16 {
		t.Errorf("gfx9 cut REG (6 bytes): %+v", e)
	}
	if e := ending(t, append(b1[:8:8], 0, 0, 0, 0), false); e.Cut() {
		t.Errorf("gfx9 two MISC: %+v", e)
	}
}
