package wire

import (
	"io"
	"os"
)

// OpenFunc opens an input by its path ("" or "-" for standard input) and
// returns it with the name its errors give it ("<stdin>" for standard
// input), as the tools' cli.Env.Open does.
type OpenFunc func(path string) (io.ReadCloser, string, error)

// Files reads the record streams of named inputs one after another, the
// one input reader of every command that reads them. Each input is opened
// only when its turn comes and closed before the next is opened; one
// Reader (so one read buffer) serves them all. No paths is standard input.
// The same path given twice is read twice: a tool that refuses it checks
// before. The zero Files opens with os.Open and reads os.Stdin for "-".
type Files struct {
	Open     OpenFunc // nil: os.Open, standard input for "" and "-"
	MaxBatch int      // Reader.SetMaxBatch of every input; 0: none

	rd *Reader
}

// A FileFunc takes the records of an input as they come: it is called
// once per header and once per batch, with rd positioned on it (rd.Kind,
// rd.Header, rd.Batch, rd.Part) and the input's name. An error stops the
// reading and is returned as it is.
type FileFunc func(rd *Reader, name string) error

// ReadAll reads every input of paths in order (standard input when there
// are none) and gives their records to fn. It stops at the first error:
// an input that does not open, fn's error, a stream error of the reader
// (which names the input and part), or the error of closing the input.
func (fs *Files) ReadAll(paths []string, fn FileFunc) error {
	if len(paths) == 0 {
		paths = []string{"-"}
	}
	for _, p := range paths {
		if err := fs.Read(p, fn); err != nil {
			return err
		}
	}
	return nil
}

// Read reads the one input path, as ReadAll reads each.
func (fs *Files) Read(path string, fn FileFunc) error {
	open := fs.Open
	if open == nil {
		open = osOpen
	}
	in, name, err := open(path)
	if err != nil {
		return err
	}
	if fs.rd == nil {
		fs.rd = NewReader(in, name)
		if fs.MaxBatch > 0 {
			fs.rd.SetMaxBatch(fs.MaxBatch)
		}
	} else {
		fs.rd.Reset(in, name)
	}
	rd := fs.rd
	for rd.Scan() {
		if err := fn(rd, name); err != nil {
			in.Close()
			return err
		}
	}
	if err := in.Close(); err != nil {
		return err
	}
	return rd.Err()
}

func osOpen(path string) (io.ReadCloser, string, error) {
	if path == "" || path == "-" {
		return io.NopCloser(os.Stdin), "<stdin>", nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, path, err
	}
	return f, path, nil
}
