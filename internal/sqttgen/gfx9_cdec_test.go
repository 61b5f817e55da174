package sqttgen

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/attkit/attkit/internal/cdec"
	"github.com/attkit/attkit/internal/isa"
	"github.com/attkit/attkit/internal/testutil"
	"github.com/attkit/attkit/internal/wire"
)

const libEnv = "ROCPROF_TRACE_DECODER_LIB"

// TestDifferentialROCm decodes generated traces, the appendix A.2 scenarios
// and the appendix B vectors with AMD's rocprof-trace-decoder library and
// compares every record with the generator's expectation. With a 0.1.x
// library (V1 API) only the differences of spec appendix A.3 are allowed:
// the expectation is made with Compat016 and both sides are normalised
// with Normalize016.
func TestDifferentialROCm(t *testing.T) {
	path := os.Getenv(libEnv)
	if path == "" {
		t.Skip("set " + libEnv + " to a librocprof-trace-decoder.so to compare generated traces with AMD's decoder")
	}
	d, err := cdec.Load(path)
	if err != nil {
		t.Fatalf("%s=%s: %v", libEnv, path, err)
	}
	legacy := d.API() == "v1"
	t.Logf("library %s version %q API %s (0.1.6 differences allowed: %v)", d.Path(), d.Version(), d.API(), legacy)
	decode := func(t *testing.T, trace []byte, ix *wire.Index) []wire.Batch {
		t.Helper()
		var got []wire.Batch
		err := d.Decode(context.Background(), bytes.NewReader(trace), isa.NewTable(ix), func(b *wire.Batch) error {
			got = append(got, b.Clone())
			return nil
		})
		if err != nil {
			t.Fatalf("decode: %v", err)
		}
		return got
	}
	compare := func(t *testing.T, want, got []wire.Batch) {
		t.Helper()
		if legacy {
			want, got = Normalize016(want), Normalize016(got)
		}
		if diff := Diff(want, got); diff != "" {
			t.Fatal(diff)
		}
	}
	for _, name := range []string{"gfx90a.index", "gfx942.index"} {
		ix := loadIndex(t, name)
		for seed := uint64(1); seed <= 200; seed++ {
			t.Run(fmt.Sprintf("%s/seed%d", name, seed), func(t *testing.T) {
				cfg := seedConfig(ix, seed)
				cfg.Compat016 = legacy
				trace, want, err := Generate(cfg)
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("config %s", cfgSummary(cfg))
				compare(t, want, decode(t, trace, ix))
			})
		}
	}
	for seed := uint64(1); seed <= 90; seed++ {
		t.Run(fmt.Sprintf("hand/seed%d", seed), func(t *testing.T) {
			ix, cfg := handSeedConfig(seed)
			cfg.Compat016 = legacy

			trace, want, err := Generate(cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("config %s", cfgSummary(cfg))
			compare(t, want, decode(t, trace, ix))
		})
	}
	t.Run("malformed", func(t *testing.T) {
		ix := b1Index(0x1000, 0)
		var buf bytes.Buffer
		e := newEnc(&buf, nil)
		e.header(b1Header())
		e.inst(0, 0, 12, instSALU32)
		e.end()
		for _, in := range [][]byte{buf.Bytes(), make([]byte, 64), {0x11, 0xa0, 0x0f, 0, 0, 0}} {
			var got []wire.Batch
			err := d.Decode(context.Background(), bytes.NewReader(in), isa.NewTable(ix), func(b *wire.Batch) error {
				got = append(got, b.Clone())
				return nil
			})
			if err == nil || len(got) > 1 || len(got) == 1 && got[0].Type != wire.TypeGFXIP {
				t.Errorf("%x...: err %v, %d batches; want an error and at most GFXIP", in[:8], err, len(got))
			}
		}
		trace := append(testutil.Unhex(t, testutil.VectorB1), 0x05, 0x18, 0x10)
		m, want := collect(ix)
		m.v016 = legacy
		e = newEnc(nil, m)
		e.header(b1Header())
		writeB1Body(e, func(uint64) wire.PC { return wire.PC{} }, false)
		e.end()
		compare(t, *want, decode(t, trace, ix))
	})
	t.Run("65536-record batches", func(t *testing.T) {
		ix := loadIndex(t, "gfx90a.index")
		for _, cfg := range []Config{
			{Index: ix, Seed: 3, Instrument: true, DoubleBuffer: true, OtherCUs: 15, WavesPerSIMD: 1, TargetBytes: 2 << 20, GFX9: GFX9{SIMDs: 1}},
			{Index: ix, Seed: 11, Instrument: true, WavesPerSIMD: 2, ShaderData: true, TargetBytes: 3 << 20, GFX9: GFX9{SIMDs: 1, ShaderDataEvery: 1}},
		} {
			cfg.Compat016 = legacy
			trace, want, err := Generate(cfg)
			if err != nil {
				t.Fatal(err)
			}
			compare(t, want, decode(t, trace, ix))
		}
	})
	for i := range scenarios {
		s := &scenarios[i]
		t.Run(s.name, func(t *testing.T) {
			trace, want := buildScenario(s, legacy)
			compare(t, want, decode(t, trace, s.ix))
		})
	}
	for i := range scenarios016 {
		s := &scenarios016[i]
		t.Run(s.name, func(t *testing.T) {
			if !legacy {
				t.Skip("the 0.1.6 OTHER_MSG rules (spec A.4 items 8.3, 8.8)")
			}
			trace, want := buildScenario(s, true)
			compare(t, want, decode(t, trace, s.ix))
		})
	}
	for _, v := range []struct {
		name string
		hex  string
		ix   *wire.Index
		rt   bool
	}{{"B.1", testutil.VectorB1, b1Index(0x1000, 0), false}, {"B.2", testutil.VectorB2, b1Index(0, 7), true}} {
		t.Run(v.name, func(t *testing.T) {
			m, want := collect(v.ix)
			m.v016 = legacy
			e := newEnc(nil, m)
			e.header(b1Header())
			if v.rt {
				for _, x := range []uint32{0x434F5200, 0x186A0006, 0x204, 0x1000, 0x304, 0, 0x104, 0x100, 0x004, 0x1E} {
					e.reg(0, 1, 0, regUserData2, x)
				}
			}
			writeB1Body(e, func(uint64) wire.PC { return wire.PC{} }, v.rt)
			e.end()
			compare(t, *want, decode(t, testutil.Unhex(t, v.hex), v.ix))
		})
	}
}
