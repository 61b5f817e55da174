package sqtt

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/attkit/attkit/internal/wire"
)

// FuzzCheckPlausible: the plausibility check never panics and fails only
// with an *ImplausibleError; the decoder's Ending of the same bytes, when
// they decode, counts no negative waves and no missing bits without
// InToken.
func FuzzCheckPlausible(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0x91, 0x01, 0, 0, 0, 0, 0, 0, 0x07, 0x07, 0x41})
	f.Add([]byte{0x11, 0xa0, 0, 0, 0, 0, 0, 0, 0xfa, 0xff, 0x02})
	f.Add(append([]byte{0x91, 0x02, 0, 0, 0, 0, 0, 0}, bytes.Repeat([]byte{0x77}, 40)...))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<16 {
			return
		}
		if err := CheckPlausible(data); err != nil {
			var ie *ImplausibleError
			if !errors.As(err, &ie) || ie.Bad < implausibleMin || ie.Offset < 0 || ie.Offset >= int64(len(data)) {
				t.Fatalf("%v (%T)", err, err)
			}
		}
		var e Ending
		d := &Decoder{Compat: CompatIf(len(data)%2 == 1), Ended: func(x Ending) { e = x }}
		if d.Decode(context.Background(), bytes.NewReader(data), nil, func(*wire.Batch) error { return nil }) != nil {
			return
		}
		if e.OpenWaves < 0 || e.Bytes != int64(len(data)) || e.MissingBits != 0 != e.InToken || e.MissingBits < 0 {
			t.Fatalf("ending %+v of %d bytes", e, len(data))
		}
	})
}
