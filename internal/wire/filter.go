package wire

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/itchyny/gojq"
)

// A Filter runs a jq program (gojq) on the JSON projection of records. It is
// compiled once and reused for every record; it is not safe for concurrent
// use.
type Filter struct {
	code    *gojq.Code
	o       objBuilder
	buf     []byte
	timeout time.Duration
}

// FilterError is a jq program that does not compile; its exit code is 2.
type FilterError struct{ Err error }

func (e *FilterError) Error() string { return fmt.Sprintf("--jq: %v", e.Err) }
func (e *FilterError) Unwrap() error { return e.Err }

// ExitCode implements the tools' exit-code convention: a usage error.
func (e *FilterError) ExitCode() int { return 2 }

// CompileFilter parses and compiles a jq program.
func CompileFilter(src string) (*Filter, error) {
	q, err := gojq.Parse(src)
	if err != nil {
		return nil, &FilterError{err}
	}
	code, err := gojq.Compile(q)
	if err != nil {
		return nil, &FilterError{err}
	}
	return &Filter{code: code, timeout: 10 * time.Second}, nil
}

// value returns the projection of record i as a gojq input.
func (f *Filter) value(h *Header, b *Batch, i int) (any, error) {
	f.buf = f.o.record(f.buf[:0], h, b, i)
	dec := json.NewDecoder(bytes.NewReader(f.buf))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// run calls yield for each result of the program on record i.
func (f *Filter) run(h *Header, b *Batch, i int, yield func(any) (bool, error)) error {
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
			return fmt.Errorf("--jq: %v", err)
		}
		more, err := yield(r)
		if err != nil || !more {
			return err
		}
	}
}

// Match reports whether the program yields a value other than false or null
// for record i (a program yielding nothing rejects the record).
func (f *Filter) Match(h *Header, b *Batch, i int) (bool, error) {
	keep := false
	err := f.run(h, b, i, func(v any) (bool, error) {
		keep = v != nil && v != false
		return !keep, nil
	})
	return keep, err
}

// AppendResults appends each result of the program on record i to dst as a
// line of compact JSON, as `jq -c` prints it.
func (f *Filter) AppendResults(dst []byte, h *Header, b *Batch, i int) ([]byte, error) {
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

// Apply removes from b, in place, every record the program rejects. A batch
// of an unknown type is kept or dropped whole; so are GFXIP and
// RT_FREQUENCY batches. Callers skip batches left empty.
func (f *Filter) Apply(h *Header, b *Batch) error {
	switch {
	case !b.Type.Known(), b.Type == TypeGFXIP, b.Type == TypeRTFrequency:
		keep, err := f.Match(h, b, 0)
		if err != nil {
			return err
		}
		if !keep {
			b.Reset(b.Type)
			b.Raw.Count = 0
			b.emptied = true
		}
		return nil
	}
	n := b.Len()
	keepIdx := make([]bool, n)
	for i := 0; i < n; i++ {
		k, err := f.Match(h, b, i)
		if err != nil {
			return err
		}
		keepIdx[i] = k
	}
	b.Info = compactSlice(b.Info, keepIdx, b.Type == TypeInfo)
	b.Occupancy = compactSlice(b.Occupancy, keepIdx, b.Type == TypeOccupancy)
	b.PerfEvents = compactSlice(b.PerfEvents, keepIdx, b.Type == TypePerfEvent)
	b.Events = compactSlice(b.Events, keepIdx, b.Type == TypeEvent)
	b.ShaderData = compactSlice(b.ShaderData, keepIdx, b.Type == TypeShaderData)
	b.Realtime = compactSlice(b.Realtime, keepIdx, b.Type == TypeRealtime)
	b.OtherSIMD = compactSlice(b.OtherSIMD, keepIdx, b.Type == TypeInstOtherSIMD)
	b.Dispatches = compactSlice(b.Dispatches, keepIdx, b.Type == TypeDispatch)
	b.Markers = compactSlice(b.Markers, keepIdx, b.Type == TypeMarker)
	if b.Type == TypeWave {
		// Swap rather than overwrite so each wave keeps its own slices.
		j := 0
		for i, k := range keepIdx {
			if k {
				b.Waves[i], b.Waves[j] = b.Waves[j], b.Waves[i]
				j++
			}
		}
		b.Waves = b.Waves[:j]
	}
	return nil
}

func compactSlice[T any](s []T, keep []bool, active bool) []T {
	if !active {
		return s
	}
	j := 0
	for i, k := range keep {
		if k {
			s[j] = s[i]
			j++
		}
	}
	return s[:j]
}

// Empty reports whether b holds no record (after Apply dropped them all).
func (b *Batch) Empty() bool {
	if b.emptied {
		return true
	}
	switch b.Type {
	case TypeGFXIP, TypeRTFrequency:
		return false
	}
	if !b.Type.Known() {
		return false
	}
	return b.Len() == 0
}
