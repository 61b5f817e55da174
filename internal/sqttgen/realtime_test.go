package sqttgen

import (
	"path/filepath"
	"testing"

	"github.com/attkit/attkit/internal/wire"
)

// realtimeOff checks that every realtime sample of want reads base +
// shader clock/20, give or take slack ticks, and returns how many there
// were.
func realtimeOff(t *testing.T, name string, want []wire.Batch, base uint64, slack int64) int {
	t.Helper()
	n := 0
	for _, b := range want {
		for _, r := range b.Realtime {
			if d := int64(r.RealtimeClock - (base + uint64(r.ShaderClock)/20)); d < 0 || d > slack {
				t.Errorf("%s: sample %+v reads %d ticks off base %#x + clock/20", name, r, d, base)
			}
			n++
		}
	}
	return n
}

// The shader engines of one capture share one realtime clock
// (Config.RealtimeBase): traces of different seeds and shader engines,
// gfx9 and RDNA, read the same base at the same shader clock, so the
// viewer's alignment leaves them in place.
func TestRealtimeOneBase(t *testing.T) {
	ix := LoopIndex(0)
	for _, base := range []uint64{0, 0x1234_5678_9ab} {
		want := base
		if want == 0 {
			want = defaultRealtimeBase
		}
		for se := uint8(0); se < 3; se++ {
			// gfx9: the third register write (the low word read last) is
			// up to 3 ticks after the first.
			_, recs, err := Generate(Config{Index: ix, Kernels: []Kernel{{Entry: 0x100}}, Seed: 11 + uint64(se)*31, Instrument: true,
				RealtimeBase: base, MaxTrips: 200, GFX9: GFX9{SE: se}})
			if err != nil {
				t.Fatal(err)
			}
			if n := realtimeOff(t, "gfx9", recs, want, 3); n == 0 {
				t.Errorf("gfx9 SE %d: no realtime samples", se)
			}
		}
	}
	for _, a := range rdArchs {
		ix, err := wire.ReadIndexFile(filepath.Join("testdata", a.index))
		if err != nil {
			t.Fatal(err)
		}
		for seed := uint64(1); seed <= 3; seed++ {
			cfg, o := rdSeedConfig(ix, a.gfxip, seed)
			_, recs, err := GenerateRDNA(cfg, o)
			if err != nil {
				t.Fatal(err)
			}
			if n := realtimeOff(t, a.index, recs, defaultRealtimeBase, 0); n == 0 {
				t.Errorf("%s seed %d: no realtime samples", a.index, seed)
			}
		}
	}
}
