package cdec

import (
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"github.com/attkit/attkit/internal/pypath"
)

// Library file names.
const (
	libBase  = "librocprof-trace-decoder.so"
	libGlob  = libBase + ".*"
	libDylib = "librocprof-trace-decoder.dylib"
)

// candidateNames are tried in each root directory, most compatible SONAME
// first and the unversioned development link last (python-layer.md §7,
// newest revision).
var candidateNames = []string{libBase + ".0", libBase + ".0.2", libBase + ".0.2.0", libBase}

// loaderNames are handed to the dynamic loader when no root holds the
// library: the unversioned name first (as upstream), then the SONAMEs of the
// V2 and V1 generations.
var loaderNames = []string{libBase, libBase + ".0", libBase + ".0.2", libBase + ".0.1"}

// theRockPackages are the Python package directories of TheRock (ROCm as
// Python wheels) whose lib/ may hold the library.
var theRockPackages = []string{"_rocm_sdk_core", "_rocm_sdk_devel", "_rocm_profiler"}

// attempt is one place the lookup tried.
type attempt struct {
	where string // a file path, or "loader: <name>"
	err   string // why it was not used
}

// plan is the resolved lookup: either an explicit file (path, env or a
// root), or the loader names.
type plan struct {
	file    string    // non-empty: load this path
	origin  string    // how file was chosen ("--lib", EnvLib, "search")
	tried   []attempt // places examined before file, or all of them
	loaders []string  // names to hand to dlopen when file is ""
}

// lookup resolves the library per python-layer.md §7. getenv reads the
// environment; sitePackages lists Python site-packages directories for
// TheRock roots.
func lookup(path string, getenv func(string) string, sitePackages []string) plan {
	if path != "" {
		return plan{file: path, origin: "--lib"}
	}
	if p := getenv(EnvLib); p != "" {
		return plan{file: p, origin: EnvLib}
	}
	var pl plan
	pl.tried = append(pl.tried, attempt{where: EnvLib, err: "not set"})
	for _, root := range searchRoots(getenv, sitePackages) {
		if f, ok := findInRoot(root); ok {
			pl.file, pl.origin = f, "search"
			return pl
		}
		pl.tried = append(pl.tried, attempt{where: root, err: "no " + libBase + "*"})
	}
	pl.loaders = loaderNames
	return pl
}

// searchRoots lists the root directories in order, duplicates removed.
func searchRoots(getenv func(string) string, sitePackages []string) []string {
	var roots []string
	seen := map[string]bool{}
	add := func(d string) {
		if d == "" || seen[d] {
			return
		}
		seen[d] = true
		roots = append(roots, d)
	}
	for _, d := range strings.Split(getenv("LD_LIBRARY_PATH"), ":") {
		if d != "" {
			add(pypath.ExpandUser(d, func() string { return getenv("HOME") }))
		}
	}
	for _, v := range []string{"ROCM_HOME", "ROCM_PATH"} {
		if d := getenv(v); d != "" {
			add(filepath.Join(d, "lib"))
		}
	}
	for _, sp := range sitePackages {
		for _, pkg := range theRockPackages {
			d := filepath.Join(sp, pkg)
			if st, err := os.Stat(d); err == nil && st.IsDir() {
				add(filepath.Join(d, "lib"))
			}
		}
	}
	add("/opt/rocm/lib")
	return roots
}

// findInRoot returns the library file in dir: the first candidate name that
// exists, else the newest versioned file (descending numeric sort of
// librocprof-trace-decoder.so.*) that is a regular file.
func findInRoot(dir string) (string, bool) {
	names := candidateNames
	if runtime.GOOS == "darwin" {
		names = append(names[:len(names):len(names)], libDylib)
	}
	for _, n := range names {
		p := filepath.Join(dir, n)
		if _, err := os.Stat(p); err == nil {
			return p, true
		}
	}
	matches, _ := filepath.Glob(filepath.Join(dir, libGlob))
	sort.SliceStable(matches, func(i, j int) bool { return versionLess(matches[j], matches[i]) })
	for _, m := range matches {
		if st, err := os.Stat(m); err == nil && st.Mode().IsRegular() {
			return m, true
		}
	}
	return "", false
}

// versionLess orders library file names by their version suffix, numerically
// per component (".so.0.9" before ".so.0.10"); non-numeric components compare
// as strings after numeric ones.
func versionLess(a, b string) bool {
	ca := strings.Split(strings.TrimPrefix(filepath.Base(a), libBase), ".")
	cb := strings.Split(strings.TrimPrefix(filepath.Base(b), libBase), ".")
	for i := 0; i < len(ca) && i < len(cb); i++ {
		if ca[i] == cb[i] {
			continue
		}
		na, ea := strconv.ParseUint(ca[i], 10, 64)
		nb, eb := strconv.ParseUint(cb[i], 10, 64)
		switch {
		case ea == nil && eb == nil:
			return na < nb
		case ea == nil:
			return false
		case eb == nil:
			return true
		}
		return ca[i] < cb[i]
	}
	return len(ca) < len(cb)
}

// pythonSitePackages approximates the site-packages directories of the
// active Python without running it: the virtualenv or conda prefix, the
// user site and the system dist-packages.
func pythonSitePackages(getenv func(string) string) []string {
	var prefixes []string
	for _, v := range []string{"VIRTUAL_ENV", "CONDA_PREFIX"} {
		if p := getenv(v); p != "" {
			prefixes = append(prefixes, p)
		}
	}
	if h := getenv("HOME"); h != "" {
		prefixes = append(prefixes, filepath.Join(h, ".local"))
	}
	prefixes = append(prefixes, "/usr/local", "/usr")
	var dirs []string
	for _, p := range prefixes {
		for _, pat := range []string{"lib/python3*/site-packages", "lib/python3*/dist-packages", "lib/python3/dist-packages"} {
			m, _ := filepath.Glob(filepath.Join(p, pat))
			sort.Sort(sort.Reverse(sort.StringSlice(m)))
			dirs = append(dirs, m...)
		}
	}
	return dirs
}

// describe renders the places a failed lookup tried.
func (pl plan) describe(extra []attempt) string {
	var b strings.Builder
	all := append(append([]attempt(nil), pl.tried...), extra...)
	for _, a := range all {
		b.WriteString("\n  ")
		b.WriteString(a.where)
		if a.err != "" {
			b.WriteString(": ")
			b.WriteString(a.err)
		}
	}
	return b.String()
}
