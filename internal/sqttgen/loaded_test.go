package sqttgen

import (
	"fmt"
	"strings"
	"testing"

	"github.com/attkit/attkit/internal/wire"
)

// TestLoadedNative generates traces of the gfx942 test kernels loaded at an
// address with no code-object load record, as runtimes other than
// rocprofv3 capture them: the expected records hold absolute PCs (load
// address + vaddr of the kernels' instructions, code object 0) and no load
// event, and the native decoder reproduces them with the loaded index but
// not with the ELF-vaddr one.
func TestLoadedNative(t *testing.T) {
	ix := loadIndex(t, "gfx942.index")
	const load = 0x7f3a00001000
	loads := map[uint64]uint64{}
	text := map[wire.PC]string{}
	for _, r := range ix.Rows {
		loads[r.CodeObj] = load + r.CodeObj<<32
		if r.Kind == wire.RowInstruction {
			text[wire.PC{Address: loads[r.CodeObj] + r.Vaddr}] = r.Text
		}
	}
	placed, err := Loaded(ix, loads)
	if err != nil {
		t.Fatal(err)
	}
	for seed := uint64(1); seed <= 8; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			cfg := Config{Index: placed, Seed: seed, WavesPerSIMD: 2, Dispatch: seed%2 == 0, GFX9: GFX9{Pipeline: seed%3 == 0}}
			trace, want, err := Generate(cfg)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, b := range want {
				for _, e := range b.Events {
					if e.Type == wire.EventCodeObjectLoad {
						t.Fatalf("a code-object load event: %+v", e)
					}
				}
				for _, w := range b.Waves {
					for _, in := range w.Instructions {
						if in.PC == (wire.PC{}) {
							continue
						}
						if _, ok := text[in.PC]; !ok {
							t.Fatalf("instruction at %+v: not the load address + vaddr of a kernel instruction", in.PC)
						}
						n++
					}
				}
			}
			if n == 0 {
				t.Fatal("no instruction in the expected records")
			}
			matchNative(t, trace, placed, want, "")
			got, err := decodeNative(t, trace, ix)
			if err != nil {
				t.Fatal(err)
			}
			if Diff(want, got) == "" {
				t.Error("the ELF-vaddr index decodes the absolute PCs too")
			}
		})
	}
}

func TestLoadedErrors(t *testing.T) {
	two := LoopIndex(1)
	two.Rows = append(two.Rows, LoopIndex(2).Rows...)
	for _, c := range []struct {
		name  string
		loads map[uint64]uint64
		msg   string
	}{
		{"missing", map[uint64]uint64{1: 0x1000}, "code object 2 has no load address"},
		{"unaligned", map[uint64]uint64{1: 0x1000, 2: 0x2010}, "load address 0x2010 of code object 2 is not 256-byte aligned"},
		{"overlap", map[uint64]uint64{1: 0x1000, 2: 0x1000}, "code objects 1 and 2 overlap at 0x1100 once loaded"},
		{"beyond 2^64", map[uint64]uint64{1: 0x1000, 2: 0xffffffffffffff00}, "code object 2 at 0xffffffffffffff00: vaddr 0x100 is beyond the 64-bit address space"},
	} {
		if _, err := Loaded(two, c.loads); err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %v, want %q", c.name, err, c.msg)
		}
	}
	ok, err := Loaded(two, map[uint64]uint64{1: 0x1000, 2: 0x1000 + 1<<32})
	if err != nil || ok.Rows[0].PC() != (wire.PC{Address: 0x1100}) || ok.Rows[len(ok.Rows)-1].CodeObj != 0 {
		t.Errorf("two objects side by side: %v, first row %+v", err, ok.Rows[0])
	}
}
