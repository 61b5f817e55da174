// Package tracename is the one place that knows how trace files are named:
// rocprofv3 writes <pid>_<agent>_shader_engine_<SE>_<run>.att, and other
// names get run 1 and the lowest free shader engine, as upstream's
// att_tool.py assigns them (python-layer.md §6.4).
package tracename

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

var pattern = regexp.MustCompile(`(?i)_shader_engine_([0-9]+)_([0-9]+)\.att$`)

// Parse returns the shader engine and run a rocprofv3 trace name carries.
// ok is false for a name without the pattern (or with numbers too large).
func Parse(name string) (se, run int, ok bool) {
	m := pattern.FindStringSubmatch(filepath.Base(name))
	if m == nil {
		return 0, 0, false
	}
	se, err1 := strconv.Atoi(m[1])
	run, err2 := strconv.Atoi(m[2])
	if err1 != nil || err2 != nil || se > 1<<30 || run > 1<<30 {
		return 0, 0, false
	}
	return se, run, true
}

// A Trace is a trace file with its shader engine and run.
type Trace struct {
	Path string `json:"path"`
	SE   int    `json:"se"`
	Run  int    `json:"run"`
	// Named is true when SE and run came from the file name.
	Named bool `json:"named"`
}

// Assign gives every path its shader engine and run: from the name when it
// follows the rocprofv3 pattern, else run 1 and the lowest SE above the
// previously assigned one that no conventionally named run-1 trace uses.
// Example: a.att, x_shader_engine_0_1.att, b.att give SE 1, 0 and 2.
func Assign(paths []string) []Trace {
	used := map[int]bool{}
	out := make([]Trace, len(paths))
	for i, p := range paths {
		se, run, ok := Parse(p)
		out[i] = Trace{Path: p, SE: se, Run: run, Named: ok}
		if ok && run == 1 {
			used[se] = true
		}
	}
	next := 0
	for i := range out {
		if out[i].Named {
			continue
		}
		for used[next] {
			next++
		}
		out[i].SE, out[i].Run = next, 1
		next++
	}
	return out
}

// Expand replaces each directory among args by its .att entries (sorted by
// name, not recursive). A path that does not exist is an error naming it.
func Expand(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			if os.IsNotExist(err) {
				return nil, fmt.Errorf("input does not exist: %s", a)
			}
			return nil, err
		}
		if !st.IsDir() {
			out = append(out, a)
			continue
		}
		ents, err := os.ReadDir(a)
		if err != nil {
			return nil, err
		}
		var names []string
		for _, e := range ents {
			if strings.HasSuffix(strings.ToLower(e.Name()), ".att") {
				names = append(names, e.Name())
			}
		}
		sort.Strings(names)
		for _, n := range names {
			out = append(out, filepath.Join(a, n))
		}
	}
	return out, nil
}
