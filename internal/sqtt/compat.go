package sqtt

import "fmt"

// Compat is whose records the decoder gives: the newest library's
// (Newest, the zero value) or exactly those of AMD's 0.1.6 build that
// ROCm 7.x ships (Lib016; sqtt-format.md A.3, A.4). Its text form is the
// spelling of the commands' --compat flag: "newest" or "0.1.6".
type Compat uint8

const (
	Newest Compat = iota // the newest library's records
	Lib016               // AMD's 0.1.6 library's records
)

// CompatNames are the text forms ParseCompat accepts, in the order of
// the values (the --compat flag's enum).
var CompatNames = []string{"newest", "0.1.6"}

// ParseCompat reads a Compat from its text form ("newest" or "0.1.6").
func ParseCompat(s string) (Compat, error) {
	for i, n := range CompatNames {
		if s == n {
			return Compat(i), nil
		}
	}
	return Newest, fmt.Errorf("unknown compat %q (want newest or 0.1.6)", s)
}

// String returns the text form ParseCompat reads.
func (c Compat) String() string {
	if int(c) < len(CompatNames) {
		return CompatNames[c]
	}
	return fmt.Sprintf("Compat(%d)", uint8(c))
}

// UnmarshalText parses a flag's text with ParseCompat.
func (c *Compat) UnmarshalText(b []byte) error {
	v, err := ParseCompat(string(b))
	if err != nil {
		return err
	}
	*c = v
	return nil
}

// MarshalText gives the String form.
func (c Compat) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// CompatIf is Lib016 when lib016, else Newest.
func CompatIf(lib016 bool) Compat {
	if lib016 {
		return Lib016
	}
	return Newest
}

// rules are the differences of a Compat from the newest records, one
// field per item of sqtt-format.md (§4.6, appendix A.3 and A.4), so that a
// branch reads as the rule it follows. The zero value is the newest
// behaviour; a Decode resolves its Compat's rules once (parseState.rules).
type rules struct {
	// Record layouts (§4.6).
	noEventRecords     bool // §4.6: 0.1.6 gives no EVENT records
	noDispatchRecords  bool // §4.6: nor DISPATCH records
	waveLayout016      bool // §4.6: a wave has no dispatcher, workgroup, cluster or size fields
	occupancyLayout016 bool // §4.6: an occupancy word keeps only its bit 0
	noRTTimestampLo    bool // §4.6: no instrumentation opcode 7 (RT_TIMESTAMP_LO32), an unknown packet

	// The stitcher (3.5).
	classify016     bool // A.4 item 7.6: no gfx12 v_mov_b64 rule, ds_bvh is LDS (isaCache)
	noBarrierPCPair bool // A.3 item 2: no step 4 rule that an s_barrier at a known PC gives its PC to the next instruction
	failNoLineAfter bool // A.4 item 8.9: the gfx9 swap rescue fails (invalid shader data) when the line after is unknown
	placeholderNone bool // A.4 item 8.2: an unresolved placeholder reads NONE, or 16 when the stitcher gave it a PC

	// gfx9 (A.3 items 1, 2; A.4 item 8).
	endAtWaveEndIdle   bool // A.3 item 1: a wave ends at the WAVE_END time in an IDLE segment, one without instructions too
	dropOtherMsg       bool // A.3 item 2, A.4 items 8.3 and 8.8: OTHER_MSG deleted at its INST, its time kept; the last one closes the wave
	noLateWaveAttrib   bool // A.4 item 8.1: a wave ended at a WAVE_END is not attributed late (2.1.3)
	shaderData65537    bool // A.4 item 8.4: shader data is flushed once more than 65536 records are pending
	time46             bool // A.4 item 8.5: a TIME after a TIME_RESET is read in 46-bit two's complement
	decodeCutGFX9Token bool // A.4 item 8.6: a token the end of the buffer cuts is decoded, its missing bytes zero

	// RDNA (A.3 items 3, 4; A.4 items 1 to 7).
	emitAtWaveEnd     bool // A.3 item 4, A.4 item 7.1: a target wave is emitted at its WAVE_END token
	noBarrierExt      bool // A.3 item 3, A.4 item 7.6: no gfx10/gfx11 barrier extension (2.3.6 bx)
	wave64Double      bool // A.4 item 2 (R6): the w64 bit doubles an INST's or VALU_INST's cycles
	dpRateZero        bool // A.4 item 6 (W2): a DPRate field of 0 is dp rate 0
	instTables016     bool // A.4 item 6 (W2): 0.1.6's gfx11 and gfx12 instruction tables (2.4)
	waveStartExtDelta bool // A.4 item 7.2: WAVE_START_EXT is a time delta only
	noContextInst     bool // A.4 item 7.3: no CONTEXT instruction for a context save or a trap
	noLostEnd         bool // A.4 item 7.4: no occupancy END for a wave whose end a packet loss hid
	noEmptySlotEnd    bool // A.4 item 7.5: a target WAVE_END with an empty slot makes no occupancy record
	dropZeroRealtime  bool // A.4 item 7.8: a gfx11 or gfx12 realtime sample of 0 is ignored
	immedSkipsNoSMEM  bool // A.4 item 7.9: the stitcher's IMMED rescue does not skip SMEM lines
	gfx12ReadToEnd    bool // A.4 item 7.10: gfx12 is read to the end of the buffer, bits past it zero
	zeroRunEnd        bool // A.4 item 7.11: gfx10/gfx11 stop at 64 zero bits followed by fewer than 9 bytes
	closeInTrap       bool // A.4 item 7.12: the closing MESSAGE is added in a trap or context save too
	tailReorder016    bool // A.4 item 7.13: gfx10/gfx11 reorder the reader's tail as 0.1.6 does
	nibble0111Token   bool // A.4 item 7.14: the prefix nibble 0111 starts an 8-bit token
	endAtNoneInst     bool // A.4 item 7.15: an incomplete wave ends no earlier than its last INST of no category
}

// compatRules is the table of each Compat's rules.
var compatRules = [...]rules{
	Newest: {},
	Lib016: {
		noEventRecords:     true,
		noDispatchRecords:  true,
		waveLayout016:      true,
		occupancyLayout016: true,
		noRTTimestampLo:    true,

		classify016:     true,
		noBarrierPCPair: true,
		failNoLineAfter: true,
		placeholderNone: true,

		endAtWaveEndIdle:   true,
		dropOtherMsg:       true,
		noLateWaveAttrib:   true,
		shaderData65537:    true,
		time46:             true,
		decodeCutGFX9Token: true,

		emitAtWaveEnd:     true,
		noBarrierExt:      true,
		wave64Double:      true,
		dpRateZero:        true,
		instTables016:     true,
		waveStartExtDelta: true,
		noContextInst:     true,
		noLostEnd:         true,
		noEmptySlotEnd:    true,
		dropZeroRealtime:  true,
		immedSkipsNoSMEM:  true,
		gfx12ReadToEnd:    true,
		zeroRunEnd:        true,
		closeInTrap:       true,
		tailReorder016:    true,
		nibble0111Token:   true,
		endAtNoneInst:     true,
	},
}

// rules returns c's rules (Newest's for an unknown value).
func (c Compat) rules() rules {
	if int(c) < len(compatRules) {
		return compatRules[c]
	}
	return rules{}
}
