package sqtt

// The plausibility check of a trace body (sqtt-format.md 1.6): a bounded
// scan of the first bytes after the header that tells a token stream from
// bytes that merely follow a valid header. It runs before any backend
// decodes the trace.

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/attkit/attkit/internal/exitcode"
)

// PlausibleScanBytes is how many bytes of a trace, header included,
// CheckPlausible looks at: the rest is not read, so the check costs the
// same on a trace of 4 KB and one of 4 GB.
const PlausibleScanBytes = 256 << 10

// The refusal rule (1.6): a body is implausible when at least
// implausibleMin of its scanned tokens are impossible and they make at
// least 1 in implausibleShare of them.
const (
	implausibleMin   = 8
	implausibleShare = 100
)

// An ImplausibleError reports a trace whose header is valid but whose body
// is not a plausible token stream (sqtt-format.md 1.6). Its exit code is 3.
type ImplausibleError struct {
	Arch   Arch
	Offset int64 // byte offset of the first impossible token
	Tokens int   // tokens scanned
	Bad    int   // impossible tokens among them
	What   string
}

func (e *ImplausibleError) Error() string {
	return fmt.Sprintf("not a plausible %s thread trace: %d of the first %d tokens are impossible "+
		"(the first, at byte %d: %s); the header is valid but the data after it is not a token stream",
		e.Arch.Name, e.Bad, e.Tokens, e.Offset, e.What)
}

// ExitCode implements exitcode.Coder.
func (e *ImplausibleError) ExitCode() int { return exitcode.Format }

// scanStats is what a plausibility scan counted.
type scanStats struct {
	tokens int
	bad    int
	first  int64 // byte offset of the first bad token, -1 if none
	what   string
	val    uint64
}

// flag counts an impossible token at bit bitPos; what, a format with one
// %d or %x verb for val, says what it is (formatted only for the first).
func (s *scanStats) flag(bitPos int64, what string, val uint64) {
	if s.bad == 0 {
		s.first, s.what, s.val = bitPos/8, what, val
	}
	s.bad++
}

// CheckPlausible scans prefix, the first bytes of a trace (at most
// PlausibleScanBytes are looked at; the whole trace when it is shorter),
// and fails with an *ImplausibleError when its body is not a plausible
// token stream of the architecture its header announces (1.6). A header
// Detect does not know, or one of an architecture the native decoder does
// not decode (MI400), passes: that is the backend's to judge. So do an
// empty prefix, a header alone and a cut trace: only a body that is there
// and is no token stream fails.
func CheckPlausible(prefix []byte) error {
	arch, err := Detect(prefix)
	if err != nil || !arch.Supported() {
		return nil
	}
	prefix = prefix[:min(len(prefix), PlausibleScanBytes)]
	var s scanStats
	if arch.GFXIP == 9 {
		s = scanGFX9(prefix)
	} else {
		s = scanRDNA(prefix, arch)
	}
	if s.bad >= implausibleMin && s.bad*implausibleShare >= s.tokens {
		return &ImplausibleError{Arch: arch, Offset: s.first, Tokens: s.tokens, Bad: s.bad,
			What: fmt.Sprintf(s.what, s.val)}
	}
	return nil
}

// scanGFX9 walks the 16-bit aligned tokens after the 8-byte software
// header (2.2.2) and counts the impossible ones: a wave slot above 9
// (2.2.4), a MISC type beyond SAVE_CONTEXT, an INST type beyond
// GO_TO_TRAP. A token cut by the end of the prefix is not counted.
func scanGFX9(b []byte) scanStats {
	s := scanStats{first: -1}
	for pos := 8; pos+2 <= len(b); {
		typ := b[pos] & 0xF
		n := gfx9TokenLen[typ]
		if pos+n > len(b) {
			break
		}
		var v uint64
		for i := n - 1; i >= 0; i-- {
			v = v<<8 | uint64(b[pos+i])
		}
		s.tokens++
		bit := int64(pos) * 8
		switch typ {
		case tWaveStart, tWaveAlloc, tWaveEnd, tShaderData:
			if v>>10&0xF >= gfx9Slots {
				s.flag(bit, "wave slot %d in a WAVE or SHADERDATA token", v>>10&0xF)
			}
		case tInst, tInstPC:
			if v>>5&0xF >= gfx9Slots {
				s.flag(bit, "wave slot %d in an INST or INST_PC token", v>>5&0xF)
			} else if typ == tInst && v>>11&0x1F > 29 {
				s.flag(bit, "reserved instruction type %d", v>>11&0x1F)
			}
		case tMisc:
			if v>>13&7 > miscSaveContext {
				s.flag(bit, "reserved MISC type %d", v>>13&7)
			}
		}
		pos += n
	}
	return s
}

// scanRDNA walks the RDNA token stream after the HEADER token with the
// generation's table (2.3.1, 2.3.2) and counts the impossible tokens: a
// table slot no token starts with (UNKNOWN), and a second HEADER.
func scanRDNA(b []byte, a Arch) scanStats {
	s := scanStats{first: -1}
	table := gfx12Table
	switch a.GFXIP {
	case 10:
		table = gfx10Table
	case 11:
		table = gfx11Table
	}
	end := int64(len(b)) * 8
	window := func(p int64) uint64 {
		i := int(p >> 3)
		sh := uint(p & 7)
		if len(b)-i >= 9 {
			return binary.LittleEndian.Uint64(b[i:])>>sh | uint64(b[i+8])<<(64-sh)
		}
		var tmp [9]byte
		copy(tmp[:], b[i:])
		return binary.LittleEndian.Uint64(tmp[:])>>sh | uint64(tmp[8])<<(64-sh)
	}
	extSkip := false
	for pos := int64(64); pos < end; {
		w := window(pos)
		if extSkip {
			if w&1 != 0 {
				pos += 8
				continue
			}
			extSkip = false
		}
		e := table[w&0xFF]
		if e.typ == rNop {
			pos += 4
			continue
		}
		if pos+int64(e.bits) > end {
			break // cut by the end of the prefix
		}
		s.tokens++
		switch e.typ {
		case rUnknown:
			s.flag(pos, "reserved token code 0x%02x", w&0xFF)
		case rHeader:
			s.flag(pos, "a second HEADER token%.0d", 0)
		case rWaveStartExt:
			extSkip = a.GFXIP >= 12
		}
		pos += int64(e.bits)
	}
	return s
}

// PlausiblePrefix reads the first PlausibleScanBytes of r (all of it when
// shorter) for CheckPlausible, and returns the reader to decode from in
// r's place. A regular file at offset 0 (an *os.File or anything with
// ReadAt and Seek) is read with ReadAt and returned as it is, so that a
// backend keeps its Stat, ReadAt and Seek; any other reader is returned
// wrapped in a bufio.Reader holding the prefix.
func PlausiblePrefix(r io.Reader) (prefix []byte, rest io.Reader, err error) {
	type readAtSeeker interface {
		io.ReaderAt
		io.Seeker
	}
	if rs, ok := r.(readAtSeeker); ok && isRegular(r) {
		if off, err := rs.Seek(0, io.SeekCurrent); err == nil && off == 0 {
			buf := make([]byte, PlausibleScanBytes)
			n, err := rs.ReadAt(buf, 0)
			if err != nil && !errors.Is(err, io.EOF) {
				return nil, r, err
			}
			return buf[:n], r, nil
		}
	}
	br := bufio.NewReaderSize(r, PlausibleScanBytes)
	p, err := br.Peek(PlausibleScanBytes)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return nil, br, err
	}
	return p, br, nil
}

func isRegular(r io.Reader) bool {
	st, ok := r.(interface{ Stat() (os.FileInfo, error) })
	if !ok {
		return false
	}
	fi, err := st.Stat()
	return err == nil && fi.Mode().IsRegular()
}
