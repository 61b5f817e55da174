//go:build cgo

package cdec

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"testing"
	"time"
	"unsafe"
)

// sizedReader is a file-like reader whose Stat may disagree with its bytes,
// as a file that grows or shrinks while it is read.
type sizedReader struct {
	*bytes.Reader
	statSize int64
	failAt   int64 // ReadAt at or past this offset fails (0: never)
}

var errDisk = errors.New("disk error")

func (s *sizedReader) ReadAt(p []byte, off int64) (int, error) {
	if s.failAt > 0 && off+int64(len(p)) > s.failAt {
		return 0, errDisk
	}
	return s.Reader.ReadAt(p, off)
}

func (s *sizedReader) Stat() (os.FileInfo, error) { return fakeInfo{s.statSize}, nil }

type fakeInfo struct{ size int64 }

func (f fakeInfo) Name() string       { return "trace.att" }
func (f fakeInfo) Size() int64        { return f.size }
func (f fakeInfo) Mode() os.FileMode  { return 0o644 }
func (f fakeInfo) ModTime() time.Time { return time.Time{} }
func (f fakeInfo) IsDir() bool        { return false }
func (f fakeInfo) Sys() any           { return nil }

func readC(t *testing.T, r io.Reader) ([]byte, error) {
	t.Helper()
	c, err := readAllC(r)
	if err != nil {
		return nil, err
	}
	if c.c == nil {
		return nil, nil
	}
	defer freeC(c.c)
	return bytes.Clone(unsafe.Slice((*byte)(c.c), c.n)), nil
}

// TestReadAllC checks the trace reader on files large enough to be read
// in parallel: whole, from a non-zero offset, shorter or longer than their
// size said, and with a read error.
func TestReadAllC(t *testing.T) {
	data := make([]byte, parallelReadMin+12345)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	size := int64(len(data))
	for _, tc := range []struct {
		name     string
		statSize int64
		skip     int64
		want     []byte
	}{
		{"exact", size, 0, data},
		{"offset", size, 1000, data[1000:]},
		{"shrank", size + 4096, 0, data},
		{"shrank-half", 2 * size, 0, data},
		{"shrank-first-half", 3 * size, 0, data},
		{"grew", size - 5000, 0, data},
	} {
		r := &sizedReader{Reader: bytes.NewReader(data), statSize: tc.statSize}
		if tc.skip > 0 {
			io.CopyN(io.Discard, r, tc.skip)
		}
		got, err := readC(t, r)
		if err != nil || !bytes.Equal(got, tc.want) {
			t.Errorf("%s: %d bytes (err %v), want %d identical bytes", tc.name, len(got), err, len(tc.want))
		}
	}
	r := &sizedReader{Reader: bytes.NewReader(data), statSize: size, failAt: size - 10}
	if _, err := readC(t, r); !errors.Is(err, errDisk) {
		t.Errorf("read error: got %v", err)
	}
	// A real file, through os.File.
	path := t.TempDir() + "/trace.att"
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got, err := readC(t, f); err != nil || !bytes.Equal(got, data) {
		t.Errorf("os.File: %d bytes (err %v)", len(got), err)
	}
}

// TestInParts checks that every index is visited once and that a panic in
// any part reaches the caller.
func TestInParts(t *testing.T) {
	for _, n := range []int{0, 1, parallelMin - 1, parallelMin, 3*parallelMin + 7} {
		seen := make([]int32, n)
		inParts(n, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				seen[i]++
			}
		})
		for i, c := range seen {
			if c != 1 {
				t.Fatalf("n=%d: index %d visited %d times", n, i, c)
			}
		}
	}
	n := 4 * parallelMin
	for _, bad := range []int{0, n - 1} {
		func() {
			defer func() {
				if r := recover(); r != "boom" {
					t.Errorf("panic at %d: recovered %v", bad, r)
				}
			}()
			inParts(n, func(lo, hi int) {
				if lo <= bad && bad < hi {
					panic("boom")
				}
			})
		}()
	}
}
