package attkit_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"testing"
)

// depsRules says what each package of the module may import, after the
// dependency table of the Go tree (src/go/build/deps_test.go): a rule
// "a, b < c, d" lets c and d import a and b and everything a and b may
// import. Names are module packages (relative to the module: internal/wire,
// cmd/att-tool), other modules' packages (github.com/...), "C" for cgo and
// UPPER-CASE groups standing for everything on their left (NONE: nothing).
// A name is placed once, on the right of one rule, before it is used on the
// left of another. The standard
// library is allowed everywhere except for "C" and "unsafe". A package of
// the module that the table does not name fails the test: place it.
// depsOnly below then narrows some imports to the one package that owns
// them, closing them to the packages above it.
const depsRules = `
# The leaves: the standard library only.
NONE
  < internal/exitcode, internal/pyjson, internal/pypath, internal/tracename,
    internal/version, internal/testutil, scripts/internal/measure, scripts/release,
    internal/wire/internal/gen;
internal/exitcode, internal/pyjson, internal/pypath, internal/tracename,
internal/version
  < LEAF;

# The wire format: the one contract between tools.
LEAF, github.com/vmihailenco/msgpack/v5 < internal/wire;

# Outputs, work files and signals.
LEAF, golang.org/x/sys/unix < internal/publish;

# What reads and writes records.
internal/wire
  < internal/isa, internal/fold, internal/waveselect,
    internal/arch/archtest, internal/codeobj, internal/snapshot;
internal/wire, internal/publish < internal/hidden;
internal/isa < internal/backend, internal/sqttgen;
internal/backend < internal/sqtt;
internal/backend, internal/pypath, C, unsafe < internal/cdec;
internal/codeobj < internal/arch;
internal/codeobj, internal/publish < internal/capture;
internal/arch, internal/sqtt, internal/cdec < internal/driver;
internal/fold, internal/hidden < internal/rollup;
internal/rollup, internal/waveselect < internal/report;
internal/wire, github.com/itchyny/gojq < internal/jq;

# Outputs and the command line.
internal/publish, internal/wire < internal/rcv;
internal/publish, internal/wire, github.com/alecthomas/kong < internal/cli;

# The commands are the top: nothing imports them.
internal/cli, internal/jq, internal/driver, internal/capture, internal/rcv,
internal/report, internal/snapshot
  < TOOLS;
TOOLS
  < cmd/co-index, cmd/att-decode, cmd/att-info, cmd/att-name, cmd/att-rcv,
    cmd/att-report, cmd/att-timeline, cmd/att-tool;
TOOLS, github.com/google/pprof/profile < cmd/att-stats;

# Scripts: benchmarks and generators, beside the tools.
TOOLS, internal/sqttgen, internal/testutil, scripts/internal/measure
  < scripts/bench-batch, scripts/bench-cdec/count, scripts/bench-cdec/gen, scripts/bench-cdec/threads,
    scripts/bench-cores,
    scripts/bench-decode, scripts/bench-fs, scripts/bench-pipeline, scripts/bench-rcv,
    scripts/difffuzz, scripts/gentrace, scripts/soak-kill;
`

// depsOnly names imports that only the listed packages may import
// directly, whatever the rules let the packages above them reach: kong
// stays behind internal/cli, gojq behind internal/jq, cgo in internal/cdec.
var depsOnly = map[string][]string{
	"github.com/alecthomas/kong":        {"internal/cli"},
	"github.com/itchyny/gojq":           {"internal/jq"},
	"github.com/vmihailenco/msgpack/v5": {"internal/wire"},
	"github.com/google/pprof/profile":   {"cmd/att-stats"},
	"C":                                 {"internal/cdec"},
	"unsafe":                            {"internal/cdec"},
}

// parseDepsRules returns, for each name on the right of a rule, every name
// it may import (the closure of the rules' left sides).
func parseDepsRules(rules string) (map[string]map[string]bool, error) {
	direct := map[string][]string{}
	var order []string
	var lines []string
	for _, l := range strings.Split(rules, "\n") {
		if i := strings.Index(l, "#"); i >= 0 {
			l = l[:i]
		}
		lines = append(lines, l)
	}
	for _, stmt := range strings.Split(strings.Join(lines, " "), ";") {
		if strings.TrimSpace(stmt) == "" {
			continue
		}
		parts := strings.Split(stmt, "<")
		if len(parts) != 2 {
			return nil, fmt.Errorf("rule %q: want \"a, b < c, d\"", strings.Join(strings.Fields(stmt), " "))
		}
		split := func(s string) []string {
			var names []string
			for _, n := range strings.Split(s, ",") {
				if n = strings.TrimSpace(n); n != "" {
					names = append(names, n)
				}
			}
			return names
		}
		lo, hi := split(parts[0]), split(parts[1])
		if slices.Equal(lo, []string{"NONE"}) {
			lo = nil
		}
		for _, h := range hi {
			if _, ok := direct[h]; ok {
				return nil, fmt.Errorf("%s is on the right of two rules", h)
			}
			direct[h] = lo
			order = append(order, h)
		}
		for _, l := range lo {
			if _, ok := direct[l]; !ok && isModuleName(l) {
				return nil, fmt.Errorf("%s is used before its rule (a rule's left names what is already placed)", l)
			}
		}
	}
	allowed := map[string]map[string]bool{}
	for _, h := range order { // a name's left side is placed before it
		set := map[string]bool{}
		for _, l := range direct[h] {
			set[l] = true
			for a := range allowed[l] {
				set[a] = true
			}
		}
		allowed[h] = set
	}
	return allowed, nil
}

// isModuleName reports whether a rule's name is a package of this module
// or a group, rather than another module's package or "C"/"unsafe".
func isModuleName(n string) bool {
	return n != "C" && n != "unsafe" && !strings.Contains(n, ".")
}

// checkDeps returns one line per import the rules forbid in graph (module
// packages, relative to the module, to their imports: module ones relative
// too, "C" for cgo), and per module package the rules do not place.
func checkDeps(rules string, only map[string][]string, graph map[string][]string) ([]string, error) {
	allowed, err := parseDepsRules(rules)
	if err != nil {
		return nil, err
	}
	var bad []string
	for pkg, imports := range graph {
		ok, placed := allowed[pkg]
		if !placed {
			bad = append(bad, fmt.Sprintf("%s: not in depsRules (place it in the table)", pkg))
			continue
		}
		for _, imp := range imports {
			if owners, narrowed := only[imp]; narrowed && !slices.Contains(owners, pkg) {
				bad = append(bad, fmt.Sprintf("%s imports %s: only %s may", pkg, imp, strings.Join(owners, ", ")))
				continue
			}
			std := !strings.Contains(imp, ".") && !strings.HasPrefix(imp, "internal/") &&
				!strings.HasPrefix(imp, "cmd/") && !strings.HasPrefix(imp, "scripts/") && imp != "C" && imp != "unsafe"
			if !std && !ok[imp] {
				bad = append(bad, fmt.Sprintf("%s imports %s: not allowed by depsRules", pkg, imp))
			}
		}
	}
	sort.Strings(bad)
	return bad, nil
}

// moduleGraph lists the module's packages and their imports with
// go list -deps -json, for the given environment (GOOS, CGO_ENABLED).
func moduleGraph(t *testing.T, env ...string) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-json", "./...")
	cmd.Env = append(cmd.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps -json ./... %v: %v", env, err)
	}
	const mod = "github.com/attkit/attkit"
	rel := func(p string) string { return strings.TrimPrefix(p, mod+"/") }
	graph := map[string][]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			ImportPath string
			Standard   bool
			Module     *struct{ Path string }
			GoFiles    []string
			CgoFiles   []string
			Imports    []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		if p.Standard || p.Module == nil || p.Module.Path != mod || len(p.GoFiles)+len(p.CgoFiles) == 0 {
			continue
		}
		var imports []string
		for _, imp := range p.Imports {
			imports = append(imports, rel(imp))
		}
		if len(p.CgoFiles) > 0 && !slices.Contains(imports, "C") {
			imports = append(imports, "C")
		}
		graph[rel(p.ImportPath)] = imports
	}
	if len(graph) < 20 {
		t.Fatalf("go list found %d packages of the module, want them all: %v", len(graph), graph)
	}
	return graph
}

// TestDependencies checks every package of the module against depsRules
// and depsOnly, with cgo (cdec's cgo files) and for the other systems the
// tools are released for.
func TestDependencies(t *testing.T) {
	for _, env := range [][]string{
		{"CGO_ENABLED=1"},
		{"CGO_ENABLED=0", "GOOS=darwin"},
		{"CGO_ENABLED=0", "GOOS=windows"},
	} {
		bad, err := checkDeps(depsRules, depsOnly, moduleGraph(t, env...))
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range bad {
			t.Errorf("%v: %s", env, b)
		}
	}
}

// TestDependenciesCatch runs the same check over a made-up import graph
// breaking each kind of rule, so that TestDependencies cannot pass by
// checking nothing.
func TestDependenciesCatch(t *testing.T) {
	graph := map[string][]string{
		"internal/exitcode": {"errors", "fmt"},
		"internal/wire":     {"internal/exitcode", "internal/cli", "github.com/vmihailenco/msgpack/v5"},
		"internal/sqtt":     {"internal/backend", "github.com/itchyny/gojq"},
		"internal/backend":  {"internal/isa", "C"},
		"internal/isa":      {"internal/wire"},
		"internal/cdec":     {"C", "unsafe", "internal/backend"},
		"internal/codeobj":  {"github.com/alecthomas/kong"},
		"internal/jq":       {"cmd/att-stats", "github.com/itchyny/gojq"},
		"cmd/att-stats":     {"internal/cli", "github.com/google/pprof/profile"},
		"cmd/att-name":      {"github.com/google/pprof/profile", "internal/testutil"},
		"internal/new":      {"internal/wire"},
	}
	bad, err := checkDeps(depsRules, depsOnly, graph)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"cmd/att-name imports github.com/google/pprof/profile: only cmd/att-stats may",
		"cmd/att-name imports internal/testutil: not allowed by depsRules",
		"internal/backend imports C: only internal/cdec may",
		"internal/codeobj imports github.com/alecthomas/kong: only internal/cli may",
		"internal/jq imports cmd/att-stats: not allowed by depsRules",
		"internal/new: not in depsRules (place it in the table)",
		"internal/sqtt imports github.com/itchyny/gojq: only internal/jq may",
		"internal/wire imports internal/cli: not allowed by depsRules",
	}
	if !slices.Equal(bad, want) {
		t.Errorf("violations:\n%s\nwant:\n%s", strings.Join(bad, "\n"), strings.Join(want, "\n"))
	}
	for _, rules := range []string{"a < b < c;", "internal/x < internal/y; internal/z < internal/y;", "internal/later < internal/x; internal/wire < internal/later;"} {
		if _, err := parseDepsRules(rules); err == nil {
			t.Errorf("rules %q: no error", rules)
		}
	}
}
