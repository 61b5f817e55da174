package main

import (
	"context"
	"io"
	"os"
	"sync"
)

// A recFile is a trace's record file while it is written: the decode
// appends to it and the writer of the trace's run reads it as it grows, so
// that decoding (one core) and writing the viewer folder (the other)
// overlap instead of following one another.
type recFile struct {
	mu   sync.Mutex
	grew sync.Cond
	size int64 // bytes written so far
	done bool  // the decode ended
	err  error // how it ended (nil: complete)
}

func newRecFile() *recFile {
	r := &recFile{}
	r.grew.L = &r.mu
	return r
}

// appender returns the writer of the decode: what it writes into f is
// readable once Write returns.
func (r *recFile) appender(f io.Writer) io.Writer { return &recAppender{r: r, w: f} }

type recAppender struct {
	r *recFile
	w io.Writer
}

func (a *recAppender) Write(p []byte) (int, error) {
	n, err := a.w.Write(p)
	a.r.mu.Lock()
	a.r.size += int64(n)
	a.r.mu.Unlock()
	a.r.grew.Broadcast()
	return n, err
}

// end says the decode ended, with err nil when the file is complete.
func (r *recFile) end(err error) {
	r.mu.Lock()
	r.done, r.err = true, err
	r.mu.Unlock()
	r.grew.Broadcast()
}

// wake wakes the waiters to look at their context: under the lock, so
// that none is between its look and its wait.
func (r *recFile) wake() {
	r.mu.Lock()
	r.grew.Broadcast()
	r.mu.Unlock()
}

// wait waits until the decode ends: nil when it ended complete,
// errTraceFailed when it failed, ctx's error when ctx ends first.
func (r *recFile) wait(ctx context.Context) error {
	stop := context.AfterFunc(ctx, r.wake)
	defer stop()
	r.mu.Lock()
	defer r.mu.Unlock()
	for !r.done && ctx.Err() == nil {
		r.grew.Wait()
	}
	switch {
	case !r.done:
		return ctx.Err()
	case r.err != nil:
		return errTraceFailed
	}
	return nil
}

// follow returns a reader of the file f (the record file opened for
// reading) that reads what the decode wrote so far and waits for more
// until it ends: io.EOF when it ended complete, errTraceFailed when it
// failed, ctx's error when ctx ends first.
func (r *recFile) follow(ctx context.Context, f *os.File) io.ReadCloser {
	return &recFollower{ctx: ctx, r: r, f: f}
}

type recFollower struct {
	ctx context.Context
	r   *recFile
	f   *os.File
	off int64
}

func (fw *recFollower) Read(p []byte) (int, error) {
	r := fw.r
	stop := context.AfterFunc(fw.ctx, r.wake)
	defer stop()
	r.mu.Lock()
	for fw.off == r.size && !r.done && fw.ctx.Err() == nil {
		r.grew.Wait()
	}
	size, done, derr := r.size, r.done, r.err
	r.mu.Unlock()
	switch {
	case fw.off < size:
		n, err := fw.f.ReadAt(p[:min(int64(len(p)), size-fw.off)], fw.off)
		fw.off += int64(n)
		if err == io.EOF && n > 0 {
			err = nil
		}
		return n, err
	case !done:
		return 0, fw.ctx.Err()
	case derr != nil:
		return 0, errTraceFailed
	}
	return 0, io.EOF
}

func (fw *recFollower) Close() error { return fw.f.Close() }
