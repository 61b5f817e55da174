package codeobj

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/attkit/attkit/internal/exitcode"
)

// An Input is a code object to index and its id. A placed input (Placed
// set) is indexed at the GPU address Load it was loaded at: its rows,
// kernels, load ranges and funcmap addresses are Load + ELF vaddr. That is
// how to index a capture whose PCs are absolute because no code-object load
// record announced the objects (runtimes other than rocprofv3): the decoder
// leaves such PCs in code object 0, so the capture's objects are placed
// with id 0, side by side.
//
// An input with Data holds the object's bytes instead of naming a file
// (co-index reads standard input so); its Path then only names it, in
// errors and in the index, and is never opened.
type Input struct {
	ID     uint64
	Path   string
	Load   uint64
	Placed bool
	Data   []byte
}

var tagRE = regexp.MustCompile(`(?i)(?:^|_)code_object_id_([0-9]+)(?:_|$)`)

// InferID infers a code object id from a file name (python-layer §3.1):
// "code_object_id_<digits>" in the stem (at its start or after "_", at its
// end or before "_"), else the text after the last "_" of the stem if it is
// an integer. ok is false for an untagged name.
func InferID(path string) (id uint64, ok bool, err error) {
	base := filepath.Base(path)
	stem := base
	if i := strings.LastIndexByte(base, '.'); i > 0 {
		stem = base[:i]
	}
	if m := tagRE.FindStringSubmatch(stem); m != nil {
		v, err := strconv.ParseUint(m[1], 10, 64)
		if err != nil {
			return 0, false, fmt.Errorf("code object id %s in %s is out of range", m[1], path)
		}
		return v, true, nil
	}
	i := strings.LastIndexByte(stem, '_')
	if i < 0 {
		return 0, false, nil
	}
	// Python int(): surrounding white space and a sign are allowed.
	s := strings.TrimSpace(stem[i+1:])
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if !isDecimal(s) {
		return 0, false, nil
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("code object id %s in %s is out of range", s, path)
	}
	if neg && v != 0 {
		return 0, false, fmt.Errorf("code object id -%s in %s is negative", s, path)
	}
	return v, true, nil
}

// InferIDs assigns ids to paths from their names (§3.1). One untagged file
// gets id 0 unless another file is tagged 0; several untagged files are an
// error.
func InferIDs(paths []string) ([]Input, error) {
	out := make([]Input, len(paths))
	var untagged []string
	untaggedAt := -1
	zeroTaken := false
	for i, p := range paths {
		id, ok, err := InferID(p)
		if err != nil {
			return nil, err
		}
		out[i] = Input{ID: id, Path: p}
		if !ok {
			untagged = append(untagged, p)
			untaggedAt = i
			continue
		}
		zeroTaken = zeroTaken || id == 0
	}
	switch {
	case len(untagged) > 1:
		return nil, idErrorf("Cannot infer code object IDs for multiple unnamed inputs: %s", strings.Join(untagged, ", "))
	case len(untagged) == 1 && zeroTaken:
		return nil, idErrorf("Cannot assign code object id 0 to %s: another input already uses id 0.", untagged[0])
	case len(untagged) == 1:
		out[untaggedAt].ID = 0
	}
	return out, nil
}

// CheckIDs returns an error if two inputs share an id (§3.1 wording),
// unless both are placed: placed objects may share one (Build checks that
// their addresses do not overlap).
func CheckIDs(in []Input) error {
	first := map[uint64]Input{}
	for _, x := range in {
		p, dup := first[x.ID]
		if !dup {
			first[x.ID] = x
		} else if !p.Placed || !x.Placed {
			return idErrorf("Code object id %d is used by both %s and %s.", x.ID, p.Path, x.Path)
		}
	}
	if len(in) == 0 {
		return idErrorf("No code objects were provided.")
	}
	return nil
}

// An IDError is a problem with the code object ids of the inputs. Its text
// is upstream's message, word for word (python-layer §3.1), capital letter
// and final period included.
type IDError struct{ Msg string }

func (e *IDError) Error() string { return e.Msg }

func idErrorf(format string, args ...any) error {
	return &IDError{Msg: fmt.Sprintf(format, args...)}
}

// A PlacementError is a placed input that does not fit: beyond the 64-bit
// address space, or overlapping another placed input of its code object id.
// It is a usage error (exit code 2).
type PlacementError struct{ Msg string }

func (e *PlacementError) Error() string { return e.Msg }

// ExitCode implements exitcode.Coder.
func (e *PlacementError) ExitCode() int { return exitcode.Usage }

// ParseInputArg reads a --code-object argument, ID=PATH or ID=PATH@ADDR:
// a decimal id, and a load address in Go's integer syntax (0x… hex, or
// decimal). The text after PATH's last '@' is the address only if it is a
// number, so "k@v2.hsaco" is a path.
func ParseInputArg(arg string) (Input, error) {
	id, path, ok := strings.Cut(arg, "=")
	n, err := strconv.ParseUint(strings.TrimSpace(id), 10, 64)
	if !ok || err != nil || path == "" {
		return Input{}, fmt.Errorf("--code-object %q: want ID=PATH or ID=PATH@ADDR with a decimal id", arg)
	}
	in := Input{ID: n, Path: path}
	if at := strings.LastIndexByte(path, '@'); at >= 0 {
		if addr, err := strconv.ParseUint(path[at+1:], 0, 64); err == nil {
			if at == 0 {
				return Input{}, fmt.Errorf("--code-object %q: no PATH before @ADDR", arg)
			}
			in.Path, in.Load, in.Placed = path[:at], addr, true
		}
	}
	return in, nil
}
