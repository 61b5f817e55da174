// Package jq runs the tools' --jq programs: a jq program (gojq) on the JSON
// projection of each record of a record stream (docs/wire.md, "JSON
// projection"). Records flow in as wire batches; out come either the
// program's results as JSON lines (what `jq -c` prints on
// `att-decode --format json`) or the batch with the records the program
// rejects removed.
//
// It is its own package so that internal/wire, which every tool and the
// decoders import, does not pull in gojq: only the commands that take
// --jq do (as golang/perf keeps benchfmt apart from benchproc).
package jq

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/itchyny/gojq"

	"github.com/attkit/attkit/internal/exitcode"
	"github.com/attkit/attkit/internal/wire"
)

// A Filter is a compiled jq program. It is compiled once and reused for
// every record; it is not safe for concurrent use.
type Filter struct {
	code    *gojq.Code
	proj    wire.JSONWriter
	buf     []byte
	keep    []bool
	timeout time.Duration
}

// An Error is a jq program that does not compile or fails on a record. Its
// message starts "--jq: "; its exit code is 2 (usage) for a program that
// does not compile, 1 for one that fails at run time.
type Error struct {
	Err     error
	compile bool
}

func (e *Error) Error() string { return fmt.Sprintf("--jq: %v", e.Err) }
func (e *Error) Unwrap() error { return e.Err }

// ExitCode implements exitcode.Coder.
func (e *Error) ExitCode() int {
	if e.compile {
		return exitcode.Usage
	}
	return exitcode.Failed
}

// Compile parses and compiles a jq program.
func Compile(src string) (*Filter, error) {
	q, err := gojq.Parse(src)
	if err != nil {
		return nil, &Error{Err: err, compile: true}
	}
	code, err := gojq.Compile(q)
	if err != nil {
		return nil, &Error{Err: err, compile: true}
	}
	return &Filter{code: code, timeout: 10 * time.Second}, nil
}

// value returns the projection of record i as a gojq input: gojq takes
// only the types encoding/json produces (numbers as json.Number).
func (f *Filter) value(h *wire.Header, b *wire.Batch, i int) (any, error) {
	f.buf = f.proj.AppendRecord(f.buf[:0], h, b, i)
	dec := json.NewDecoder(bytes.NewReader(f.buf))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// run calls yield for each result of the program on record i. A runaway
// program is stopped after the filter's timeout.
func (f *Filter) run(h *wire.Header, b *wire.Batch, i int, yield func(any) (bool, error)) error {
	v, err := f.value(h, b, i)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), f.timeout)
	defer cancel()
	iter := f.code.RunWithContext(ctx, v)
	for {
		r, ok := iter.Next()
		if !ok {
			return nil
		}
		if err, isErr := r.(error); isErr {
			if h, halt := err.(*gojq.HaltError); halt && h.Value() == nil {
				return nil
			}
			return &Error{Err: err}
		}
		more, err := yield(r)
		if err != nil || !more {
			return err
		}
	}
}

// Match reports whether the program yields a value other than false or null
// for record i (a program yielding nothing rejects the record).
func (f *Filter) Match(h *wire.Header, b *wire.Batch, i int) (bool, error) {
	keep := false
	err := f.run(h, b, i, func(v any) (bool, error) {
		keep = v != nil && v != false
		return !keep, nil
	})
	return keep, err
}

// AppendResults appends each result of the program on record i to dst as a
// line of compact JSON, as `jq -c` prints it.
func (f *Filter) AppendResults(dst []byte, h *wire.Header, b *wire.Batch, i int) ([]byte, error) {
	err := f.run(h, b, i, func(v any) (bool, error) {
		p, err := gojq.Marshal(v)
		if err != nil {
			return false, err
		}
		dst = append(dst, p...)
		dst = append(dst, '\n')
		return true, nil
	})
	return dst, err
}

// Apply removes from b, in place, every record the program rejects
// (wire.Batch.Keep). A batch of an unknown type is kept or dropped whole;
// so are GFXIP and RT_FREQUENCY batches. Callers skip batches left empty
// (b.Empty()).
func (f *Filter) Apply(h *wire.Header, b *wire.Batch) error {
	n := b.Len()
	if !b.Type.Known() {
		n = 1
	}
	f.keep = f.keep[:0]
	for i := 0; i < n; i++ {
		k, err := f.Match(h, b, i)
		if err != nil {
			return err
		}
		f.keep = append(f.keep, k)
	}
	b.Keep(f.keep)
	return nil
}
