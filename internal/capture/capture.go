// Package capture finds what a thread-trace capture holds, as att-tool and
// att-info take it: files and directories flow in (directories searched
// recursively, as rocprofv3 writes <out>/<hostname>/<pid>_<agent>_…;
// hidden entries and earlier ui_output_* folders skipped), and out come the
// .att traces, code objects (.out, .co, .hsaco), the code.json and the
// --code-object placements, each file once (a file under two names, or
// traces of the same bytes, warned of), then grouped by the process and
// agent of their rocprofv3 names. The error messages are att_tool.py's,
// word for word (python-layer §6.4).
package capture

import (
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/attkit/attkit/internal/codeobj"
	"github.com/attkit/attkit/internal/exitcode"
	"github.com/attkit/attkit/internal/publish"
	"github.com/attkit/attkit/internal/tracename"
)

// errorf is an error of att_tool.py's words (capital letter and final
// period included).
func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// Found is what input discovery Found, in discovery order, with absolute,
// symlink-resolved paths.
type Found struct {
	warn     func(format string, args ...any)
	files    []seenFile // every input file, for their identity
	Traces   []string
	Objects  []string
	CodeJSON string
	Placed   []codeobj.Input // --code-object ID=PATH@ADDR
}

// Options are what Discover searches.
type Options struct {
	// Inputs are files and directories (att-tool's FILE arguments).
	Inputs []string
	// CodeObjects are --code-object ID=PATH@ADDR arguments, already
	// checked with codeobj.ParseInputArg.
	CodeObjects []string
	// AllowDuplicates counts traces of the same content twice.
	AllowDuplicates bool
	// Warn prints a warning (an input given twice...).
	Warn func(format string, args ...any)
}

// Discover classifies the inputs (python-layer §6.4), except that
// directories are searched recursively: rocprofv3 writes
// <out>/<hostname>/<pid>_<agent>_…. Hidden entries and earlier outputs
// (ui_output_* folders, folders with publish's mark) are skipped.
func Discover(opt Options) (*Found, error) {
	fd := Found{warn: opt.Warn}
	if fd.warn == nil {
		fd.warn = func(string, ...any) {}
	}
	for _, a := range opt.Inputs {
		p, err := absInput(a)
		if err != nil {
			return nil, err
		}
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			if !fd.add(p, st) {
				return nil, errorf("Unsupported input type: %s. Expected .att, code.json, or a code object (.out, .co, .hsaco).", p)
			}
			continue
		}
		err = filepath.WalkDir(p, func(q string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if q == p {
				return nil
			}
			name := d.Name()
			// An earlier output of ours (publish's mark) is no input either.
			if strings.HasPrefix(name, ".") || d.IsDir() && (strings.HasPrefix(name, "ui_output_") ||
				publish.HasMark(q)) {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if d.IsDir() {
				return nil
			}
			if st, err := os.Stat(q); err == nil && !st.IsDir() {
				fd.add(q, st)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	for _, a := range opt.CodeObjects {
		in, _ := codeobj.ParseInputArg(a) // checked by checkFlags
		p, err := absInput(in.Path)
		if err != nil {
			return nil, err
		}
		in.Path = p
		// PATH among the inputs (under any name) is not indexed twice.
		if st, err := os.Stat(p); err == nil {
			fd.Objects = slices.DeleteFunc(fd.Objects, func(o string) bool {
				ot, err := os.Stat(o)
				return err == nil && os.SameFile(st, ot)
			})
		}
		fd.Placed = append(fd.Placed, in)
	}
	if err := fd.sameContent(opt.AllowDuplicates); err != nil {
		return nil, err
	}
	if len(fd.Traces) == 0 && len(fd.Objects) == 0 && len(fd.Placed) == 0 && fd.CodeJSON == "" {
		return nil, errorf("No .att files, code.json, or code object files were provided or discovered.")
	}
	return &fd, nil
}

// absInput expands ~, makes p absolute and resolves symbolic links.
func absInput(p string) (string, error) {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			p = home + p[1:]
		}
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(abs); err != nil {
		return "", errorf("Input does not exist: %s", p)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	return abs, nil
}

// A seenFile is an input file and its identity (device and inode).
type seenFile struct {
	path, group string
	st          os.FileInfo
}

// inputGroup is the kind of input p and the process and agent its name
// carries: one file under the names of two processes (hard links, as tests
// make captures) is an input of each.
func inputGroup(p string) string {
	if strings.HasSuffix(strings.ToLower(p), ".att") {
		return "trace " + groupKey(traceGroupRE, p)
	}
	return "object " + groupKey(objectGroupRE, p)
}

// add classifies the file p unless it is one already Found under another
// name (given twice, a folder and a file in it, a symbolic or hard link):
// that is warned of and counted once. False for a name of no known kind.
func (fd *Found) add(p string, st os.FileInfo) bool {
	g := inputGroup(p)
	for _, s := range fd.files {
		if s.group == g && os.SameFile(s.st, st) {
			if s.path == p {
				fd.warn("%s given twice: counted once", p)
			} else {
				fd.warn("%s and %s are the same file: counted once", s.path, p)
			}
			return true
		}
	}
	if !fd.classify(p) {
		return false
	}
	fd.files = append(fd.files, seenFile{p, g, st})
	return true
}

// sameContent finds traces of the same bytes under two names of one
// process and agent (a copy of a capture inside it, a copied trace): each
// is warned of and, unless allow, counted once. Only traces of equal size
// are read.
func (fd *Found) sameContent(allow bool) error {
	type key struct {
		group string
		size  int64
	}
	sizes := make([]key, len(fd.Traces))
	n := map[key]int{}
	for i, t := range fd.Traces {
		st, err := os.Stat(t)
		if err != nil {
			return err
		}
		sizes[i] = key{groupKey(traceGroupRE, t), st.Size()}
		n[sizes[i]]++
	}
	drop := map[string]bool{}
	type sum struct {
		group string
		sum   [sha256.Size]byte
	}
	first := map[sum]string{}
	for i, t := range fd.Traces {
		if n[sizes[i]] < 2 {
			continue
		}
		h, err := fileSum(t)
		if err != nil {
			return err
		}
		k := sum{sizes[i].group, h}
		o, ok := first[k]
		switch {
		case !ok:
			first[k] = t
		case allow:
			fd.warn("%s has the same content as %s: counted twice (--allow-duplicates)", t, o)
		default:
			fd.warn("%s has the same content as %s: counted once (--allow-duplicates counts both)", t, o)
			drop[t] = true
		}
	}
	fd.Traces = slices.DeleteFunc(fd.Traces, func(t string) bool { return drop[t] })
	return nil
}

func fileSum(path string) ([sha256.Size]byte, error) {
	var sum [sha256.Size]byte
	f, err := os.Open(path)
	if err != nil {
		return sum, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return sum, err
	}
	copy(sum[:], h.Sum(nil))
	return sum, nil
}

// classify files p by its name; false for a name of no known kind.
func (fd *Found) classify(p string) bool {
	lower := strings.ToLower(filepath.Base(p))
	switch {
	case strings.HasSuffix(lower, ".att"):
		fd.Traces = append(fd.Traces, p)
	case lower == "code.json":
		fd.CodeJSON = p
	case strings.HasSuffix(lower, ".out"), strings.HasSuffix(lower, ".co"), strings.HasSuffix(lower, ".hsaco"):
		fd.Objects = append(fd.Objects, p)
	default:
		return false
	}
	return true
}

// rocprofv3 names a process's files <pid>_<agent>_shader_engine_<SE>_<run>.att
// and <pid>_<agent>_code_object_id_<N>.<ext> (python-layer §6.4).
var (
	traceGroupRE  = regexp.MustCompile(`(?i)^(.+)_shader_engine_[0-9]+_[0-9]+\.att$`)
	objectGroupRE = regexp.MustCompile(`(?i)^(.+?)_code_object_id_[0-9]+`)
)

// A Group is what one process and agent of a capture left: its traces and
// the code objects named after it. Code objects named after no group
// belong to every group.
type Group struct {
	Key     string // "<pid>_<agent>", "" for traces not named by rocprofv3
	Traces  []tracename.Trace
	Objects []string
}

// Label names the group in messages.
func (g *Group) Label() string {
	if g.Key == "" {
		return "traces without a <pid>_<agent>_ prefix"
	}
	if pid, agent, ok := strings.Cut(g.Key, "_"); ok {
		return fmt.Sprintf("%s (process %s, agent %s)", g.Key, pid, agent)
	}
	return g.Key
}

func groupKey(re *regexp.Regexp, path string) string {
	if m := re.FindStringSubmatch(filepath.Base(path)); m != nil {
		return m[1]
	}
	return ""
}

// GroupInputs splits the traces and code objects by the process and agent
// of their names. pick (att-tool --group) keeps one group.
func GroupInputs(fd *Found, pick string) ([]*Group, error) {
	var groups []*Group
	byKey := map[string]*Group{}
	for _, t := range fd.Traces {
		k := groupKey(traceGroupRE, t)
		g := byKey[k]
		if g == nil {
			g = &Group{Key: k}
			byKey[k] = g
			groups = append(groups, g)
		}
		g.Traces = append(g.Traces, tracename.Trace{Path: t})
	}
	var shared []string
	for _, o := range fd.Objects {
		if g := byKey[groupKey(objectGroupRE, o)]; g != nil && g.Key != "" {
			g.Objects = append(g.Objects, o)
		} else {
			shared = append(shared, o)
		}
	}
	for _, g := range groups {
		g.Objects = append(g.Objects, shared...)
		paths := make([]string, len(g.Traces))
		for i, t := range g.Traces {
			paths[i] = t.Path
		}
		g.Traces = tracename.Assign(paths)
	}
	if pick != "" {
		g := byKey[pick]
		if g == nil || pick == "" {
			var keys []string
			for _, g := range groups {
				keys = append(keys, g.Key)
			}
			return nil, exitcode.Errorf(exitcode.Usage, "--group %s: no traces named %s_…; the inputs hold %s", pick, pick, strings.Join(quoted(keys), ", "))
		}
		groups = []*Group{g}
	}
	return groups, nil
}

func quoted(keys []string) []string {
	out := slices.Clone(keys)
	for i, k := range out {
		if k == "" {
			out[i] = "traces without a prefix"
		}
	}
	return out
}
