// Package pypath reproduces Python's posixpath.normpath, which upstream's
// code index uses for DWARF file names and snapshot paths; byte-identical
// Source columns and snapshots.json keys depend on it. (Go's path.Clean
// differs: it folds a leading "//" and turns ".." above the root of a
// relative path into nothing.)
package pypath

import "strings"

// Normpath normalises a path lexically like Python's posixpath.normpath:
// it collapses ".", ".." and repeated separators, keeps a leading "//"
// (exactly two slashes) and turns "" into ".".
func Normpath(p string) string {
	if p == "" {
		return "."
	}
	initial := 0
	if strings.HasPrefix(p, "/") {
		initial = 1
		if strings.HasPrefix(p, "//") && !strings.HasPrefix(p, "///") {
			initial = 2
		}
	}
	var out []string
	for _, c := range strings.Split(p, "/") {
		if c == "" || c == "." {
			continue
		}
		if c != ".." || (initial == 0 && len(out) == 0) || (len(out) > 0 && out[len(out)-1] == "..") {
			out = append(out, c)
		} else if len(out) > 0 {
			out = out[:len(out)-1]
		}
	}
	s := strings.Repeat("/", initial) + strings.Join(out, "/")
	if s == "" {
		return "."
	}
	return s
}

// ExpandUser replaces a leading "~" of "~" or "~/…" by home() as Python's
// posixpath.expanduser does for the current user (home is $HOME there);
// any other path, or an empty home, is returned unchanged.
func ExpandUser(p string, home func() string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if h := home(); h != "" {
			return h + p[1:]
		}
	}
	return p
}
