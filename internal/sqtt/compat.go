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
// field per spec item, so a branch reads as the rule it follows.
type rules struct {
	noEventRecords     bool // sqtt-format.md §4.6: 0.1.6 gives no EVENT records
	noDispatchRecords  bool // §4.6: nor DISPATCH records
	waveLayout016      bool // §4.6: a wave has no dispatcher, workgroup, cluster or size fields
	occupancyLayout016 bool // §4.6: an occupancy word keeps only its bit 0
	classify016        bool // observed: 0.1.6 has no gfx12 v_mov_b64 or ds_bvh category rule
}

// compatRules is the table of each Compat's rules.
var compatRules = [...]rules{
	Newest: {},
	Lib016: {
		noEventRecords:     true,
		noDispatchRecords:  true,
		waveLayout016:      true,
		occupancyLayout016: true,
		classify016:        true,
	},
}

// rules returns c's rules (Newest's for an unknown value).
func (c Compat) rules() rules {
	if int(c) < len(compatRules) {
		return compatRules[c]
	}
	return rules{}
}
