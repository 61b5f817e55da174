// Package arch is attkit's one architecture rule: may a trace, or the
// records decoded from it, be read with a given index? What flows in is
// the targets of the index's code objects (IndexTargets: the index
// stream's object targets, or for a code.json the ELF headers of the code
// objects its "hsaco" list names) and what the trace says of itself
// (Trace: the GFXIP major its decoder reported, and the GPU target its
// capture named, when one did); what flows out is nil or a *Mismatch that
// names both architectures and exits 3. att-decode, att-tool (through the
// decode driver), att-stats, att-rcv and att-timeline call Check; their
// --any-arch skips it.
//
// The rule: an index that names no known target checks nothing. Otherwise
// at least one of its targets must be of the trace's family (gfx9, gfx10,
// gfx11, gfx12: the GFXIP major), and, when the trace's target is known,
// of its generation too: every RDNA target of one major is one generation,
// while gfx9 splits into MI100 (gfx908), MI200 (gfx90a), MI300 (gfx940,
// gfx941, gfx942), MI350 (gfx950) and the older targets, each its own.
// A gfx9 trace's bytes do not name its generation (sqtt-format.md 1.2:
// the software header's version is its writer's choice, and real MI350
// traces carry the same 4 as older ones), so a gfx950 trace is told from
// a gfx942 one only by its capture: the code objects rocprofv3 wrote
// beside it for the same <pid>_<agent> (CaptureTarget, checked by
// att-decode), or att-decode --arch, which records the target in the
// stream header (trace.target, docs/wire.md) for the tools downstream.
package arch

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/attkit/attkit/internal/codeobj"
	"github.com/attkit/attkit/internal/exitcode"
	"github.com/attkit/attkit/internal/wire"
)

// Family returns the family of a GPU target: "gfx9" for gfx942 or
// gfx9-generic, "gfx11" for gfx1100 or gfx11-generic, "" when t is not a
// gfx target. The family is what a trace's GFXIP record says.
func Family(t string) string {
	major := Major(t)
	if major == 0 {
		return ""
	}
	return "gfx" + strconv.Itoa(major)
}

// Major returns the GFXIP major of a target (9 for gfx90a, 12 for
// gfx1201), 0 when t is not a gfx target.
func Major(t string) int {
	rest, ok := strings.CutPrefix(t, "gfx")
	if !ok || rest == "" {
		return 0
	}
	if g, ok := strings.CutSuffix(rest, "-generic"); ok {
		// gfx9-generic, gfx9-4-generic, gfx10-3-generic, gfx12-generic.
		head, _, _ := strings.Cut(g, "-")
		n, err := strconv.Atoi(head)
		if err != nil || n <= 0 {
			return 0
		}
		return n
	}
	// gfx<major><minor><stepping>: minor a decimal digit, stepping a hex
	// digit, so the major is all but the last two characters.
	if len(rest) < 3 || !isHex(rest[len(rest)-1]) || rest[len(rest)-2] < '0' || rest[len(rest)-2] > '9' {
		return 0
	}
	n, err := strconv.Atoi(rest[:len(rest)-2])
	if err != nil || n <= 0 {
		return 0
	}
	return n
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f'
}

// Generation returns the generation of a target: for gfx9 the product
// line ("MI300" for gfx940, gfx941 and gfx942, "MI350" for gfx950, "MI200"
// for gfx90a, "MI100" for gfx908; an older target is its own), for
// RDNA its family. A generic target ("gfx9-generic") has none: it matches
// every generation of its family. "" when t is not a gfx target.
func Generation(t string) string {
	switch Major(t) {
	case 0:
		return ""
	case 9:
	default:
		if strings.HasSuffix(t, "-generic") {
			return ""
		}
		return Family(t)
	}
	switch t {
	case "gfx908":
		return "MI100"
	case "gfx90a":
		return "MI200"
	case "gfx940", "gfx941", "gfx942":
		return "MI300"
	case "gfx950":
		return "MI350"
	}
	if strings.HasSuffix(t, "-generic") {
		return ""
	}
	return t
}

// Describe names a target for a message: "gfx950 (MI350)", "gfx1100".
func Describe(t string) string {
	if g := Generation(t); g != "" && g != t && g != Family(t) {
		return t + " (" + g + ")"
	}
	return t
}

// Trace is what a trace says of its architecture.
type Trace struct {
	// Name names the trace in messages (its path).
	Name string
	// GFXIP is the major its decoder reported (0 unknown).
	GFXIP int
	// Target is the GPU target its capture named ("gfx950"; "" unknown).
	Target string
}

func (t Trace) String() string {
	switch {
	case t.Target != "":
		return Describe(t.Target)
	case t.GFXIP != 0:
		return fmt.Sprintf("gfx%d", t.GFXIP)
	}
	return "unknown"
}

// A Mismatch is a trace of another architecture than its index's code
// objects. Its exit code is 3.
type Mismatch struct {
	Trace Trace
	// Index names the index (its path; "" the code objects given) and
	// Targets its code objects' targets.
	Index   string
	Targets []string
	// Claimed is set when the target the capture named (Trace.Target) is
	// of another family than the decoder reported (Trace.GFXIP).
	Claimed bool
}

func (e *Mismatch) Error() string {
	if e.Claimed {
		return fmt.Sprintf("%s: a gfx%d trace, but --arch names %s: give the trace's own target, or --any-arch",
			e.Trace.Name, e.Trace.GFXIP, Describe(e.Trace.Target))
	}
	ds := make([]string, len(e.Targets))
	for i, t := range e.Targets {
		ds[i] = Describe(t)
	}
	what := "a " + e.Trace.String() + " trace"
	if e.Trace.Name != "" {
		what = e.Trace.Name + ": " + what
	}
	if e.Index == "" {
		return fmt.Sprintf("%s, but the code objects are for %s: give the code objects of this trace's GPU, or --any-arch",
			what, strings.Join(ds, ", "))
	}
	return fmt.Sprintf("%s, but the code objects of %s are for %s: give the index of this trace's code objects, or --any-arch",
		what, e.Index, strings.Join(ds, ", "))
}

// ExitCode implements exitcode.Coder.
func (e *Mismatch) ExitCode() int { return exitcode.Format }

// Check applies the rule (package doc) to a trace and the targets of an
// index (IndexTargets), named index in the message.
func Check(t Trace, index string, targets []string) error {
	if t.GFXIP == 0 && t.Target == "" {
		return nil
	}
	fam := ""
	if t.GFXIP != 0 {
		fam = "gfx" + strconv.Itoa(t.GFXIP)
	}
	if f := Family(t.Target); f != "" {
		if fam != "" && f != fam {
			// The capture's target contradicts the decoder: the trace is
			// not of the GPU the capture names.
			return &Mismatch{Trace: t, Claimed: true}
		}
		fam = f
	}
	if fam == "" || len(targets) == 0 {
		return nil
	}
	gen := Generation(t.Target)
	for _, x := range targets {
		if Family(x) != fam {
			continue
		}
		if g := Generation(x); gen == "" || g == "" || g == gen {
			return nil
		}
	}
	return &Mismatch{Trace: t, Index: index, Targets: targets}
}

// IndexTargets returns the sorted, distinct, known targets of an index's
// code objects: those the index stream names (co-index's object entries),
// else, for an index read from a code.json, those of the code objects its
// "hsaco" list names that can still be read (relative paths from dir, the
// code.json's folder). nil when none is known: a code.json of a capture
// without code objects (other runtimes record none) checks nothing.
func IndexTargets(ix *wire.Index, dir string) []string {
	var ts []string
	add := func(t string) {
		if Major(t) != 0 && !slices.Contains(ts, t) {
			ts = append(ts, t)
		}
	}
	for _, o := range ix.Objects {
		add(o.Target)
	}
	if len(ix.Objects) == 0 {
		for _, p := range ix.Doc.Hsaco {
			if p == "" {
				continue
			}
			if !filepath.IsAbs(p) && dir != "" {
				p = filepath.Join(dir, p)
			}
			add(ELFTarget(p))
		}
	}
	slices.Sort(ts)
	return ts
}

// captureTrace matches rocprofv3's trace names, <pid>_<agent>_shader_engine_<SE>_<run>.att.
var captureTrace = regexp.MustCompile(`(?i)^(.+)_shader_engine_[0-9]+_[0-9]+\.att$`)

// CaptureTarget returns the GPU target of a trace as its rocprofv3 capture
// tells it: the target the code objects beside it, named after the same
// <pid>_<agent> (<pid>_<agent>_code_object_id_<N>.hsaco, .out or .co),
// agree on; "" when the name is not rocprofv3's, no such object can be
// read, or they name several generations. These are the code objects
// loaded on the traced agent, so their target is the trace's GPU: what
// the trace's own bytes do not tell for gfx9 (MI300 from MI350).
func CaptureTarget(trace string) string {
	m := captureTrace.FindStringSubmatch(filepath.Base(trace))
	if m == nil {
		return ""
	}
	objs, _ := filepath.Glob(filepath.Join(filepath.Dir(trace), globEscape(m[1])+"_code_object_id_*"))
	target := ""
	for _, o := range objs {
		switch strings.ToLower(filepath.Ext(o)) {
		case ".hsaco", ".out", ".co":
		default:
			continue
		}
		t := ELFTarget(o)
		if t == "" {
			continue
		}
		if target != "" && Generation(t) != Generation(target) {
			return ""
		}
		target = t
	}
	return target
}

// globEscape quotes the characters filepath.Match treats specially.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// ELFTarget returns the target an AMDGPU code object's ELF header names,
// "" when path cannot be read or is no AMDGPU ELF file.
func ELFTarget(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	var h [64]byte
	if _, err := io.ReadFull(f, h[:]); err != nil {
		return ""
	}
	return headerTarget(h[:])
}

// headerTarget reads an ELF64 header: little-endian, EM_AMDGPU, e_flags at
// byte 48.
func headerTarget(h []byte) string {
	if len(h) < 52 || !bytes.Equal(h[:4], []byte(elf.ELFMAG)) || h[4] != byte(elf.ELFCLASS64) ||
		h[5] != byte(elf.ELFDATA2LSB) || binary.LittleEndian.Uint16(h[18:]) != 224 {
		return ""
	}
	return codeobj.TargetName(binary.LittleEndian.Uint32(h[48:]))
}

// Checker checks the parts of record streams against one index: the
// stream header's trace.gfxip and trace.target, and every GFXIP record
// (the JSON projection's headers carry neither). A nil *Checker checks
// nothing.
type Checker struct {
	index   string
	targets []string
	cur     Trace
}

// NewChecker returns a checker against ix (named index, read from a file in
// dir), nil when ix is nil, anyArch is set or ix names no known target.
func NewChecker(ix *wire.Index, index string, anyArch bool) *Checker {
	if ix == nil || anyArch {
		return nil
	}
	ts := IndexTargets(ix, filepath.Dir(index))
	if len(ts) == 0 {
		return nil
	}
	return &Checker{index: index, targets: ts}
}

// Header checks a part's header (call it for every wire.KindHeader).
func (c *Checker) Header(name string, h *wire.Header) error {
	if c == nil {
		return nil
	}
	c.cur = Trace{Name: name, GFXIP: h.Trace.GFXIP, Target: h.Trace.Target}
	if c.cur.Name == "" {
		c.cur.Name = h.Trace.Path
	}
	return Check(c.cur, c.index, c.targets)
}

// Batch checks a record batch (only GFXIP batches matter).
func (c *Checker) Batch(b *wire.Batch) error {
	if c == nil || b.Type != wire.TypeGFXIP || int(b.GFXIP) == c.cur.GFXIP {
		return nil
	}
	t := c.cur
	t.GFXIP = int(b.GFXIP)
	return Check(t, c.index, c.targets)
}

// Scan checks what a wire.Reader just scanned: call it after every Scan.
func (c *Checker) Scan(rd *wire.Reader, name string) error {
	if c == nil {
		return nil
	}
	if rd.Kind() == wire.KindHeader {
		return c.Header(name, rd.Header())
	}
	return c.Batch(rd.Batch())
}
