// Package snapshot writes the source snapshots that ROCprof Compute Viewer
// shows beside the ISA (python-layer §5.10): copies of the source files an
// index's rows name, as source_<i>_<basename>, and snapshots.json, the tree
// of their original paths. co-index writes them with --snapshots; att-rcv
// writes or copies them into each ui_output folder.
package snapshot

import (
	"errors"
	"github.com/attkit/attkit/internal/pypath"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/attkit/attkit/internal/cli"
	"github.com/attkit/attkit/internal/pyjson"
	"github.com/attkit/attkit/internal/wire"
)

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
func Write(dir string, ix *wire.Index) (int, error) {
	return WriteFiles(dir, Paths(ix))
}

// WriteFiles copies the paths that are existing regular files (relative
// paths are tried against the working directory) into dir as
// source_<i>_<basename> and writes snapshots.json, the tree of their
// paths, when at least one file was copied. It returns the number copied.
// dir is created if needed.
func WriteFiles(dir string, paths []string) (int, error) {
	var kept []string
	seen := map[string]bool{}
	for _, p := range paths {
		if seen[p] {
			continue
		}
		seen[p] = true
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			kept = append(kept, p)
		}
	}
	if len(kept) == 0 {
		return 0, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	tree := pyjson.Object{}
	for i, p := range kept {
		name := "source_" + strconv.Itoa(i) + "_" + filepath.Base(p)
		if err := copyFile(filepath.Join(dir, name), p); err != nil {
			return i, err
		}
		tree = insert(tree, components(p), name)
	}
	err := cli.WriteFileAtomic(filepath.Join(dir, FileName), func(w io.Writer) error {
		return pyjson.Encode(w, tree)
	})
	return len(kept), err
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

func copyFile(dst, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	return cli.WriteFileAtomic(dst, func(w io.Writer) error {
		_, err := io.Copy(w, in)
		return err
	})
}

// Copy copies src/snapshots.json (if present) and every regular file
// src/source_* into dst, keeping modification times and skipping a file
// whose destination is the same file (python-layer §5.10,
// copy_source_snapshots).
func Copy(src, dst string) error {
	names, err := filepath.Glob(filepath.Join(src, "source_*"))
	if err != nil {
		return err
	}
	names = append([]string{filepath.Join(src, FileName)}, names...)
	for _, from := range names {
		st, err := os.Stat(from)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if !st.Mode().IsRegular() {
			continue
		}
		to := filepath.Join(dst, filepath.Base(from))
		if dt, err := os.Stat(to); err == nil && os.SameFile(st, dt) {
			continue
		}
		if err := os.MkdirAll(dst, 0o755); err != nil {
			return err
		}
		if err := copyFile(to, from); err != nil {
			return err
		}
		if err := os.Chtimes(to, st.ModTime(), st.ModTime()); err != nil {
			return err
		}
	}
	return nil
}
