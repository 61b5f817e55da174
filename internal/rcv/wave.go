package rcv

import (
	"strconv"

	"github.com/attkit/attkit/internal/pyjson"
	"github.com/attkit/attkit/internal/wire"
)

// waveTree is wave_filenames: SE → SIMD → slot → the waves written there,
// every level in first-insertion order. A wave's N is its position in its
// slot's list; each slot's entries wait in the spool file.
type waveTree struct {
	ses []int
	se  map[int]*simdNode
}

type simdNode struct {
	simds []uint8
	simd  map[uint8]*slotNode
}

type slotNode struct {
	slots []uint8
	slot  map[uint8]*list // {"N": [file, begin, end], ...} at level 4
}

// span is the [begin, end] of a written wave or per-trace file.
type span struct{ begin, end int64 }

// add registers the wave file name, the N-th of its slot.
func (t *waveTree) add(sp *spoolFile, se int, simd, slot uint8, n int, name string, s span) error {
	sn := t.se[se]
	if sn == nil {
		sn = &simdNode{simd: map[uint8]*slotNode{}}
		t.se[se] = sn
		t.ses = append(t.ses, se)
	}
	ln := sn.simd[simd]
	if ln == nil {
		ln = &slotNode{slot: map[uint8]*list{}}
		sn.simd[simd] = ln
		sn.simds = append(sn.simds, simd)
	}
	l, ok := ln.slot[slot]
	if !ok {
		l = newList(sp, '{', 4)
		ln.slots = append(ln.slots, slot)
		ln.slot[slot] = l
	}
	return l.add(func(dst []byte) []byte {
		dst = append(dst, '"')
		dst = strconv.AppendInt(dst, int64(n), 10)
		dst = append(dst, "\": "...)
		return pyjson.AppendAt(dst, []any{name, s.begin, s.end}, 5)
	})
}

// next returns the N the next wave of (se, simd, slot) gets.
func (t *waveTree) next(se int, simd, slot uint8) int {
	if sn := t.se[se]; sn != nil {
		if ln := sn.simd[simd]; ln != nil {
			if l := ln.slot[slot]; l != nil {
				return l.n
			}
		}
	}
	return 0
}

// WaveFileName returns the name of the n-th wave file of a wave slot,
// se<SE>_sm<SIMD>_sl<SLOT>_wv<N>.json. The viewer finds code.json by
// cutting a wave file's path at its last "se", so the name must start with
// "se" and hold no other "se".
func WaveFileName(se, simd, slot, n int) string {
	b := make([]byte, 0, 32)
	return string(appendWaveFileName(b, se, simd, slot, n))
}

func appendWaveFileName(b []byte, se, simd, slot, n int) []byte {
	b = append(b, "se"...)
	b = strconv.AppendInt(b, int64(se), 10)
	b = append(b, "_sm"...)
	b = strconv.AppendInt(b, int64(simd), 10)
	b = append(b, "_sl"...)
	b = strconv.AppendInt(b, int64(slot), 10)
	b = append(b, "_wv"...)
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, ".json"...)
}

// writeWave writes the file of one wave (§5.6), unless the wave has no
// instructions and fewer than 3 timeline states. The wave has already been
// folded, so the line numbers of its PCs exist.
func (w *Writer) writeWave(se int, wv *wire.Wave) error {
	if len(wv.Instructions) == 0 && len(wv.Timeline) < 3 {
		return nil
	}
	n := w.waves.next(se, wv.SIMD, wv.WaveID)
	name := WaveFileName(se, int(wv.SIMD), int(wv.WaveID), n)
	w.buf = AppendWave(w.buf[:0], se, n, wv, w.fold.Line)
	if err := w.write(name, w.buf); err != nil {
		return err
	}
	sp, err := w.spoolFile()
	if err != nil {
		return err
	}
	if err := w.waves.add(sp, se, wv.SIMD, wv.WaveID, n, name, span{wv.BeginTime, wv.EndTime}); err != nil {
		return err
	}
	w.stats.WaveFiles++
	return nil
}

// AppendWave appends the wave file of wv, the n-th wave of its slot on
// shader engine se, to dst, in the bytes json.dumps(indent=2) writes:
//
//	{"name": "SE<se>", "duration": end-begin,
//	 "wave": {"cu", "id": n, "simd", "slot", "begin", "end",
//	          "instructions": [[time, category, stall, duration, line], …],
//	          "timeline": [[state, duration], …], "waitcnt": []},
//	 "num_stitched": len(instructions), "num_insts": len(instructions)}
//
// line gives the code.json line number of a PC. Wave files are the bulk of
// a folder, so this is written by hand rather than through pyjson (whose
// output it matches, as a test checks).
func AppendWave(dst []byte, se, n int, wv *wire.Wave, line func(wire.PC) int64) []byte {
	dst = append(dst, "{\n  \"name\": \"SE"...)
	dst = strconv.AppendInt(dst, int64(se), 10)
	dst = append(dst, "\",\n  \"duration\": "...)
	dst = strconv.AppendInt(dst, wv.EndTime-wv.BeginTime, 10)
	dst = append(dst, ",\n  \"wave\": {\n    \"cu\": "...)
	dst = strconv.AppendUint(dst, uint64(wv.CU), 10)
	dst = append(dst, ",\n    \"id\": "...)
	dst = strconv.AppendInt(dst, int64(n), 10)
	dst = append(dst, ",\n    \"simd\": "...)
	dst = strconv.AppendUint(dst, uint64(wv.SIMD), 10)
	dst = append(dst, ",\n    \"slot\": "...)
	dst = strconv.AppendUint(dst, uint64(wv.WaveID), 10)
	dst = append(dst, ",\n    \"begin\": "...)
	dst = strconv.AppendInt(dst, wv.BeginTime, 10)
	dst = append(dst, ",\n    \"end\": "...)
	dst = strconv.AppendInt(dst, wv.EndTime, 10)
	dst = append(dst, ",\n    \"instructions\": ["...)
	for i := range wv.Instructions {
		in := &wv.Instructions[i]
		dst = appendRow(dst, i, in.Time, int64(in.Category), int64(in.Stall), int64(in.Duration), line(in.PC))
	}
	dst = endRows(dst, len(wv.Instructions))
	dst = append(dst, ",\n    \"timeline\": ["...)
	for i, s := range wv.Timeline {
		dst = appendRow(dst, i, int64(s.Type), int64(s.Duration))
	}
	dst = endRows(dst, len(wv.Timeline))
	dst = append(dst, ",\n    \"waitcnt\": []\n  },\n  \"num_stitched\": "...)
	dst = strconv.AppendInt(dst, int64(len(wv.Instructions)), 10)
	dst = append(dst, ",\n  \"num_insts\": "...)
	dst = strconv.AppendInt(dst, int64(len(wv.Instructions)), 10)
	return append(dst, "\n}"...)
}

// appendRow appends row i of a wave file's list (instructions or timeline),
// a list of integers one level below the list, after a comma unless i is 0.
func appendRow(dst []byte, i int, vals ...int64) []byte {
	if i > 0 {
		dst = append(dst, ',')
	}
	dst = append(dst, "\n      ["...)
	for f, v := range vals {
		if f > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, "\n        "...)
		dst = strconv.AppendInt(dst, v, 10)
	}
	return append(dst, "\n      ]"...)
}

// endRows closes a wave file's list of n rows: "[]" when it is empty.
func endRows(dst []byte, n int) []byte {
	if n == 0 {
		return append(dst, ']')
	}
	return append(dst, "\n    ]"...)
}
