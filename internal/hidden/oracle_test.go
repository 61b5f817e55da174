package hidden

import (
	"github.com/attkit/attkit/internal/wire"
)

// The oracle is a second, independent transcription of python-layer §8.2
// that works cycle by cycle on occupancy bitmaps instead of interval
// lists. Coalescing with full durations is a single-server queue: each
// span is work of its length arriving at its start, and a cycle is busy
// while work is queued (a span arriving the cycle the queue empties joins
// the busy period, as touching spans join an accumulator). Unions are
// bitwise ORs, and covered(c) counts the busy cycles before c.

// bitmap is the busy cycles of [lo, lo+len(busy)).
type bitmap struct {
	lo   int64
	busy []bool
	pre  []int64 // pre[i]: busy cycles of [lo, lo+i)
}

// queueBitmap simulates the work queue over [lo, hi).
func queueBitmap(spans []Span, lo, hi int64) *bitmap {
	arrive := make([]int64, hi-lo)
	for _, s := range spans {
		if s.Start >= lo && s.Start < hi {
			arrive[s.Start-lo] += s.Len
		}
	}
	b := &bitmap{lo: lo, busy: make([]bool, hi-lo)}
	var queued int64
	for t := range arrive {
		queued += arrive[t]
		if queued > 0 {
			b.busy[t] = true
			queued--
		}
	}
	if queued > 0 {
		panic("oracle: range too short for the queued work")
	}
	return b.prefix()
}

func (b *bitmap) prefix() *bitmap {
	b.pre = make([]int64, len(b.busy)+1)
	for i, v := range b.busy {
		b.pre[i+1] = b.pre[i]
		if v {
			b.pre[i+1]++
		}
	}
	return b
}

func orBitmaps(a, b *bitmap) *bitmap {
	out := &bitmap{lo: a.lo, busy: make([]bool, len(a.busy))}
	for i := range out.busy {
		out.busy[i] = a.busy[i] || b.busy[i]
	}
	return out.prefix()
}

func (b *bitmap) covered(c int64) int64 {
	i := c - b.lo
	if i <= 0 {
		return 0
	}
	if i > int64(len(b.busy)) {
		i = int64(len(b.busy))
	}
	return b.pre[i]
}

// window counts the busy cycles of each part of the instruction.
func (b *bitmap) window(last, clock, stall, cycles int64, withIssue bool) (idle, st, iss int64) {
	if clock > last {
		idle = b.covered(clock) - b.covered(last)
	}
	if stall > 0 {
		st = b.covered(clock+stall) - b.covered(clock)
	}
	if withIssue && cycles > stall {
		iss = b.covered(clock+cycles) - b.covered(clock+stall)
	}
	return
}

type oracleResult map[wire.PC][3]int64

// oracle computes the per-PC hidden latency of the captures (each a shader
// engine). It needs the range of cycles the records span.
func oracle(ses []Capture, matrix func(wire.PC) bool) oracleResult {
	res := oracleResult{}
	isMatrix := func(pc wire.PC) bool { return matrix != nil && matrix(pc) }
	for _, c := range ses {
		simds := map[uint8]bool{}
		for _, w := range c.Waves {
			simds[w.SIMD] = true
		}
		for simd := range 256 {
			if !simds[uint8(simd)] {
				continue
			}
			var valu, mat, vmem, scalar []Span
			for _, w := range c.Waves {
				if int(w.SIMD) != simd {
					continue
				}
				for _, in := range w.Instructions {
					st := int64(in.Stall)
					cyc := max(st, int64(in.Duration))
					s := Span{in.Time + st, cyc - st}
					switch cat := in.Category; {
					case isMatrix(in.PC):
						mat = append(mat, s)
						valu = append(valu, Span{s.Start, (3 * s.Len) / 4})
					case cat == wire.CatVALU:
						valu = append(valu, s)
					case cat == wire.CatVMEM, cat == wire.CatFLAT, cat == wire.CatLDS:
						vmem = append(vmem, s)
					case cat == wire.CatSALU, cat == wire.CatSMEM:
						scalar = append(scalar, s)
					}
				}
			}
			for _, o := range c.Other {
				if o.Cycles > 0 {
					vmem = append(vmem, Span{o.Time, int64(o.Cycles)})
				}
			}
			// The cycles this scope's records span, and room for the
			// work still queued after the last of them.
			lo, hi := int64(1<<62), int64(-1<<62)
			grow := func(a, b int64) { lo, hi = min(lo, a), max(hi, b) }
			for _, w := range c.Waves {
				if int(w.SIMD) != simd {
					continue
				}
				grow(w.BeginTime, w.BeginTime+1)
				for _, in := range w.Instructions {
					grow(in.Time, in.Time+max(int64(in.Stall), int64(in.Duration))+1)
				}
			}
			for _, o := range c.Other {
				grow(o.Time, o.Time+1)
			}
			for _, l := range [][]Span{valu, mat, vmem, scalar} {
				for _, s := range l {
					hi += s.Len
				}
			}
			hi++
			bValu, bMat := queueBitmap(valu, lo, hi), queueBitmap(mat, lo, hi)
			bVmem, bScalar := queueBitmap(vmem, lo, hi), queueBitmap(scalar, lo, hi)
			bMath := orBitmaps(bValu, bMat)
			bVector := orBitmaps(bMath, bVmem)
			bAll := orBitmaps(bVector, bScalar)
			for _, w := range c.Waves {
				if int(w.SIMD) != simd {
					continue
				}
				last := w.BeginTime
				for _, in := range w.Instructions {
					clock, st := in.Time, int64(in.Stall)
					cyc := max(st, int64(in.Duration))
					pick := func(own, other *bitmap, ownIssue, otherIssue, otherWinsOnTie bool) [3]int64 {
						a1, a2, a3 := own.window(last, clock, st, cyc, ownIssue)
						b1, b2, b3 := other.window(last, clock, st, cyc, otherIssue)
						ownSum, otherSum := a1+a2+a3, b1+b2+b3
						if ownSum > otherSum || (ownSum == otherSum && !otherWinsOnTie) {
							return [3]int64{a1, a2, a3}
						}
						return [3]int64{b1, b2, b3}
					}
					var h [3]int64
					switch cat := in.Category; {
					case isMatrix(in.PC):
						h = pick(bValu, bMat, false, false, true)
					case cat == wire.CatVALU:
						h = pick(bValu, bMat, false, true, true)
					case cat == wire.CatVMEM, cat == wire.CatFLAT, cat == wire.CatLDS:
						h = pick(bVmem, bMath, false, true, false)
					case cat == wire.CatSALU, cat == wire.CatSMEM:
						h = pick(bScalar, bVector, false, true, false)
					default:
						a, b, c := bAll.window(last, clock, st, cyc, true)
						h = [3]int64{a, b, c}
					}
					if in.PC != (wire.PC{}) {
						r := res[in.PC]
						for k := range r {
							r[k] += h[k]
						}
						res[in.PC] = r
					}
					last = clock + cyc
				}
			}
		}
	}
	return res
}
