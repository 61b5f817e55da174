package cli

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/attkit/attkit/internal/exitcode"
)

type testFlags struct {
	VersionFlag
	Count int      `help:"A number."`
	Files []string `arg:"" optional:"" help:"Files."`
}

func env() (*Env, *bytes.Buffer, *bytes.Buffer) {
	var out, errb bytes.Buffer
	return &Env{Name: "att-x", Stdin: strings.NewReader("in"), Stdout: &out, Stderr: &errb}, &out, &errb
}

func TestParse(t *testing.T) {
	e, _, _ := env()
	var f testFlags
	if code, done := e.Parse(&f, "desc", []string{"--count", "3", "a", "b"}); done || code != 0 || f.Count != 3 || len(f.Files) != 2 {
		t.Errorf("parse: %d %v %+v", code, done, f)
	}
	e, out, _ := env()
	if code, done := e.Parse(&testFlags{}, "desc", []string{"--help"}); !done || code != 0 || !strings.Contains(out.String(), "Usage: att-x") {
		t.Errorf("help: %d %v %q", code, done, out)
	}
	e, out, _ = env()
	if code, done := e.Parse(&testFlags{}, "desc", []string{"--version"}); !done || code != 0 || !strings.HasPrefix(out.String(), "att-x ") {
		t.Errorf("version: %d %v %q", code, done, out)
	}
	e, _, errb := env()
	if code, done := e.Parse(&testFlags{}, "desc", []string{"--count", "x"}); !done || code != exitcode.Usage ||
		!strings.HasPrefix(errb.String(), "att-x: ") || !strings.Contains(errb.String(), "--help") {
		t.Errorf("usage error: %d %v %q", code, done, errb)
	}
}

func TestFail(t *testing.T) {
	e, _, errb := env()
	if e.Fail(nil) != 0 || errb.Len() != 0 {
		t.Error("nil error printed something")
	}
	if code := e.Fail(exitcode.Errorf(exitcode.Format, "not ours")); code != 3 || errb.String() != "att-x: not ours\n" {
		t.Errorf("coded: %d %q", code, errb)
	}
	errb.Reset()
	if code := e.Fail(errors.New("plain")); code != 1 || errb.String() != "att-x: plain\n" {
		t.Errorf("plain: %d %q", code, errb)
	}
	errb.Reset()
	if code := e.Fail(exitcode.Silent{Code: 4}); code != 4 || errb.Len() != 0 {
		t.Errorf("silent: %d %q", code, errb)
	}
	e.Warnf("%s: %s", "t.att", "Data Lost")
	if errb.String() != "att-x: warning: t.att: Data Lost\n" {
		t.Errorf("warn: %q", errb)
	}
}

func TestOpen(t *testing.T) {
	e, _, _ := env()
	r, name, err := e.Open("-")
	if err != nil || name != "<stdin>" {
		t.Fatal(err, name)
	}
	b, _ := io.ReadAll(r)
	if string(b) != "in" {
		t.Errorf("stdin: %q", b)
	}
	if _, _, err := e.Open(filepath.Join(t.TempDir(), "none")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.json")
	if err := WriteFileAtomic(p, func(w io.Writer) error { _, err := w.Write([]byte("ok")); return err }); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "ok" {
		t.Errorf("content %q", b)
	}
	boom := errors.New("disk full")
	err := WriteFileAtomic(filepath.Join(dir, "bad.json"), func(w io.Writer) error { w.Write([]byte("part")); return boom })
	if !errors.Is(err, boom) {
		t.Errorf("err %v", err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("left behind: %v", ents)
	}
	// A symbolic link stays a link; its target gets the bytes.
	target := filepath.Join(dir, "target.json")
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink("target.json", link); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(link, func(w io.Writer) error { _, err := w.Write([]byte("via link")); return err }); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v %v", st, err)
	}
	if b, _ := os.ReadFile(target); string(b) != "via link" {
		t.Errorf("target content %q", b)
	}
	if ProgressWanted(false, &bytes.Buffer{}) || !ProgressWanted(true, &bytes.Buffer{}) {
		t.Error("ProgressWanted")
	}
}

// TestWriteFileAtomicDevice checks that a path that is not a regular file
// is written, never renamed over (as root, "-o /dev/null" once replaced the
// device with a file).
func TestWriteFileAtomicDevice(t *testing.T) {
	if err := WriteFileAtomic(os.DevNull, func(w io.Writer) error { _, err := w.Write([]byte("gone")); return err }); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(os.DevNull); err != nil || st.Mode()&os.ModeCharDevice == 0 {
		t.Fatalf("%s is no longer a device: %v %v", os.DevNull, st, err)
	}
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	got := make(chan string, 1)
	go func() {
		b, _ := os.ReadFile(fifo)
		got <- string(b)
	}()
	if err := WriteFileAtomic(fifo, func(w io.Writer) error { _, err := w.Write([]byte("through the pipe")); return err }); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "through the pipe" {
		t.Errorf("read %q from the FIFO", s)
	}
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v %v", st, err)
	}
	boom := errors.New("boom")
	go func() { os.ReadFile(fifo) }()
	if err := WriteFileAtomic(fifo, func(w io.Writer) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("error: %v", err)
	}
}

func TestDistinct(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.rec"), filepath.Join(dir, "b.rec")
	for _, p := range []string{a, b} {
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(dir, "link.rec")
	if err := os.Symlink(a, link); err != nil {
		t.Fatal(err)
	}
	hard := filepath.Join(dir, "hard.rec")
	if err := os.Link(b, hard); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		paths []string
		msg   string
	}{
		{[]string{a, b, "-"}, ""},
		{[]string{a, filepath.Join(dir, "gone.rec"), filepath.Join(dir, "gone.rec")}, ""}, // left to the caller
		{[]string{a, b, a}, a + " given twice: give each input once"},
		{[]string{a, link}, a + " and " + link + " are the same file: give each input once"},
		{[]string{b, dir + "/./b.rec"}, b + " and " + dir + "/./b.rec are the same file"},
		{[]string{hard, b}, hard + " and " + b + " are the same file"},
		{[]string{"-", a, "-"}, "standard input (-) given twice"},
	} {
		err := Distinct(c.paths)
		if c.msg == "" {
			if err != nil {
				t.Errorf("%q: %v", c.paths, err)
			}
			continue
		}
		if err == nil || !strings.HasPrefix(err.Error(), c.msg) || exitcode.Of(err) != exitcode.Usage {
			t.Errorf("%q: %v (exit %d), want %q, exit 2", c.paths, err, exitcode.Of(err), c.msg)
		}
	}
}
