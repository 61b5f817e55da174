package codeobj

import (
	"bufio"
	"bytes"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/attkit/attkit/internal/pypath"
	"github.com/attkit/attkit/internal/wire"
)

// dwarfdumpLines is the line table as llvm-dwarfdump-19 --debug-line prints
// it: the rows and each unit's directory and file tables.
type dwarfdumpRow struct {
	addr   uint64
	line   int
	file   string // resolved by the test from dwarfdump's tables
	endSeq bool
}

var (
	ddDirRE  = regexp.MustCompile(`^include_directories\[\s*(\d+)\] = "(.*)"$`)
	ddFileRE = regexp.MustCompile(`^file_names\[\s*(\d+)\]:$`)
	ddNameRE = regexp.MustCompile(`^\s+name: "(.*)"$`)
	ddDirIRE = regexp.MustCompile(`^\s+dir_index: (\d+)$`)
	ddRowRE  = regexp.MustCompile(`^0x([0-9a-f]{16})\s+(\d+)\s+\d+\s+(\d+)\s+\d+\s+\d+\s+\d+\s*(.*)$`)
)

func readDwarfdumpLines(t *testing.T, tool, path string) []dwarfdumpRow {
	out := runTool(t, tool, "--debug-line", path)
	var rows []dwarfdumpRow
	dirs := map[int]string{}
	files := map[int]string{}
	cur := -1
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "debug_line[") {
			dirs, files, cur = map[int]string{}, map[int]string{}, -1
		}
		if m := ddDirRE.FindStringSubmatch(line); m != nil {
			n, _ := strconv.Atoi(m[1])
			dirs[n] = m[2]
		} else if m := ddFileRE.FindStringSubmatch(line); m != nil {
			cur, _ = strconv.Atoi(m[1])
		} else if m := ddNameRE.FindStringSubmatch(line); m != nil && cur >= 0 {
			files[cur] = m[1]
		} else if m := ddDirIRE.FindStringSubmatch(line); m != nil && cur >= 0 {
			// DWARF 5 (the committed objects): the index is direct.
			d, _ := strconv.Atoi(m[1])
			files[cur] = pypath.Normpath(joinPath(dirs[d], files[cur]))
		} else if m := ddRowRE.FindStringSubmatch(line); m != nil {
			a, _ := strconv.ParseUint(m[1], 16, 64)
			l, _ := strconv.Atoi(m[2])
			f, _ := strconv.Atoi(m[3])
			rows = append(rows, dwarfdumpRow{addr: a, line: l, file: files[f], endSeq: strings.Contains(m[4], "end_sequence")})
		}
	}
	if len(rows) == 0 {
		t.Fatalf("%s: no line rows in llvm-dwarfdump output", path)
	}
	return rows
}

// TestSourceLinesMatchDwarfdump checks the file:line of every instruction
// of the objects with DWARF against the line table llvm-dwarfdump-19 (-22
// for gfx950) prints: the row range [row, next row) containing the address.
func TestSourceLinesMatchDwarfdump(t *testing.T) {
	for _, path := range committedObjects(t) {
		if strings.Contains(path, "nodebug") {
			continue
		}
		t.Run(filepath.Base(filepath.Dir(path))+"/"+filepath.Base(path), func(t *testing.T) {
			t.Parallel()
			tool := toolFor(t, "llvm-dwarfdump", path)
			ix := buildOne(t, path, 1)
			dd := readDwarfdumpLines(t, tool, path)
			checked, withSource := 0, 0
			for i := range ix.Rows {
				r := &ix.Rows[i]
				if r.Kind != wire.RowInstruction {
					continue
				}
				want := ""
				for j := 0; j+1 < len(dd); j++ {
					a, b := dd[j], dd[j+1]
					if !a.endSeq && a.addr <= r.Vaddr && r.Vaddr < b.addr {
						want = a.file + ":" + strconv.Itoa(a.line)
						if a.line == 0 {
							want = a.file + ":?"
						}
					}
				}
				got, _, _ := strings.Cut(r.Source, " -> ")
				if got != want {
					t.Errorf("%#x %q: source %q, dwarfdump %q", r.Vaddr, r.Text, got, want)
				}
				checked++
				if want != "" {
					withSource++
				}
			}
			if withSource < checked/4 || withSource == 0 {
				t.Errorf("only %d of %d instructions have a source line", withSource, checked)
			}
		})
	}
}

// TestInlineChainsMatchSymbolizer checks whole source texts, inline chains
// included, against llvm-symbolizer-19 (-22 for gfx950) --inlining: the innermost frame's
// file:line, then each caller's file:line (the call site). As §3.5 says,
// the chain is the one at the start of the line-table range holding the
// instruction, so the symbolizer is asked about that address (from
// llvm-dwarfdump-19).
func TestInlineChainsMatchSymbolizer(t *testing.T) {
	for _, path := range committedObjects(t) {
		if strings.Contains(path, "kernels_") {
			t.Run(filepath.Base(filepath.Dir(path)), func(t *testing.T) {
				t.Parallel()
				checkSymbolizer(t, toolFor(t, "llvm-symbolizer", path), path)
			})
		}
	}
}

func checkSymbolizer(t *testing.T, tool, path string) {
	ix := buildOne(t, path, 1)
	dd := readDwarfdumpLines(t, toolFor(t, "llvm-dwarfdump", path), path)
	var addrs []string
	var rows []*wire.Row
	for i := range ix.Rows {
		r := &ix.Rows[i]
		if r.Kind != wire.RowInstruction || r.Source == "" {
			continue
		}
		start := uint64(0)
		for j := 0; j+1 < len(dd); j++ {
			if !dd[j].endSeq && dd[j].addr <= r.Vaddr && r.Vaddr < dd[j+1].addr {
				start = dd[j].addr
			}
		}
		addrs = append(addrs, fmt.Sprintf("%#x", start))
		rows = append(rows, r)
	}
	out := runTool(t, tool, append([]string{"--obj=" + path, "--inlining"}, addrs...)...)
	blocks := strings.Split(strings.TrimSpace(string(out)), "\n\n")
	if len(blocks) != len(rows) {
		t.Fatalf("llvm-symbolizer printed %d blocks for %d addresses", len(blocks), len(rows))
	}
	inlined := 0
	for i, b := range blocks {
		lines := strings.Split(b, "\n")
		var frames []string
		for j := 1; j < len(lines); j += 2 {
			loc := lines[j]
			// file:line:col
			k := strings.LastIndexByte(loc, ':')
			loc = loc[:k]
			k = strings.LastIndexByte(loc, ':')
			file, line := pypath.Normpath(loc[:k]), loc[k+1:]
			if line == "0" {
				line = "?"
			}
			frames = append(frames, file+":"+line)
		}
		want := strings.Join(frames, " -> ")
		if len(frames) > 1 {
			inlined++
		}
		if rows[i].Source != want {
			t.Errorf("%#x %q: source %q, llvm-symbolizer %q", rows[i].Vaddr, rows[i].Text, rows[i].Source, want)
		}
	}
	if inlined < 10 {
		t.Errorf("only %d instructions inside inlined helpers", inlined)
	}
}

func TestLineTableLookup(t *testing.T) {
	lt := &LineTable{ranges: []lineRange{{0x10, 0x20, "a:1", nil}, {0x20, 0x24, "a:2", nil}, {0x20, 0x28, "b:3", []wire.InlineFrame{{Function: "f", File: "b", Line: 3}}}, {0x30, 0x34, "c:?", nil}}}
	sort.SliceStable(lt.ranges, func(i, j int) bool { return lt.ranges[i].begin < lt.ranges[j].begin })
	for _, c := range []struct {
		a    uint64
		want string
	}{{0x0f, ""}, {0x10, "a:1"}, {0x1c, "a:1"}, {0x20, "b:3"}, {0x26, "b:3"}, {0x28, ""}, {0x33, "c:?"}, {0x34, ""}} {
		if got := lt.Lookup(c.a); got != c.want {
			t.Errorf("Lookup(%#x) = %q, want %q", c.a, got, c.want)
		}
		if fr := lt.LookupInline(c.a); (len(fr) == 1 && fr[0].Function == "f") != (c.want == "b:3") {
			t.Errorf("LookupInline(%#x) = %v", c.a, fr)
		}
	}
	var nilTable *LineTable
	if nilTable.Lookup(1) != "" || nilTable.Len() != 0 || nilTable.LookupInline(1) != nil {
		t.Error("nil table not empty")
	}
}

func TestNormPath(t *testing.T) {
	for in, want := range map[string]string{
		"":                 ".",
		".":                ".",
		"./a/b":            "a/b",
		"a//b/./c/..":      "a/b",
		"/a/../../b":       "/b",
		"../a/../../b":     "../../b",
		"//net/x":          "//net/x",
		"///x//y/":         "/x/y",
		"testdata/./k.cl":  "testdata/k.cl",
		"/src/inc/../k.cl": "/src/k.cl",
	} {
		if got := pypath.Normpath(in); got != want {
			t.Errorf("pypath.Normpath(%q) = %q, want %q", in, got, want)
		}
	}
	for _, c := range [][3]string{{"/src", "k.cl", "/src/k.cl"}, {"/src/", "k.cl", "/src/k.cl"}, {"/src", "/abs/k.cl", "/abs/k.cl"}, {"", "k.cl", "k.cl"}, {"inc", "x.h", "inc/x.h"}} {
		if got := joinPath(c[0], c[1]); got != c[2] {
			t.Errorf("joinPath(%q, %q) = %q, want %q", c[0], c[1], got, c[2])
		}
	}
}

// TestFileResolution pins the file rules of §3.5 where they differ from
// debug/dwarf's joined paths: DWARF <= 4 directory 0 is "none", relative
// include directories stay relative, absolute file names win.
func TestFileResolution(t *testing.T) {
	v4 := &lineHeader{version: 4, dirs: []string{"inc", "/abs"}, files: []rawFile{{},
		{name: "k.cl", dir: 0, ok: true}, {name: "x.h", dir: 1, ok: true}, {name: "y.h", dir: 2, ok: true},
		{name: "/abs2/./z.h", dir: 1, ok: true}, {name: "w.h", dir: 7, ok: true}}}
	v5 := &lineHeader{version: 5, dirs: []string{"/comp", "inc/../inc2"}, files: []rawFile{
		{name: "k.cl", dir: 0, ok: true}, {name: "x.h", dir: 1, ok: true}, {name: "/a/b.h", dir: 0, ok: true},
		{name: "q.h", dir: 9, ok: true}}}
	for _, c := range []struct {
		h    *lineHeader
		idx  int
		want string
		ok   bool
	}{
		{v4, 0, "", false}, {v4, 1, "k.cl", true}, {v4, 2, "inc/x.h", true}, {v4, 3, "/abs/y.h", true},
		{v4, 4, "/abs2/z.h", true}, {v4, 5, "w.h", true}, {v4, 6, "", false}, {v4, -1, "", false},
		{v5, 0, "/comp/k.cl", true}, {v5, 1, "inc2/x.h", true}, {v5, 2, "/a/b.h", true}, {v5, 3, "q.h", true}, {v5, 4, "", false},
	} {
		got, ok := c.h.resolve(c.idx)
		if got != c.want || ok != c.ok {
			t.Errorf("DWARF %d file %d: %q %v, want %q %v", c.h.version, c.idx, got, ok, c.want, c.ok)
		}
	}
}
