// Package snapshot writes the source snapshots that ROCprof Compute Viewer
// shows beside the ISA (python-layer §5.10): copies of the source files an
// index's rows name, as source_<i>_<basename>, and snapshots.json, the tree
// of their original paths. co-index writes them with --snapshots; att-rcv
// and att-tool write or copy them into each ui_output folder.
//
// In flow an index (the paths its rows' line-table sources name) or the
// folder of a code.json (its source_* files and snapshots.json); out flow
// copies into a folder. What is copied is bounded, because a code object
// or a capture may name any file of the machine:
//   - only regular files, each at most MaxFileSize (16 MiB) bytes;
//   - a path of the index is copied when it is a regular file itself (not
//     a symbolic link); with a source folder (Options.Source, --source DIR)
//     relative paths are looked up there, and so are absolute ones that do
//     not exist as named (by their trailing components), and a link is
//     followed only when its target stays inside that folder;
//   - a code.json folder's source_* file that is a symbolic link is followed
//     only when its target stays inside that folder;
//   - a copy is created with 0666 less the umask and never readable by more
//     than its source is (a 0600 file stays 0600).
//
// What is skipped for these reasons is named in a warning (Options.Warn).
package snapshot

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/attkit/attkit/internal/pyjson"
	"github.com/attkit/attkit/internal/pypath"
	"github.com/attkit/attkit/internal/wire"
)

// MaxFileSize is the largest source file copied: a source text is far
// smaller; a larger file named by a line table is not a source.
const MaxFileSize = 16 << 20

// Options say where sources are looked up and who hears what is skipped.
type Options struct {
	// Source is a folder holding the sources (--source DIR): relative
	// paths of the index are looked up there, and absolute paths that do
	// not exist as named by their trailing components.
	Source string
	// Warn receives one message per skipped file; nil drops them.
	Warn func(msg string)
}

func (o *Options) warn(format string, args ...any) {
	if o.Warn != nil {
		o.Warn(fmt.Sprintf(format, args...))
	}
}

// FileName is the name of the snapshot tree file.
const FileName = "snapshots.json"

// pathRE finds "path:line" and "path:?" in a source text: a run of word
// characters, '.', '/', '+' and '-' ending in ".<extension>" (§3.7).
var pathRE = regexp.MustCompile(`([\w./+-]*\.\w+):(?:[0-9]+|\?)`)

// Paths returns the source paths named by the instruction rows of ix (every
// element of an inline chain counts), lexically normalised, without
// duplicates, in first-seen order. Relative paths stay relative.
func Paths(ix *wire.Index) []string {
	var out []string
	seen := map[string]bool{}
	last := ""
	for i := range ix.Rows {
		r := &ix.Rows[i]
		if r.IsLabel() || r.Source == "" || r.Source == last {
			continue
		}
		last = r.Source
		for _, m := range pathRE.FindAllStringSubmatch(r.Source, -1) {
			p := pypath.Normpath(m[1])
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	return out
}

// Write snapshots the sources that ix names into dir; see WriteFiles.
func Write(dir string, ix *wire.Index, opt Options) (int, error) {
	return WriteFiles(dir, Paths(ix), opt)
}

// WriteFiles copies the paths that are regular files (see the package
// documentation for which; relative paths are tried against opt.Source,
// else the working directory) into dir as source_<i>_<basename> and
// writes snapshots.json, the tree of their paths as named, when at least
// one file was copied. It returns the number copied. dir is created if
// needed.
func WriteFiles(dir string, paths []string, opt Options) (int, error) {
	type keep struct{ named, file string }
	var kept []keep
	seen := map[string]bool{}
	var missing []string
	for _, p := range paths {
		if seen[p] {
			continue
		}
		seen[p] = true
		file, why := opt.locate(p)
		switch {
		case file != "":
			kept = append(kept, keep{p, file})
		case why != "":
			opt.warn("source snapshot: %s not copied: %s", p, why)
		default:
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 && opt.Source != "" {
		opt.warn("source snapshot: %d of the sources the code objects name are not in %s or where named (first: %s)",
			len(missing), opt.Source, missing[0])
	}
	if len(kept) == 0 {
		return 0, nil
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return 0, err
	}
	tree := pyjson.Object{}
	for i, k := range kept {
		name := "source_" + strconv.Itoa(i) + "_" + filepath.Base(k.named)
		if err := copyFile(filepath.Join(dir, name), k.file); err != nil {
			return i, err
		}
		tree = insert(tree, components(k.named), name)
	}
	err := writeFile(filepath.Join(dir, FileName), 0o666, func(w io.Writer) error {
		return pyjson.Encode(w, tree)
	})
	return len(kept), err
}

// locate finds the file to copy for the index path p: its path, or "" and
// why it is not copied ("" too when it is not there at all).
func (o *Options) locate(p string) (file, why string) {
	if filepath.IsAbs(p) || o.Source == "" {
		file, why = plain(p)
		if file != "" || why != "" || o.Source == "" {
			return file, why
		}
	}
	// Under the source folder: p relative, else its trailing components.
	root, err := filepath.EvalSymlinks(o.Source)
	if err != nil {
		return "", ""
	}
	comps := strings.Split(strings.TrimPrefix(filepath.ToSlash(p), "/"), "/")
	for i := range comps {
		rel := filepath.Join(comps[i:]...)
		if !filepath.IsLocal(rel) {
			continue
		}
		cand := filepath.Join(root, rel)
		if _, err := os.Lstat(cand); err != nil {
			if !filepath.IsAbs(p) {
				return "", ""
			}
			continue
		}
		real, err := filepath.EvalSymlinks(cand)
		if err != nil {
			return "", "a symbolic link to nothing"
		}
		if !inside(real, root) {
			return "", "a symbolic link leaving " + o.Source
		}
		return checkFile(real)
	}
	return "", ""
}

// plain is a path copied as named: a regular file, not a symbolic link.
func plain(p string) (file, why string) {
	st, err := os.Lstat(p)
	if err != nil {
		return "", ""
	}
	if st.Mode()&fs.ModeSymlink != 0 {
		return "", "a symbolic link (--source DIR follows links inside DIR)"
	}
	return checkFile(p)
}

// checkFile accepts a regular file of at most MaxFileSize bytes.
func checkFile(p string) (file, why string) {
	st, err := os.Stat(p)
	switch {
	case err != nil:
		return "", ""
	case !st.Mode().IsRegular():
		return "", "not a regular file"
	case st.Size() > MaxFileSize:
		return "", fmt.Sprintf("%d bytes, more than the %d MiB a source snapshot may have", st.Size(), MaxFileSize>>20)
	}
	return p, ""
}

// inside reports whether path is root or below it (both resolved).
func inside(path, root string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && filepath.IsLocal(rel)
}

// components splits a path for the tree: an absolute path starts with "/".
func components(p string) []string {
	var out []string
	if strings.HasPrefix(p, "/") {
		out = append(out, "/")
	}
	for _, c := range strings.Split(p, "/") {
		if c != "" {
			out = append(out, c)
		}
	}
	return out
}

// insert adds the path components to node, the last mapped to leaf, and
// returns the updated node. A component that collides with an existing leaf
// abandons the insertion (objects created on the way stay, as upstream's
// walk leaves them).
func insert(node pyjson.Object, comps []string, leaf string) pyjson.Object {
	c := comps[0]
	if len(comps) == 1 {
		node.Set(c, leaf)
		return node
	}
	var child pyjson.Object
	if v, ok := node.Get(c); ok {
		var isObj bool
		if child, isObj = v.(pyjson.Object); !isObj {
			return node
		}
	}
	node.Set(c, insert(child, comps[1:], leaf))
	return node
}

// copyFile copies src to dst, never readable by more than src is.
func copyFile(dst, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return err
	}
	return writeFile(dst, 0o666&st.Mode().Perm(), func(w io.Writer) error {
		// At most the bound, should the file grow while it is read.
		_, err := io.Copy(w, io.LimitReader(in, MaxFileSize))
		return err
	})
}

// writeFile writes path through a temporary sibling created with perm (the
// umask applies) and renamed into place when complete.
func writeFile(path string, perm fs.FileMode, write func(w io.Writer) error) error {
	var f *os.File
	var tmp string
	var err error
	for try := 0; ; try++ {
		tmp = filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp-"+strconv.FormatUint(rand.Uint64()>>24, 36))
		f, err = os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if err == nil || !errors.Is(err, fs.ErrExist) || try == 100 {
			break
		}
	}
	if err != nil {
		return err
	}
	err = write(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// Copy copies src/snapshots.json (if present) and every regular file
// src/source_* into dst, keeping modification times and skipping a file
// whose destination is the same file (python-layer §5.10,
// copy_source_snapshots). A symbolic link is followed only when its target
// stays inside src; what is skipped is named through opt.Warn.
func Copy(src, dst string, opt Options) error {
	names, err := filepath.Glob(filepath.Join(src, "source_*"))
	if err != nil {
		return err
	}
	root, err := filepath.EvalSymlinks(src)
	if err != nil {
		return err
	}
	names = append([]string{filepath.Join(src, FileName)}, names...)
	for _, from := range names {
		lt, err := os.Lstat(from)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		file := from
		if lt.Mode()&fs.ModeSymlink != 0 {
			real, err := filepath.EvalSymlinks(from)
			if err != nil {
				opt.warn("source snapshot: %s not copied: a symbolic link to nothing", from)
				continue
			}
			if !inside(real, root) {
				opt.warn("source snapshot: %s not copied: a symbolic link leaving %s", from, src)
				continue
			}
			file = real
		}
		st, err := os.Stat(file)
		if err != nil {
			return err
		}
		if !st.Mode().IsRegular() {
			continue
		}
		if st.Size() > MaxFileSize {
			opt.warn("source snapshot: %s not copied: %d bytes, more than the %d MiB a source snapshot may have", from, st.Size(), MaxFileSize>>20)
			continue
		}
		to := filepath.Join(dst, filepath.Base(from))
		if dt, err := os.Stat(to); err == nil && os.SameFile(st, dt) {
			continue
		}
		if err := os.MkdirAll(dst, 0o777); err != nil {
			return err
		}
		if err := copyFile(to, file); err != nil {
			return err
		}
		if err := os.Chtimes(to, st.ModTime(), st.ModTime()); err != nil {
			return err
		}
	}
	return nil
}
