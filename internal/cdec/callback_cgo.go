//go:build cgo

package cdec

// The functions the C trampolines call. This preamble only declares: cgo
// copies it into two C files because of the //export lines.

/*
#include <stdint.h>
#include <stdlib.h>
#include "cdec.h"
*/
import "C"

import (
	"unsafe"

	"github.com/attkit/attkit/internal/exitcode"
)

// cdecGoISA asks the provider about one PC for the C-side ISA cache
// (cdec_isa_tramp, which plays the buffer-size protocol): on success it
// sets *text to a malloc'ed copy of the text (NULL when empty, owned by the
// cache), *length to its length and *memSize to the instruction's size in
// memory (at least 4). A PC the provider does not know answers
// INVALID_ARGUMENT; the cache keeps that too. A failed session or a panic
// answers ERROR, which is not cached.
//
//export cdecGoISA
func cdecGoISA(text **C.char, length, memSize *C.uint64_t, addr, coid C.uint64_t, ud C.uintptr_t) (status C.int) {
	s := sessionOf(ud)
	defer func() {
		if r := recover(); r != nil {
			s.mu.Lock()
			s.fail(panicError("ISA", r))
			s.mu.Unlock()
			status = StatusError
		}
	}()
	s.mu.Lock()
	failed := s.failed()
	s.mu.Unlock()
	if failed {
		return StatusError
	}
	src, n, ok := s.p.ISA(wireP(uint64(addr), uint64(coid)))
	if !ok {
		return StatusInvalidArgument
	}
	if len(src) > 0 {
		p := C.malloc(C.size_t(len(src)))
		if p == nil {
			return StatusError
		}
		copy(unsafe.Slice((*byte)(p), len(src)), src)
		*text = (*C.char)(p)
	}
	*length = C.uint64_t(len(src))
	*memSize = C.uint64_t(max(n, 4))
	return StatusSuccess
}

//export cdecGoData
func cdecGoData(buf **C.uint8_t, size *C.uint64_t, ud C.uintptr_t) (more C.uint64_t) {
	s := sessionOf(ud)
	s.mu.Lock()
	defer s.mu.Unlock()
	defer func() {
		if r := recover(); r != nil {
			s.fail(panicError("data", r))
			more = 0
		}
	}()
	if buf == nil || size == nil {
		return 0
	}
	*buf, *size = nil, 0
	if s.failed() {
		return 0
	}
	for s.next < len(s.chunks) {
		c := s.chunks[s.next]
		s.next++
		if c.n == 0 {
			continue // an empty buffer would end the library's loop
		}
		p := c.c
		if p == nil {
			if p = s.cbuf(c.goBuf); p == nil {
				s.fail(exitcode.Errorf(exitcode.Failed, "rocprof-trace-decoder: out of C memory for a %d-byte trace buffer", c.n))
				return 0
			}
		}
		*buf = (*C.uint8_t)(p)
		*size = C.uint64_t(c.n)
		return 1
	}
	return 0
}
