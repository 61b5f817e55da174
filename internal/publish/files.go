package publish

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"sync"
	"sync/atomic"
)

// A Files writes new files into one work folder (a temporary of a Set,
// renamed whole at Commit): a file is one create, its writes and a close,
// with no temporary name, rename, fsync or chmod of its own, since the
// folder is put on disk and in place as a whole. On Unix the folder is held
// open and files are created relative to it (openat), so a file costs
// three system calls where os.WriteFile's path costs five.
//
// WriteFileLater hands a file to one writer goroutine and returns, so that
// the caller makes the next file while the kernel creates this one (on
// another core); Wait waits for them. While the writer is busy, files go
// to it in batches (batchFiles files or batchBytes bytes), since waking it
// for each small file cost more system calls (futex, and the scheduler's
// nanosleep) than the file's own three; an idle writer gets a file at
// once. A Files is safe for concurrent use;
// Close may come from a signal handler's goroutine, after which writes
// fail.
type Files struct {
	dir string

	mu     sync.RWMutex // held shared while a file is created
	h      dirHandle    // opened at the first write
	closed bool

	sendMu sync.Mutex // held while a file is queued, and to stop the queue
	q      *fileQueue // started at the first WriteFileLater

	writingOut atomic.Bool  // a writeOut's helper runs
	wroteOut   atomic.Int32 // writeOuts whose helper succeeded (tests)
}

// A fileQueue is the files WriteFileLater queued and their writer.
type fileQueue struct {
	files   chan *fileBatch
	free    chan *fileBatch // batches written, for reuse
	pending sync.WaitGroup
	errMu   sync.Mutex
	err     error // the first failed write

	// pend is the files not yet handed to the writer. The writer takes
	// them itself when it has nothing queued, else says it is idle, and
	// then the next file is handed over at once: files wait in pend only
	// while the writer is busy, never while it waits for them (a
	// streaming att-rcv's files are written as they come).
	pendMu sync.Mutex
	pend   *fileBatch
	idle   bool // the writer waits for files, none pending
}

// A fileBatch is files handed to the writer at once: file i is names[i],
// its bytes data[ends[i-1]:ends[i]].
type fileBatch struct {
	names []string
	ends  []int
	data  []byte
}

// queueLen is how many batches wait for the writer at most; a batch is
// handed over at batchFiles files or batchBytes bytes.
const (
	queueLen   = 8
	batchFiles = 16
	batchBytes = 128 << 10
)

// errFilesClosed is what writes get after Close.
var errFilesClosed = errors.New("publish: work folder closed")

// NewFiles returns a Files for the existing folder dir.
func NewFiles(dir string) *Files { return &Files{dir: dir} }

// Dir returns the folder's path.
func (d *Files) Dir() string { return d.dir }

// WriteFile creates the file name (a base name) in the folder with data,
// with mode 0666 less the umask; a file of that name made before is
// replaced.
func (d *Files) WriteFile(name string, data []byte) error {
	w, err := d.Create(name)
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	return err
}

// Create creates the file name (a base name) in the folder for writing,
// with mode 0666 less the umask (emptying a file of that name made before).
// Its errors name the file by its path in the folder.
func (d *Files) Create(name string) (io.WriteCloser, error) {
	if name == "" || filepath.Base(name) != name || name == "." || name == ".." {
		return nil, fmt.Errorf("publish: %q is not a base name", name)
	}
	d.mu.Lock()
	if !d.closed && !d.h.ok() {
		h, err := openDirHandle(d.dir)
		if err != nil {
			d.mu.Unlock()
			return nil, &fs.PathError{Op: "open", Path: filepath.Join(d.dir, name), Err: unwrapPath(err)}
		}
		d.h = h
		openFiles.Lock()
		openFiles.m[d] = true
		openFiles.Unlock()
	}
	d.mu.Unlock()
	// Shared: Close does not let the folder go while a file is created in
	// it (its descriptor could be another file's by then).
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed {
		return nil, errFilesClosed
	}
	return d.h.create(d.dir, name)
}

// WriteFileLater is WriteFile done by the Files' writer goroutine, in the
// order of the calls: data is copied, and the call returns once the file
// is queued. It returns the error of a queued file that failed (then no
// more are written), else nil; Wait returns it too.
func (d *Files) WriteFileLater(name string, data []byte) error {
	d.sendMu.Lock()
	defer d.sendMu.Unlock()
	if d.q == nil {
		d.mu.RLock()
		closed := d.closed
		d.mu.RUnlock()
		if closed {
			return errFilesClosed
		}
		d.q = &fileQueue{files: make(chan *fileBatch, queueLen), free: make(chan *fileBatch, queueLen+2), idle: true}
		go d.q.run(d, d.q.files)
	}
	if d.q.files == nil {
		return errFilesClosed
	}
	if err := d.q.failed(); err != nil {
		return err
	}
	q := d.q
	q.pendMu.Lock()
	b := q.pend
	if b == nil {
		select {
		case b = <-q.free:
		default:
			b = &fileBatch{}
		}
		q.pend = b
	}
	b.names = append(b.names, name)
	b.data = append(b.data, data...)
	b.ends = append(b.ends, len(b.data))
	if len(b.names) < batchFiles && len(b.data) < batchBytes && !q.idle {
		b = nil // the writer is busy: more files join the batch
	} else {
		b = q.takePend()
	}
	q.pendMu.Unlock()
	if b != nil {
		q.files <- b
	}
	return nil
}

// takePend takes the files not yet handed to the writer, to be written;
// the caller holds pendMu.
func (q *fileQueue) takePend() *fileBatch {
	b := q.pend
	if b != nil {
		q.pend, q.idle = nil, false
		q.pending.Add(1)
	}
	return b
}

// handOver queues the files not yet handed to the writer. The caller
// holds sendMu, and the queue runs.
func (d *Files) handOver() {
	q := d.q
	q.pendMu.Lock()
	b := q.takePend()
	q.pendMu.Unlock()
	if b != nil {
		q.files <- b
	}
}

// writeOutEvery is how many bytes the writer writes between two early
// write-outs (writeOut); tests lower it.
var writeOutEvery = 128 << 20

// run writes the queued files until the queue is closed. Every
// writeOutEvery bytes it starts the write-out of the folder's file system
// without waiting for it (writeOut), so that the disk writes while the
// run goes on and the commit's syncfs finds little left (a viewer folder
// of 1.2 GB stays dirty in memory otherwise, the write-back thresholds
// being a share of the memory, and took 1.8 s to sync at the commit).
func (q *fileQueue) run(d *Files, files <-chan *fileBatch) {
	written := 0
	for {
		var b *fileBatch
		select {
		case b = <-files:
		default:
			// Nothing queued: the files not yet handed over, else wait.
			q.pendMu.Lock()
			if b = q.takePend(); b == nil {
				q.idle = true
			}
			q.pendMu.Unlock()
			if b == nil {
				b = <-files
			}
		}
		if b == nil {
			return // closed
		}
		start := 0
		for i, name := range b.names {
			if q.failed() != nil {
				break
			}
			data := b.data[start:b.ends[i]]
			start = b.ends[i]
			if err := d.WriteFile(name, data); err != nil {
				q.errMu.Lock()
				q.err = err
				q.errMu.Unlock()
			}
			if written += len(data); written >= writeOutEvery {
				written = 0
				d.writeOut()
			}
		}
		b.names, b.ends, b.data = b.names[:0], b.ends[:0], b.data[:0]
		select {
		case q.free <- b:
		default:
		}
		q.pending.Done()
	}
}

func (q *fileQueue) failed() error {
	q.errMu.Lock()
	defer q.errMu.Unlock()
	return q.err
}

// Wait waits until the files queued by WriteFileLater are written and
// returns the first error of one.
func (d *Files) Wait() error {
	d.sendMu.Lock()
	q := d.q
	if q != nil && q.files != nil {
		d.handOver()
	}
	d.sendMu.Unlock()
	if q == nil {
		return nil
	}
	q.pending.Wait()
	return q.failed()
}

// Close lets the folder go: later writes fail, and so do queued files not
// yet written. Files already created stay.
func (d *Files) Close() error {
	d.sendMu.Lock()
	if d.q != nil && d.q.files != nil {
		d.q.pendMu.Lock()
		d.q.pend = nil // files not handed over are not written
		d.q.pendMu.Unlock()
		close(d.q.files) // the writer ends after the queued files
		d.q.files = nil
	}
	d.sendMu.Unlock()
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	openFiles.Lock()
	delete(openFiles.m, d)
	openFiles.Unlock()
	if d.h.ok() {
		h := d.h
		d.h = dirHandle{}
		return h.close()
	}
	return nil
}
