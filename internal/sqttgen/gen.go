package sqttgen

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sort"

	"github.com/attkit/attkit/internal/isa"
	"github.com/attkit/attkit/internal/wire"
)

// Kernel names a kernel entry: the ELF virtual address of its first
// instruction (a multiple of 256, as the PGM registers require) inside the
// code object CodeObjectID.
type Kernel struct {
	Entry        uint64
	CodeObjectID uint64
}

// Config describes the trace to generate. Zero values select the defaults
// noted on each field.
type Config struct {
	// Index supplies the instructions (and, when Kernels is empty, the
	// kernels and function entries). ISA is used when Index is nil.
	Index *wire.Index
	ISA   isa.Provider
	// Kernels to run; waves pick one each. Default: every kernel of Index.
	Kernels []Kernel
	// Seed makes everything else: paths, trip counts, timings.
	Seed uint64

	WavesPerSIMD int  // wave slots used per SIMD, 1..10 (default 3)
	WavesPerSlot int  // waves run one after another in each slot (default 2)
	OtherCUs     int  // CUs with occupancy-only waves (default 2; -1 for none)
	DoubleBuffer bool // set the header's double_buffer bit

	// Instrument writes the '\0ROC' protocol: RT frequency, the code
	// object loads (required when CodeObjectID is not 0) and realtime
	// samples.
	Instrument bool
	// RealtimeBase is the realtime clock at shader clock 0; a sample at
	// shader clock t reads RealtimeBase + t/20. Hardware has one realtime
	// clock, so the traces of the shader engines of one capture share it
	// (the viewer aligns shader engines by it, viewer-loader.md
	// "realtime.json"). Default (0): defaultRealtimeBase, a little below
	// a carry into the high word.
	RealtimeBase uint64
	// LateLoad announces the code objects after the first waves started,
	// flagged as loaded before tracing began (late attribution, §2.1.3).
	LateLoad bool
	// LoadAddress is the GPU address of code object vaddr 0 (default
	// 0x7f0000000000; one code object per 4 GiB above it).
	LoadAddress uint64
	// Dispatch writes the dispatch register state and initiator.
	Dispatch bool
	// ShaderData writes shader data tokens besides those of s_ttracedata:
	// after one in GFX9.ShaderDataEvery instructions (default 32; RDNA 32).
	ShaderData bool
	// Events writes CS_PARTIAL_FLUSH register writes, TT stall MISC
	// tokens and clock-neutral time resets.
	Events bool
	// PacketLoss adds PACKET_LOST MISC tokens to the events (the buffer is
	// then flagged "data lost").
	PacketLoss bool
	// Truncate ends the trace as soon as the first wave slot is done, with
	// the other waves in flight (WAVE_INCOMPLETE, unresolved placeholders).
	Truncate bool

	// Compat016 makes the expected records those of AMD's 0.1.6 library:
	// spec A.3 items 1 and 2 (waves end at the WAVE_END time with an IDLE
	// last segment, OTHER_MSG is dropped) and the differences observed
	// with the library (no late attribution of waves that end in the
	// buffer, unresolved placeholders NONE, a dropped OTHER_MSG stays until
	// emission, shader-data batches of 65537). It turns GFX9.BarrierMessages
	// off. Item 5 (record layouts) is Normalize016's.
	Compat016 bool

	// GFX9 holds the options only the gfx9 generator (Generate,
	// GenerateTo) reads; GenerateRDNA takes its own in RDNA.
	GFX9 GFX9

	MaxTrips     int   // largest loop trip count (default 64)
	MaxWaveInsts int   // instructions per wave before steering to s_endpgm (default 50000)
	TargetBytes  int64 // start waves until the trace has this many bytes (0: WavesPerSlot)

	// Emit receives the expected records in callback order (GenerateTo).
	// The batches are the callee's to keep.
	Emit func(*wire.Batch) error
}

// GFX9 tunes what a gfx9 trace (Generate, GenerateTo) contains beyond the
// shared Config fields. Zero values select the defaults noted on each field.
type GFX9 struct {
	Version2 uint8 // header version2: 4 MI200, 5 MI300 (default), 6 MI350
	TargetCU uint8 // traced CU, 0..15
	SE       uint8 // shader engine id written in the header
	SIMDs    int   // SIMDs with traced waves, 1..4 (default 4)

	// Perf writes perf-counter tokens; PerfInterval announces a counter
	// interval (AGENT_INFO type 1, needs Config.Instrument).
	Perf         bool
	PerfInterval uint32
	// ShaderDataEvery: with Config.ShaderData, shader data after one in
	// ShaderDataEvery instructions (default 32).
	ShaderDataEvery int
	// Barriers as OTHER_MSG + IMMED (newest decoders only; 0.1.6 drops
	// OTHER_MSG, spec A.3). Otherwise a barrier is one IMMED.
	BarrierMessages bool
	// EndpgmMessage issues s_endpgm as MI350 (gfx950) hardware does: an
	// ISSUE INST and an INST OTHER_MSG at the wave's WAVE_END time (real
	// trace gfx950_gemm_0; spec §2.2.4, "OTHER_MSG on real hardware"),
	// instead of an ISSUE IMMED before the wave end.
	EndpgmMessage bool

	// Pipeline lets waves issue further instructions before the INST
	// token of a memory instruction arrives.
	Pipeline bool
	// ContextSwitch saves and restores the traced waves now and then
	// (MISC SAVE_CONTEXT, WAVE_START with count 70, INST PC + INST_PC).
	ContextSwitch bool
	// MergeIssues writes the ISSUE statuses of waves of one SIMD that are
	// due at the same time in one ISSUE token.
	MergeIssues bool
	// Traps sends waves to their (untraced) trap handler now and then:
	// GO_TO_TRAP, then INST PC + INST_PC back to the next instruction.
	Traps bool
	// Replays adds XNACK replay INST tokens after memory instructions.
	Replays bool
}

// Stats summarises a generated trace.
type Stats struct {
	Bytes        int64
	Waves        int64 // traced waves
	Instructions int64 // traced instructions
	Tokens       int64 // tokens of the traced wave slots
}

// Generate returns the trace bytes and the records a correct decoder emits
// for them, in callback order.
func Generate(cfg Config) ([]byte, []wire.Batch, error) {
	var buf bytes.Buffer
	var want []wire.Batch
	user := cfg.Emit
	cfg.Emit = func(b *wire.Batch) error {
		want = append(want, *b)
		if user != nil {
			return user(b)
		}
		return nil
	}
	if _, err := GenerateTo(&buf, cfg); err != nil {
		return nil, nil, err
	}
	return buf.Bytes(), want, nil
}

// GenerateTo writes the trace to w as it is made, holding only the waves
// in flight; cfg.Emit, when set, receives the expected records.
//
// Without cfg.Emit, a large trace (TargetBytes of two segments or more,
// no Truncate) is made in segments of segmentBytes on all CPUs: each
// segment runs waves of its own, which start and end inside it, and
// continues the clock of the one before.
func GenerateTo(w io.Writer, cfg Config) (Stats, error) {
	if cfg.Emit == nil && cfg.TargetBytes >= 2*segmentBytes && !cfg.Truncate && runtime.GOMAXPROCS(0) > 1 {
		return generateParallel(w, cfg)
	}
	g, err := newGen(w, cfg)
	if err != nil {
		return Stats{}, err
	}
	return g.run()
}

// defaultRealtimeBase is Config.RealtimeBase's default: 0xC00 ticks
// (61,440 shader clocks) below a carry from the low into the high word of
// the realtime registers. It fits the 36 bits of a gfx11 TIMESTAMP.
const defaultRealtimeBase = 0x3_FFFF_F400

// segmentBytes is the size of one segment of a parallel generation.
var segmentBytes int64 = 8 << 20

func generateParallel(w io.Writer, cfg Config) (Stats, error) {
	n := int((cfg.TargetBytes + segmentBytes - 1) / segmentBytes)
	type result struct {
		buf bytes.Buffer
		st  Stats
		err error
	}
	results := make([]chan *result, n)
	for i := range results {
		results[i] = make(chan *result, 1)
	}
	workers := runtime.GOMAXPROCS(0)
	sem := make(chan struct{}, workers)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for i := 0; i < n; i++ {
			select {
			case sem <- struct{}{}:
			case <-stop:
				return
			}
			go func(i int) {
				c := cfg
				c.TargetBytes = min(segmentBytes, cfg.TargetBytes-int64(i)*segmentBytes)
				r := &result{}
				r.buf.Grow(int(c.TargetBytes) + 1<<16)
				g, err := newSegment(&r.buf, c, i, false)
				if err == nil {
					r.st, err = g.run()
				}
				r.err = err
				results[i] <- r
			}(i)
		}
	}()
	var total Stats
	for i := 0; i < n; i++ {
		r := <-results[i]
		<-sem
		if r.err != nil {
			return total, r.err
		}
		if _, err := w.Write(r.buf.Bytes()); err != nil {
			return total, err
		}
		total.Bytes += int64(r.buf.Len())
		total.Waves += r.st.Waves
		total.Instructions += r.st.Instructions
		total.Tokens += r.st.Tokens
	}
	// Zero padding (MISC tokens) to whole 32-byte blocks.
	if pad := (32 - total.Bytes%32) % 32; pad > 0 {
		if _, err := w.Write(make([]byte, pad)); err != nil {
			return total, err
		}
		total.Bytes += pad
	}
	return total, nil
}

func (c *Config) defaults() error {
	if c.GFX9.Version2 == 0 {
		c.GFX9.Version2 = 5
	}
	if c.GFX9.Version2 < 4 || c.GFX9.Version2 > 6 {
		return fmt.Errorf("version2 %d: want 4, 5 or 6", c.GFX9.Version2)
	}
	if c.GFX9.TargetCU > 15 {
		return fmt.Errorf("target CU %d: want 0..15", c.GFX9.TargetCU)
	}
	if c.GFX9.SIMDs == 0 {
		c.GFX9.SIMDs = 4
	}
	if c.GFX9.SIMDs < 1 || c.GFX9.SIMDs > 4 {
		return fmt.Errorf("SIMDs %d: want 1..4", c.GFX9.SIMDs)
	}
	if c.WavesPerSIMD == 0 {
		c.WavesPerSIMD = 3
	}
	if c.WavesPerSIMD < 1 || c.WavesPerSIMD > 10 {
		return fmt.Errorf("waves per SIMD %d: want 1..10", c.WavesPerSIMD)
	}
	if c.WavesPerSlot == 0 {
		c.WavesPerSlot = 2
	}
	switch {
	case c.OtherCUs == 0:
		c.OtherCUs = 2
	case c.OtherCUs < 0:
		c.OtherCUs = 0
	case c.OtherCUs > 15:
		c.OtherCUs = 15
	}
	if c.GFX9.ShaderDataEvery <= 0 {
		c.GFX9.ShaderDataEvery = 32
	}
	return c.programDefaults()
}

// programDefaults fills in and checks the options of the program and its
// loading that the gfx9 and RDNA generators share.
func (c *Config) programDefaults() error {
	if c.LoadAddress == 0 {
		c.LoadAddress = 0x7f0000000000
	}
	if c.RealtimeBase == 0 {
		c.RealtimeBase = defaultRealtimeBase
	}
	if c.LoadAddress%256 != 0 {
		return fmt.Errorf("load address %#x is not 256-byte aligned", c.LoadAddress)
	}
	if c.MaxTrips <= 0 {
		c.MaxTrips = 64
	}
	if c.MaxWaveInsts <= 0 {
		c.MaxWaveInsts = 50000
	}
	if c.Index == nil && c.ISA == nil {
		return errors.New("no index and no ISA provider")
	}
	return nil
}

// kernelsOf lists the kernels of an index: its kernel table, else the
// function rows.
func kernelsOf(ix *wire.Index) []Kernel {
	var ks []Kernel
	for _, k := range ix.Kernels {
		ks = append(ks, Kernel{Entry: k.Address, CodeObjectID: k.CodeObj})
	}
	if len(ks) == 0 {
		for _, r := range ix.Rows {
			if r.Kind == wire.RowFunction && r.Vaddr%256 == 0 {
				ks = append(ks, Kernel{Entry: r.Vaddr, CodeObjectID: r.CodeObj})
			}
		}
	}
	sort.Slice(ks, func(i, j int) bool {
		if ks[i].CodeObjectID != ks[j].CodeObjectID {
			return ks[i].CodeObjectID < ks[j].CodeObjectID
		}
		return ks[i].Entry < ks[j].Entry
	})
	return ks
}
