package testutil

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// RealCapture is one capture of the real-hardware corpus (../shared/real
// beside the repository): raw traces recorded on a GPU, the code.json of
// its kernel at absolute addresses, and what AMD's 0.1.6 library decoded
// from each trace.
type RealCapture struct {
	Name        string // folder name, e.g. gfx1100_gemm_0
	Dir         string
	Arch        string // e.g. gfx1100
	CodeJSON    string // path of code.json
	CodeObjects []RealCodeObject
	Traces      []RealTrace
}

// RealCodeObject is a kernel's load address and name from capture.json.
type RealCodeObject struct {
	LoadAddress string `json:"load_address"`
	Kernel      string `json:"kernel"`
}

// RealTrace is one shader engine's trace of a capture.
type RealTrace struct {
	File             string `json:"file"` // path of the .att file
	ShaderEngine     int    `json:"shader_engine"`
	InstructionTrace bool   `json:"instruction_trace"`
	Expected         string `json:"-"` // path of AMD's 0.1.6 records (JSON lines)
}

// RealDir is where the real-hardware corpus lives: ../shared/real from the
// module root. It returns "" when the folder is absent.
func RealDir() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
	real := filepath.Join(filepath.Dir(dir), "shared", "real")
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return ""
	}
	return real
}

// RealCorpus lists the captures of the real-hardware corpus, sorted by
// name. It skips the test, naming the folder, when the corpus is absent,
// and fails it when a capture is malformed.
func RealCorpus(t testing.TB) []RealCapture {
	t.Helper()
	dir := RealDir()
	if dir == "" {
		t.Skip("the real-hardware corpus ../shared/real (beside the repository) is absent")
	}
	caps, err := ReadCaptures(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(caps) == 0 {
		t.Fatalf("%s holds no captures", dir)
	}
	return caps
}

// ReadCaptures reads the capture folders of dir (those holding a
// capture.json), sorted by name, each with its traces sorted by shader
// engine. The tests read the corpus through RealCorpus, scripts/difffuzz
// through this.
func ReadCaptures(dir string) ([]RealCapture, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var caps []RealCapture
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		c := RealCapture{Name: e.Name(), Dir: filepath.Join(dir, e.Name())}
		raw, err := os.ReadFile(filepath.Join(c.Dir, "capture.json"))
		if errors.Is(err, fs.ErrNotExist) {
			continue // not a capture
		}
		if err != nil {
			return nil, err
		}
		var meta struct {
			Arch        string           `json:"arch"`
			CodeObjects []RealCodeObject `json:"code_objects"`
			Traces      []RealTrace      `json:"traces"`
			Index       string           `json:"index"`
		}
		if err := json.Unmarshal(raw, &meta); err != nil {
			return nil, fmt.Errorf("%s/capture.json: %w", c.Name, err)
		}
		if meta.Index == "" {
			meta.Index = "code.json"
		}
		c.Arch, c.CodeObjects = meta.Arch, meta.CodeObjects
		c.CodeJSON = filepath.Join(c.Dir, meta.Index)
		for _, tr := range meta.Traces {
			base := tr.File[:len(tr.File)-len(filepath.Ext(tr.File))]
			tr.Expected = filepath.Join(c.Dir, "expected-0.1.6", base+".jsonl")
			tr.File = filepath.Join(c.Dir, tr.File)
			c.Traces = append(c.Traces, tr)
		}
		sort.Slice(c.Traces, func(i, j int) bool { return c.Traces[i].ShaderEngine < c.Traces[j].ShaderEngine })
		caps = append(caps, c)
	}
	return caps, nil
}
