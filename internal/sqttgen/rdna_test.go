package sqttgen

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/attkit/attkit/internal/isa"
	"github.com/attkit/attkit/internal/wire"
)

// rdArch pairs an RDNA generation with its test kernels.
var rdArchs = []struct {
	gfxip int
	index string
}{
	{10, "gfx1030.index"},
	{11, "gfx1100.index"},
	{12, "gfx1201.index"},
}

// rdSeedConfig varies the generator's options with the seed.
func rdSeedConfig(ix *wire.Index, gfxip int, seed uint64) (Config, RDNA) {
	r := rng{s: seed*7919 + uint64(gfxip)}
	cfg := Config{
		Index:        ix,
		Seed:         seed,
		WavesPerSIMD: 1 + r.intn(16),
		WavesPerSlot: 1 + r.intn(3),
		OtherCUs:     r.intn(4) - 1,
		Instrument:   true,
		LateLoad:     r.oneIn(4),
		Dispatch:     r.oneIn(2),
		ShaderData:   r.oneIn(2),
		Events:       r.oneIn(2),
		DoubleBuffer: r.oneIn(4),
		PacketLoss:   r.oneIn(3),
		Truncate:     r.oneIn(6),
		MaxTrips:     []int{4, 64, 3000}[r.intn(3)],
	}
	o := RDNA{
		GFXIP:      gfxip,
		TargetSA:   uint8(r.intn(2)),
		TargetWGP:  uint8(r.intn(8)),
		TargetSIMD: uint8(r.intn(4)),
		DPRate:     uint8(r.intn(12)), // 16·dprate cycles fit 16 bits (see sqtt-format.md A.4 R1)
		DPDerate:   uint8(r.intn(4)),
		ExtStarts:  r.oneIn(2),
		OtherSIMD:  r.oneIn(2),
		Noise:      r.oneIn(2),
		Reorder:    r.oneIn(2),

		ExcludeBarrierWait: r.oneIn(2),
		ExecTokens:         seed%2 == 0,
		ContextSwitch:      r.oneIn(2),
		Lookahead:          r.oneIn(2),
	}
	if gfxip == 10 {
		o.Version = uint8(1 + r.intn(2))
	}
	return cfg, o
}

// checkRDNAWant verifies properties every generated RDNA expectation must
// have: GFXIP first, timelines that sum to the wave's duration, known PCs
// in time order, one occupancy start and end per wave.
func checkRDNAWant(t *testing.T, want []wire.Batch, ix *wire.Index, gfxip int) (waves, insts int) {
	return checkRDNAWantT(t, want, ix, gfxip, false)
}

// checkRDNAWantT is checkRDNAWant for a trace that may be truncated: waves
// in flight at its end have no occupancy end, and their timelines stop at
// their last state change.
func checkRDNAWantT(t *testing.T, want []wire.Batch, ix *wire.Index, gfxip int, truncated bool) (waves, insts int) {
	t.Helper()
	known := map[wire.PC]bool{}
	for _, r := range ix.Rows {
		known[r.PC()] = true
	}
	if len(want) == 0 || want[0].Type != wire.TypeGFXIP || want[0].GFXIP != uint64(gfxip) {
		t.Fatalf("first batch is not GFXIP %d", gfxip)
	}
	var starts, ends int
	for _, b := range want {
		if b.Type == wire.TypeInfo && (len(b.Info) != 1 || b.Info[0] != wire.InfoDataLost &&
			!(truncated && b.Info[0] == wire.InfoWaveIncomplete)) {
			t.Fatalf("unexpected info %v", b.Info)
		}
		for _, o := range b.Occupancy {
			if o.Start {
				starts++
			} else {
				ends++
			}
		}
		for _, w := range b.Waves {
			waves++
			var sum int64
			for _, s := range w.Timeline {
				sum += int64(s.Duration)
				if s.Duration < 0 {
					t.Fatalf("negative timeline entry in %+v", w.Timeline)
				}
			}
			if sum != w.EndTime-w.BeginTime && !truncated {
				t.Fatalf("wave slot %d: timeline sums to %d, end-begin = %d", w.WaveID, sum, w.EndTime-w.BeginTime)
			}
			last := w.BeginTime
			for _, in := range w.Instructions {
				insts++
				if !known[in.PC] && !(in.Category == wire.CatContext && in.PC == wire.PC{}) {
					t.Fatalf("instruction PC %+v not in the index", in.PC)
				}
				if in.Time < last {
					t.Fatalf("instructions out of time order: %+v after time %d", in, last)
				}
				last = in.Time
			}
		}
	}
	if starts < ends || starts != ends && !truncated && gfxip != 11 {
		// gfx11: a packet-loss flag consumed by a token read before it
		// (reorder queue) hides a wave end for good.
		t.Fatalf("%d occupancy starts, %d ends", starts, ends)
	}
	return waves, insts
}

func TestGenerateRDNA(t *testing.T) {
	for _, a := range rdArchs {
		ix := loadIndex(t, a.index)
		for seed := uint64(1); seed <= 20; seed++ {
			t.Run(fmt.Sprintf("gfx%d/seed%d", a.gfxip, seed), func(t *testing.T) {
				cfg, o := rdSeedConfig(ix, a.gfxip, seed)
				trace, want, err := GenerateRDNA(cfg, o)
				if err != nil {
					t.Fatal(err)
				}
				if len(trace)%32 != 0 {
					t.Errorf("trace length %d is not a multiple of 32", len(trace))
				}
				waves, insts := checkRDNAWantT(t, want, ix, a.gfxip, cfg.Truncate)
				if waves == 0 || insts < waves*5 && !cfg.Truncate || insts == 0 {
					t.Errorf("%d waves, %d instructions", waves, insts)
				}
				again, want2, err := GenerateRDNA(cfg, o)
				if err != nil || !bytes.Equal(trace, again) || Diff(want, want2) != "" {
					t.Fatalf("same seed gave a different trace or records (err %v)", err)
				}
			})
		}
	}
}

// TestGenerateRDNAReorder checks that the Reorder option makes gfx10/11
// tokens the reader must move (a WAVE_READY delivered one cycle before an
// instruction token written ahead of it), that the expected records
// follow the reordered stream, and that without it nothing moves.
func TestGenerateRDNAReorder(t *testing.T) {
	ix := loadIndex(t, "gfx1100.index")
	for _, reorder := range []bool{false, true} {
		cfg := Config{Index: ix, Seed: 3, WavesPerSIMD: 8, Instrument: true, Emit: func(*wire.Batch) error { return nil }}
		g, err := newRDNAGen(nil, cfg, RDNA{GFXIP: 11, Reorder: reorder})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := g.run(); err != nil {
			t.Fatal(err)
		}
		if moved := g.m.moved; (moved > 0) != reorder {
			t.Errorf("Reorder %v: the reader queue moved %d tokens", reorder, moved)
		}
	}
}

// TestGenerateRDNAExcludedWaits checks that with the gfx12 header's
// exclude_barrier_wait bit the s_barrier_wait lines (no token) come back as
// the synthetic IMMED instructions of spec §3.6: stall 0, from the end of
// the instruction before to the start of the one after, and a WAIT
// timeline segment of that length.
func TestGenerateRDNAExcludedWaits(t *testing.T) {
	ix := loadIndex(t, "gfx1201.index")
	waitPC := map[wire.PC]bool{}
	for _, r := range ix.Rows {
		if strings.HasPrefix(r.Text, "s_barrier_wait") {
			waitPC[r.PC()] = true
		}
	}
	inserted := 0
	for seed := uint64(1); seed <= 4; seed++ {
		_, want, err := GenerateRDNA(Config{Index: ix, Seed: seed, Instrument: true, WavesPerSIMD: 8},
			RDNA{GFXIP: 12, ExcludeBarrierWait: true})
		if err != nil {
			t.Fatal(err)
		}
		checkRDNAWant(t, want, ix, 12)
		for _, b := range want {
			for _, w := range b.Waves {
				for i, in := range w.Instructions {
					if !waitPC[in.PC] {
						continue
					}
					inserted++
					if in.Category != wire.CatImmed || in.Stall != 0 || i == 0 || i+1 >= len(w.Instructions) ||
						iend(&w.Instructions[i-1]) != in.Time || w.Instructions[i+1].Time != iend(&in) {
						t.Fatalf("seed %d: barrier wait %+v between %+v and %+v", seed, in, w.Instructions[i-1], w.Instructions[min(i+1, len(w.Instructions)-1)])
					}
					waits := 0
					for _, s := range w.Timeline {
						if s.Type == wire.StateWait && s.Duration == in.Duration {
							waits++
						}
					}
					if waits == 0 {
						t.Fatalf("seed %d: no WAIT segment of %d cycles for %+v in %v", seed, in.Duration, in, w.Timeline)
					}
				}
			}
		}
	}
	if inserted == 0 {
		t.Fatal("no excluded barrier wait came back as an IMMED")
	}
}

// TestGenerateRDNAContextSwitch checks that ContextSwitch saves and
// restores target waves or traps them: a CONTEXT instruction spanning
// save (or trap) to return, contexts counting both steps of a save and
// restore and nothing for a trap.
func TestGenerateRDNAContextSwitch(t *testing.T) {
	ix := loadIndex(t, "gfx1030.index")
	switched, trapped := 0, 0
	for seed := uint64(1); seed <= 6; seed++ {
		_, want, err := GenerateRDNA(Config{Index: ix, Seed: seed, Instrument: true, WavesPerSIMD: 8, MaxTrips: 200},
			RDNA{GFXIP: 10, ContextSwitch: true})
		if err != nil {
			t.Fatal(err)
		}
		checkRDNAWant(t, want, ix, 10)
		for _, b := range want {
			for _, w := range b.Waves {
				n := 0
				for _, in := range w.Instructions {
					if in.Category == wire.CatContext {
						n++
						if in.Duration < 21 {
							t.Fatalf("CONTEXT %+v shorter than save to restore", in)
						}
					}
				}
				if w.Contexts%2 != 0 || int(w.Contexts) > 2*n {
					t.Fatalf("wave with %d CONTEXT instructions has contexts %d", n, w.Contexts)
				}
				switched += int(w.Contexts) / 2
				trapped += n - int(w.Contexts)/2
			}
		}
	}
	if switched == 0 || trapped == 0 {
		t.Fatalf("%d context switches, %d traps", switched, trapped)
	}
}

// TestGenerateRDNAMasks checks that IMMEDIATE and WAVE_READY tokens carry
// several wave slots now and then (slots due at the same time share one).
func TestGenerateRDNAMasks(t *testing.T) {
	ix := loadIndex(t, "gfx1201.index")
	var merged int64
	for seed := uint64(1); seed <= 5; seed++ {
		cfg := Config{Index: ix, Seed: seed, Instrument: true, WavesPerSIMD: 16, Emit: func(*wire.Batch) error { return nil }}
		g, err := newRDNAGen(nil, cfg, RDNA{GFXIP: 12})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := g.run(); err != nil {
			t.Fatal(err)
		}
		merged += g.e.merged
	}
	if merged == 0 {
		t.Fatal("no IMMEDIATE or WAVE_READY token with more than one wave slot")
	}
}

// TestGenerateRDNATruncate checks that Truncate leaves waves in flight:
// one WAVE_INCOMPLETE info, before the first incomplete wave, and more
// occupancy starts than ends.
func TestGenerateRDNATruncate(t *testing.T) {
	ix := loadIndex(t, "gfx1100.index")
	for seed := uint64(1); seed <= 3; seed++ {
		_, want, err := GenerateRDNA(Config{Index: ix, Seed: seed, Instrument: true, WavesPerSIMD: 10, Truncate: true},
			RDNA{GFXIP: 11})
		if err != nil {
			t.Fatal(err)
		}
		checkRDNAWantT(t, want, ix, 11, true)
		infos, starts, ends := 0, 0, 0
		for i, b := range want {
			for _, o := range b.Occupancy {
				if o.Start {
					starts++
				} else {
					ends++
				}
			}
			if b.Type == wire.TypeInfo && b.Info[0] == wire.InfoWaveIncomplete {
				infos++
				if i+1 >= len(want) || want[i+1].Type != wire.TypeWave {
					t.Fatalf("seed %d: WAVE_INCOMPLETE not followed by a wave", seed)
				}
			}
		}
		if infos != 1 || starts <= ends {
			t.Fatalf("seed %d: %d WAVE_INCOMPLETE infos, %d starts, %d ends", seed, infos, starts, ends)
		}
	}
}

// TestGenerateRDNAErrors checks the configuration errors.
func TestGenerateRDNAErrors(t *testing.T) {
	ix := rdHandIndex(0)
	k := []Kernel{{Entry: 0x100}}
	for name, c := range map[string]struct {
		cfg Config
		o   RDNA
	}{
		"gfx9":           {Config{Index: ix, Kernels: k}, RDNA{GFXIP: 9}},
		"gfx10 v3":       {Config{Index: ix, Kernels: k}, RDNA{GFXIP: 10, Version: 3}},
		"17 slots":       {Config{Index: ix, Kernels: k, WavesPerSIMD: 17}, RDNA{GFXIP: 11}},
		"target wgp 8":   {Config{Index: ix, Kernels: k}, RDNA{GFXIP: 12, TargetWGP: 8}},
		"no isa":         {Config{Kernels: k}, RDNA{GFXIP: 12}},
		"unaligned":      {Config{Index: ix, Kernels: []Kernel{{Entry: 0x104}}}, RDNA{GFXIP: 12}},
		"not in isa":     {Config{Index: ix, Kernels: []Kernel{{Entry: 0x300}}}, RDNA{GFXIP: 12}},
		"uninstrumented": {Config{Index: rdHandIndex(5), Kernels: []Kernel{{Entry: 0x100, CodeObjectID: 5}}}, RDNA{GFXIP: 12}},
	} {
		if _, _, err := GenerateRDNA(c.cfg, c.o); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	// An ISA provider instead of an index.
	_, want, err := GenerateRDNA(Config{ISA: isa.NewTable(ix), Kernels: k, Seed: 3}, RDNA{GFXIP: 11})
	if err != nil {
		t.Fatal(err)
	}
	checkRDNAWant(t, want, ix, 11)
}
