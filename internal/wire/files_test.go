package wire

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// closeErr is an input whose Close fails.
type closeErr struct{ io.Reader }

func (closeErr) Close() error { return errors.New("close failed") }

// TestFiles reads a file, standard input and the file again through one
// Files: every header and batch in order with its input's name, batches
// cut at MaxBatch, "-" named <stdin>, and the errors of opening, of the
// stream (naming the input) and of closing returned.
func TestFiles(t *testing.T) {
	stream := func(run int, n int) []byte {
		var buf bytes.Buffer
		info := make([]Info, n)
		if err := WriteStream(&buf, &Header{Trace: Trace{Run: run}}, Batch{Type: TypeInfo, Info: info}); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "a.rec")
	if err := os.WriteFile(path, stream(1, 5), 0o644); err != nil {
		t.Fatal(err)
	}
	stdin := stream(2, 3)
	opens := 0
	open := func(p string) (io.ReadCloser, string, error) {
		opens++
		if p == "-" {
			return io.NopCloser(bytes.NewReader(stdin)), "<stdin>", nil
		}
		f, err := os.Open(p)
		return f, p, err
	}
	fs := Files{Open: open, MaxBatch: 2}
	var got []string
	err := fs.ReadAll([]string{path, "-", path}, func(rd *Reader, name string) error {
		if opens == 0 {
			t.Fatal("read before open")
		}
		switch rd.Kind() {
		case KindHeader:
			got = append(got, fmt.Sprintf("%s:h%d", filepath.Base(name), rd.Header().Trace.Run))
		case KindBatch:
			got = append(got, fmt.Sprintf("%d", len(rd.Batch().Info)))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "a.rec:h1 2 2 1 <stdin>:h2 2 1 a.rec:h1 2 2 1"
	if s := strings.Join(got, " "); s != want || opens != 3 {
		t.Fatalf("read %q with %d opens, want %q with 3", s, opens, want)
	}

	// No paths is standard input.
	got, opens = nil, 0
	if err := fs.ReadAll(nil, func(rd *Reader, name string) error {
		if rd.Kind() == KindHeader {
			got = append(got, name)
		}
		return nil
	}); err != nil || strings.Join(got, " ") != "<stdin>" {
		t.Fatalf("no paths: %v, %v", got, err)
	}

	// The first error stops: fn's, as it is; the next input is not opened.
	stop := errors.New("stop")
	opens = 0
	if err := fs.ReadAll([]string{path, path}, func(*Reader, string) error { return stop }); err != stop || opens != 1 {
		t.Fatalf("fn error: %v after %d opens", err, opens)
	}
	// An input that does not open.
	missing := filepath.Join(dir, "missing.rec")
	if err := fs.ReadAll([]string{missing}, func(*Reader, string) error { return nil }); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing input: %v", err)
	}
	// A stream error names the input.
	bad := filepath.Join(dir, "bad.rec")
	if err := os.WriteFile(bad, stream(1, 5)[:9], 0o644); err != nil {
		t.Fatal(err)
	}
	if err := fs.ReadAll([]string{path, bad}, func(*Reader, string) error { return nil }); err == nil || !strings.Contains(err.Error(), bad) {
		t.Fatalf("cut stream: %v, want an error naming %s", err, bad)
	}
	// The error of closing an input.
	fs.Open = func(string) (io.ReadCloser, string, error) { return closeErr{bytes.NewReader(stdin)}, "x", nil }
	if err := fs.ReadAll([]string{"x"}, func(*Reader, string) error { return nil }); err == nil || err.Error() != "close failed" {
		t.Fatalf("close error: %v", err)
	}
}
