package cli

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	if code, done := e.Parse(&testFlags{}, "desc", []string{"--count", "x"}); !done || code != ExitUsage ||
		!strings.HasPrefix(errb.String(), "att-x: ") || !strings.Contains(errb.String(), "--help") {
		t.Errorf("usage error: %d %v %q", code, done, errb)
	}
}

func TestFail(t *testing.T) {
	e, _, errb := env()
	if e.Fail(nil) != 0 || errb.Len() != 0 {
		t.Error("nil error printed something")
	}
	if code := e.Fail(Errorf(ExitFormat, "not ours")); code != 3 || errb.String() != "att-x: not ours\n" {
		t.Errorf("coded: %d %q", code, errb)
	}
	errb.Reset()
	if code := e.Fail(errors.New("plain")); code != 1 || errb.String() != "att-x: plain\n" {
		t.Errorf("plain: %d %q", code, errb)
	}
	errb.Reset()
	if code := e.Fail(Silent{Code: 4}); code != 4 || errb.Len() != 0 {
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
	if ProgressWanted(false, &bytes.Buffer{}) || !ProgressWanted(true, &bytes.Buffer{}) {
		t.Error("ProgressWanted")
	}
}
