package publish

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ManifestName is the mark in every folder a Set publishes: a hidden file
// naming the tool, the run and every file the run wrote, in the folder and
// beside it. ROCprof Compute Viewer reads only the files it names
// (docs/spec/viewer-loader.md), so it does not see it.
const ManifestName = ".attkit-output"

const manifestMagic = "attkit output 1"

// tool is the name written into manifests (Catch sets it).
var tool = struct {
	sync.Mutex
	name string
}{name: filepath.Base(os.Args[0])}

func toolName() string {
	tool.Lock()
	defer tool.Unlock()
	return tool.name
}

// SetTool names the tool in the manifests this process writes.
func SetTool(name string) {
	tool.Lock()
	tool.name = name
	tool.Unlock()
}

// newRunID is unique per Set: pid, time and a random number.
func newRunID() string {
	return strconv.Itoa(os.Getpid()) + "-" + strconv.FormatInt(time.Now().UnixNano(), 36) + "-" +
		strconv.FormatUint(rand.Uint64()>>32, 36)
}

// A manifest is the content of a folder's mark.
type manifest struct {
	tool, run string
	files     []string // slash-separated paths inside the folder
	siblings  []string // base names of files beside the folder
}

func (m *manifest) encode() []byte {
	b := fmt.Appendf(nil, "%s\ntool %s\nrun %s\n", manifestMagic, strconv.Quote(m.tool), m.run)
	line := func(key, val string) {
		b = append(b, key...)
		b = strconv.AppendQuote(append(b, ' '), val)
		b = append(b, '\n')
	}
	for _, s := range m.siblings {
		line("sibling", s)
	}
	for _, f := range m.files {
		line("file", f)
	}
	return b
}

// readManifest reads the mark of folder dir; nil when there is none or it
// is not one of ours.
func readManifest(dir string) *manifest {
	f, err := os.Open(filepath.Join(dir, ManifestName))
	if err != nil {
		return nil
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	if !sc.Scan() || sc.Text() != manifestMagic {
		return nil
	}
	m := &manifest{}
	for sc.Scan() {
		key, val, _ := strings.Cut(sc.Text(), " ")
		switch key {
		case "tool":
			m.tool, _ = strconv.Unquote(val)
		case "run":
			m.run = val
		case "file", "sibling":
			s, err := strconv.Unquote(val)
			if err != nil {
				return nil
			}
			if key == "file" {
				m.files = append(m.files, s)
			} else {
				m.siblings = append(m.siblings, s)
			}
		}
	}
	if sc.Err() != nil || m.run == "" {
		return nil
	}
	return m
}

// writeManifest lists every file under tmp (the folder being built) and
// the siblings, and writes the mark into tmp.
func writeManifest(tmp, run string, siblings []string) error {
	files, err := listFiles(tmp, "", nil)
	if err != nil {
		return err
	}
	m := &manifest{tool: toolName(), run: run, files: files, siblings: siblings}
	return os.WriteFile(filepath.Join(tmp, ManifestName), m.encode(), 0o666)
}

// listFiles appends the slash-separated paths, each after prefix, of the
// files under dir but the mark, in filepath.WalkDir's order (a folder's
// names sorted, a subfolder's files at its name). A viewer folder holds a
// file per wave, hundreds of thousands: no filepath.Rel per file.
func listFiles(dir, prefix string, files []string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return files, err
	}
	for _, e := range ents {
		rel := prefix + e.Name()
		switch {
		case e.IsDir():
			if files, err = listFiles(filepath.Join(dir, e.Name()), rel+"/", files); err != nil {
				return files, err
			}
		case rel != ManifestName:
			files = append(files, rel)
		}
	}
	return files, nil
}

// HasMark reports whether folder dir carries the mark of an attkit output
// (whatever else it holds): input discovery skips such folders.
func HasMark(dir string) bool { return readManifest(dir) != nil }

// Owned reports whether dir is a folder an attkit tool published (it holds
// the mark) that holds nothing but the files listed in the mark.
func Owned(dir string) bool {
	if readManifest(dir) == nil {
		return false
	}
	m, err := checkOwned(dir)
	return err == nil && m != nil
}

// errNotOurs is a refusal that --force cannot lift.
type notOursError struct{ msg string }

func (e *notOursError) Error() string { return e.msg }

// checkOwned returns the mark of dir, or an error saying what dir holds
// that no attkit run wrote.
func checkOwned(dir string) (*manifest, error) {
	m := readManifest(dir)
	var names []string
	n := 0
	listed := map[string]bool{}
	if m != nil {
		for _, f := range m.files {
			listed[f] = true
		}
	}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if rel == ManifestName && m != nil {
			return nil
		}
		if !listed[rel] {
			n++
			if len(names) < 3 {
				names = append(names, rel)
			}
			if m == nil && n > len(names) {
				return fs.SkipAll // no mark: no need to count them all
			}
		}
		return nil
	})
	if err != nil {
		return nil, &notOursError{fmt.Sprintf("%s cannot be checked: %v", dir, unwrapPath(err))}
	}
	if n == 0 && m != nil {
		return m, nil
	}
	if n == 0 {
		// An empty folder (or one of empty folders): nothing to lose.
		return nil, nil
	}
	what := strings.Join(names, ", ")
	switch {
	case n > len(names) && m == nil:
		what += " and more"
	case n > len(names):
		what += fmt.Sprintf(" and %d more", n-len(names))
	}
	if m == nil {
		return nil, &notOursError{fmt.Sprintf("%s holds files no attkit tool wrote (%s): refusing to replace it; choose another output folder", dir, what)}
	}
	return nil, &notOursError{fmt.Sprintf("%s is an earlier output of %s, but holds files it did not write (%s): refusing to replace it; move them away or choose another output folder", dir, m.tool, what)}
}

// An ExistsError names a target that holds an earlier result of an attkit
// tool; --force (a Set that replaces) replaces it.
type ExistsError struct {
	Path string
	Tool string // the tool that wrote it, when known
}

func (e *ExistsError) Error() string {
	if e.Tool != "" {
		return e.Path + " holds an earlier result of " + e.Tool + " (use --force to replace it)"
	}
	return e.Path + " exists (use --force to replace it)"
}

// Is makes errors.Is(err, ErrExists) true.
func (e *ExistsError) Is(target error) bool { return target == ErrExists }

// ErrExists is returned by Commit and Check when a target holds an earlier
// result and the Set does not replace.
var ErrExists = errors.New("exists")

// ErrNotOurs is matched (errors.Is) by a refusal to replace something no
// attkit run wrote, or an input: no flag lifts it.
var ErrNotOurs = errors.New("not ours")

func (e *notOursError) Is(target error) bool { return target == ErrNotOurs }

// inputs is the process's registry of input files: no output may be one of
// them or hold one.
var inputs = struct {
	sync.Mutex
	paths []string
}{}

// Input registers input files ("-" and "" are skipped): every Set and
// WriteFile of the process then refuses a target that is one of them (the
// same file: by device and inode, so symbolic and hard links count) or a
// folder that holds one.
func Input(paths ...string) {
	inputs.Lock()
	defer inputs.Unlock()
	for _, p := range paths {
		if p == "" || p == "-" {
			continue
		}
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		if !slices.Contains(inputs.paths, p) {
			inputs.paths = append(inputs.paths, p)
		}
		if real, err := filepath.EvalSymlinks(p); err == nil && !slices.Contains(inputs.paths, real) {
			inputs.paths = append(inputs.paths, real)
		}
	}
}

// ResetInputs forgets the registered inputs (a new run in the process).
func ResetInputs() {
	inputs.Lock()
	inputs.paths = nil
	inputs.Unlock()
}

// CheckNotInput returns an error when target is a registered input or a
// folder holding one. Tools call it before their work to fail early;
// Commit and WriteFile check again.
func CheckNotInput(target string) error {
	st, err := os.Stat(target)
	if err != nil {
		return nil
	}
	inputs.Lock()
	paths := slices.Clone(inputs.paths)
	inputs.Unlock()
	for _, in := range paths {
		for p := in; ; p = filepath.Dir(p) {
			if ist, err := os.Stat(p); err == nil && os.SameFile(st, ist) {
				if p == in {
					return &notOursError{fmt.Sprintf("%s is an input (%s): an output never replaces an input", target, in)}
				}
				return &notOursError{fmt.Sprintf("%s holds an input (%s): an output never replaces an input", target, in)}
			}
			if filepath.Dir(p) == p {
				break
			}
		}
	}
	return nil
}
