//go:build cgo

package cdec

/*
#include <stdint.h>
#include "cdec.h"
*/
import "C"

import (
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"github.com/attkit/attkit/internal/exitcode"
	"github.com/attkit/attkit/internal/wire"
)

func wireP(addr, coid uint64) wire.PC { return wire.PC{Address: addr, CodeObjectID: coid} }

// A cLayout is what the C side knows of a record type's C struct
// (recordLayout, generated from internal/wire/layout.txt).
type cLayout struct {
	size      uintptr
	selfSized bool // the struct begins with its own size
	waves     bool // it points to wave arrays
	strings   bool // it points to strings
}

func badBatch(t wire.RecordType, format string, args ...any) error {
	return exitcode.Errorf(exitcode.Failed, "rocprof-trace-decoder: implausible %s batch: %s", t, fmt.Sprintf(format, args...))
}

// convert fills s.batch from one batch the parse thread copied (it) out of
// a trace callback; convertRecords (generated from internal/wire's
// layout.txt) converts the records of a known type. GFXIP arrives as the
// pointer value (raw); a NULL pointer or zero count is an empty batch, as
// in upstream's Python layer.
// The parse thread has bounded the counts and sizes and chosen the
// records' stride (cdec_push): a larger stride for a type whose struct
// starts with its own size means a newer library appended fields; for an
// unknown type it is that leading size, and no data means the layout was
// unknowable (only the count is carried).
func (s *session) convert(it *C.cdec_item) error {
	b := &s.batch
	t := wire.RecordType(uint32(it._type)) // a negative id becomes a large unknown one
	b.Reset(t)
	data, count := it.data, uint64(it.count)
	if t == wire.TypeGFXIP {
		b.GFXIP = uint64(it.raw)
		return nil
	}
	if data == nil || count == 0 {
		if t == wire.TypeRTFrequency {
			return badBatch(t, "no value")
		}
		if !t.Known() {
			b.Raw.Count = count
		}
		return nil
	}
	n, es := int(count), uintptr(it.elem)
	if !t.Known() {
		b.Raw.Count = count
		b.Raw.ElemSize = uint64(es)
		b.Raw.Data = append(b.Raw.Data[:0], unsafe.Slice((*byte)(data), n*int(es))...)
		return nil
	}
	convertRecords(b, t, data, n, es)
	return nil
}

// parallelMin is the batch size from which inParts splits the conversion:
// the library delivers a trace's whole occupancy (hundreds of thousands of
// records) in one of its last callbacks, so its conversion is what remains
// to do once the parse has returned, with every core free again.
const parallelMin = 1 << 16

// inParts runs f over [0, n): at once for a small n, else in up to four
// parts on as many goroutines. A panic in a part is raised again in the
// caller, whose recover turns it into an error.
func inParts(n int, f func(lo, hi int)) {
	parts := min(runtime.GOMAXPROCS(0), 4)
	if n < parallelMin || parts < 2 {
		f(0, n)
		return
	}
	var wg sync.WaitGroup
	var once sync.Once
	var failure any
	for k := 1; k < parts; k++ {
		wg.Go(func() {
			defer func() {
				if r := recover(); r != nil {
					once.Do(func() { failure = r })
				}
			}()
			f(n*k/parts, n*(k+1)/parts)
		})
	}
	defer func() {
		wg.Wait()
		if failure != nil {
			panic(failure)
		}
	}()
	f(0, n/parts)
}

// grow returns s with length n, reusing its capacity. A larger slice is
// allocated once and keeps the old elements (a wave's arrays are reused).
func grow[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	t := make([]T, n)
	copy(t, s[:cap(s)])
	return t
}
