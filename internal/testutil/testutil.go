// Package testutil holds what several packages' tests share: golden files
// under testdata/ for outputs, standard error and whole output trees (one
// -update flag rewrites them: `go test -update`) and the process's CPU
// time for benchmarks. Tests import it, and so does scripts/difffuzz (its
// corpus); no tool does (deps_test.go keeps it out of cmd/ and internal/).
package testutil

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

// Update reports whether the test run was asked to rewrite golden files.
func Update() bool { return *update }

// Golden compares got with testdata/name. With -update it writes got there
// instead. A difference writes got next to the golden file as name.got.
func Golden(t testing.TB, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		os.WriteFile(path+".got", got, 0o644)
		t.Errorf("%s differs from the golden file (%s); got written to %s.got", path, FirstDiff(got, want), path)
	}
}

// GoldenOutput compares a command's standard output with testdata/name and
// its standard error with testdata/name.stderr, as Golden does.
func GoldenOutput(t testing.TB, name string, stdout, stderr []byte) {
	t.Helper()
	Golden(t, name, stdout)
	Golden(t, name+".stderr", stderr)
}

// GoldenDir compares the files under dir (names and bytes) with the tree
// testdata/name. With -update it replaces that tree with a copy of dir.
// oldnew are strings.NewReplacer pairs applied to every file first (an
// absolute path of the checkout as "$ROOT", for example).
func GoldenDir(t testing.TB, name, dir string, oldnew ...string) {
	t.Helper()
	repl := strings.NewReplacer(oldnew...)
	want := filepath.Join("testdata", name)
	if *update {
		if err := os.RemoveAll(want); err != nil {
			t.Fatal(err)
		}
		for _, f := range listTree(t, dir) {
			data, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil {
				t.Fatal(err)
			}
			Golden(t, filepath.Join(name, f), []byte(repl.Replace(string(data))))
		}
		return
	}
	gotFiles, wantFiles := listTree(t, dir), listTree(t, want)
	if strings.Join(gotFiles, "\n") != strings.Join(wantFiles, "\n") {
		t.Fatalf("files differ from %s (run go test -update to accept):\ngot  %q\nwant %q", want, gotFiles, wantFiles)
	}
	for _, f := range gotFiles {
		g, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		g = []byte(repl.Replace(string(g)))
		w, _ := os.ReadFile(filepath.Join(want, f))
		if !bytes.Equal(g, w) {
			t.Errorf("%s differs from %s (run go test -update to accept): %s", f, want, FirstDiff(g, w))
		}
	}
}

// listTree returns the relative paths of the regular files under dir,
// sorted.
func listTree(t testing.TB, dir string) []string {
	t.Helper()
	var names []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		// The mark of a published folder (publish.ManifestName) names
		// the run: no two are alike.
		if !d.IsDir() && d.Name() != ".attkit-output" {
			rel, err := filepath.Rel(dir, p)
			if err != nil {
				return err
			}
			names = append(names, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(names)
	return names
}

// FirstDiff names the first line where got and want differ.
func FirstDiff(got, want []byte) string {
	gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(gl) || i < len(wl); i++ {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			return fmt.Sprintf("line %d:\n got  %s\n want %s", i+1, g, w)
		}
	}
	return "same lines"
}

// CPUTime is the CPU time (user and system) the process has used so far; 0
// when the system cannot tell.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
