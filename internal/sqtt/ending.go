package sqtt

// How a trace ends (sqtt-format.md 1.7): whether it was cut inside a token
// or with waves still running, and whether its size is that of a full
// buffer. The native decoder reports it through Decoder.Ended; for any
// other backend EndWatch counts the open waves from the records.

import (
	"fmt"

	"github.com/attkit/attkit/internal/wire"
)

// An Ending tells how a decoded trace ended. The decode driver
// (internal/driver, Result.Ending) fills it for every backend and warns
// when Cut; att-info reports it. The zero value is a trace that ended
// cleanly.
type Ending struct {
	// Bytes is the length of the trace.
	Bytes int64
	// InToken: the trace ends inside a token, MissingBits of it beyond
	// the last byte (native decoder only: another backend's framing is
	// not seen, so it stays false there).
	InToken     bool
	MissingBits int
	// OpenWaves counts the wave slots, of every CU, whose last occupancy
	// record is a start: waves still running when the trace ended (their
	// WAVE records, on the target CU, are incomplete).
	OpenWaves int
}

// Cut reports whether the trace was cut short: it ends inside a token or
// with waves still running. No full real trace does either (sqtt-format.md
// 1.7).
func (e Ending) Cut() bool { return e.InToken || e.OpenWaves > 0 }

// FullBuffer reports whether the trace's length is a whole number of
// mebibytes (after gfx9's 8-byte software header, too), the size a
// capture's trace buffer is configured in: a cut trace of that size most
// likely filled its buffer, one of another size was cut afterwards (an
// interrupted copy or capture).
func (e Ending) FullBuffer() bool { return FullBufferSize(e.Bytes) }

// FullBufferSize reports whether n bytes are a whole number of mebibytes,
// possibly after an 8-byte gfx9 software header (see Ending.FullBuffer).
func FullBufferSize(n int64) bool {
	const mib = 1 << 20
	return n >= mib && (n%mib == 0 || (n-8)%mib == 0)
}

// Warning is the text of the cut-trace warning ("" when the trace was not
// cut): what was cut, how many waves, and what the size suggests.
func (e Ending) Warning() string {
	if !e.Cut() {
		return ""
	}
	var what string
	switch {
	case e.InToken && e.OpenWaves > 0:
		what = fmt.Sprintf("it ends inside a token (%d bits missing) with %s still running", e.MissingBits, waves(e.OpenWaves))
	case e.InToken:
		what = fmt.Sprintf("it ends inside a token (%d bits missing)", e.MissingBits)
	default:
		what = fmt.Sprintf("it ends with %s still running", waves(e.OpenWaves))
	}
	if e.OpenWaves > 0 {
		what += " (their records are incomplete)"
	}
	if e.FullBuffer() {
		return fmt.Sprintf("cut trace: %s; its size, %d MiB, is a whole buffer: the trace buffer probably filled "+
			"(a larger buffer, rocprofv3 --att-buffer-size, or fewer kernels keeps all of it)", what, e.Bytes>>20)
	}
	return fmt.Sprintf("cut trace: %s; its size, %d bytes, is no buffer size: the file was probably cut short "+
		"after the capture (an interrupted copy or capture)", what, e.Bytes)
}

func waves(n int) string {
	if n == 1 {
		return "1 wave"
	}
	return fmt.Sprintf("%d waves", n)
}

// EndWatch counts the waves the occupancy records of one trace leave
// running, whichever backend decoded them: feed it every batch, in order,
// and read Open at the end. The zero value is ready to use.
type EndWatch struct {
	bal  []int8 // by cu<<7 | simd<<5 | wave: 1 running, 0 not
	open int
}

// Batch takes one batch of records (only occupancy records count).
func (w *EndWatch) Batch(b *wire.Batch) {
	if b.Type == wire.TypeOccupancy {
		w.occupancy(b.Occupancy)
	}
}

func (w *EndWatch) occupancy(o []wire.Occupancy) {
	if len(o) == 0 {
		return
	}
	if w.bal == nil {
		w.bal = make([]int8, 1<<15)
	}
	for i := range o {
		k := int(o[i].CU)<<7 | int(o[i].SIMD&3)<<5 | int(o[i].WaveID&31)
		switch {
		case o[i].Start && w.bal[k] == 0:
			w.bal[k] = 1
			w.open++
		case !o[i].Start && w.bal[k] == 1:
			w.bal[k] = 0
			w.open--
		}
	}
}

// Open is the number of wave slots whose last occupancy record was a start.
func (w *EndWatch) Open() int { return w.open }

// tailCut records, at the end of an RDNA buffer of total bits, whether
// the buffer ends inside a token other than a TIMESTAMP (1.7): the last
// token read, which started at bit last, ran past the end (gfx10 and gfx11
// read on with zeros, 2.3.1), or a token of the bits the gfx12 reader
// leaves unread does. Real buffers end inside a TIMESTAMP
// (gfx1100_*_0 and gfx1200_empty_0, shader engine 1: its first byte is
// the buffer's last), so that one does not count.
func (r *rdna) tailCut(total, last int64) {
	if r.pos > total {
		if last>>3 >= r.bufOff && r.table[r.window(last)&0xFF].typ != rTimestamp {
			r.ps.cutBits = int(r.pos - total)
		}
		return
	}
	for p := r.pos; p < total; {
		e := r.table[r.window(p)&0xFF]
		if e.typ == rNop {
			p += 4
			continue
		}
		if p+int64(e.bits) > total {
			if e.typ != rTimestamp {
				r.ps.cutBits = int(p + int64(e.bits) - total)
			}
			return
		}
		p += int64(e.bits)
	}
}
