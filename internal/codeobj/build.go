package codeobj

import (
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/attkit/attkit/internal/wire"
)

// Options tune Build.
type Options struct {
	// Objdump runs the disassembler; nil means a zero Objdump (search the
	// environment).
	Objdump *Objdump
	// Producer names the tool in the index header ("co-index <version>").
	Producer string
	// Parallel bounds the objects read at once (default GOMAXPROCS).
	Parallel int
}

// Normalize prepares inputs as python-layer §3.1 says, in input order:
// "~" expanded, path made absolute with symlinks resolved (an input with
// Data keeps its name); a path that is not a regular file fails (wrapping fs.ErrNotExist), a file that does not
// start with the ELF magic fails with a *FormatError, and an id used twice
// fails.
func Normalize(in []Input) ([]Input, error) {
	if len(in) == 0 {
		return nil, idErrorf("No code objects were provided.")
	}
	out := make([]Input, len(in))
	for i, x := range in {
		if x.Data != nil {
			if !bytes.HasPrefix(x.Data, []byte(elf.ELFMAG)) {
				return nil, &FormatError{Path: x.Path, Msg: "not an ELF code object"}
			}
			out[i] = x
			continue
		}
		p := x.Path
		if p == "~" || strings.HasPrefix(p, "~/") {
			if home, err := os.UserHomeDir(); err == nil {
				p = home + p[1:]
			}
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", x.Path, err)
		}
		if r, err := filepath.EvalSymlinks(abs); err == nil {
			abs = r
		}
		st, err := os.Stat(abs)
		if err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return nil, fmt.Errorf("%s: %w", x.Path, err)
		}
		if !st.Mode().IsRegular() {
			return nil, fmt.Errorf("%s: not a regular file", x.Path)
		}
		if err := checkMagic(abs); err != nil {
			return nil, err
		}
		out[i] = Input{ID: x.ID, Path: abs, Load: x.Load, Placed: x.Placed}
	}
	if err := CheckIDs(out); err != nil {
		return nil, err
	}
	return out, nil
}

func checkMagic(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var b [4]byte
	if n, _ := f.Read(b[:]); n < 4 || string(b[:]) != "\x7fELF" {
		return &FormatError{Path: path, Msg: "not an ELF code object"}
	}
	return nil
}

// perObject is what Build gathers for one input.
type perObject struct {
	in    Input
	obj   *Object
	insts []Inst
	tool  Tool
	err   error
}

// Build indexes the code objects (already normalised, see Normalize) into
// a fresh index: rows in input order with line numbers shared by all
// objects (python-layer §3.7), kernels, funcmap tables, objects with their
// targets and load ranges, and the document metadata of a generated
// code.json. It fails on the first object that cannot be read or
// disassembled, returning no partial index.
func Build(ctx context.Context, inputs []Input, opt Options) (*wire.Index, error) {
	od := opt.Objdump
	if od == nil {
		od = &Objdump{}
	}
	par := opt.Parallel
	if par <= 0 {
		par = runtime.GOMAXPROCS(0)
	}
	objs := make([]perObject, len(inputs))
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for i := range inputs {
		objs[i].in = inputs[i]
		wg.Add(1)
		go func(p *perObject) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			if ctx.Err() != nil {
				p.err = ctx.Err()
				return
			}
			if p.in.Data != nil {
				p.obj, p.err = Parse(p.in.Data, p.in.Path)
			} else {
				p.obj, p.err = ReadFile(p.in.Path)
			}
			if p.err == nil {
				p.insts, p.tool, p.err = od.disassemble(ctx, p.in.Path, p.in.Data, p.obj.Target, p.obj.HasCode)
			}
			if p.err != nil {
				cancel()
			}
		}(&objs[i])
	}
	wg.Wait()
	// Report the first failing object in input order (a cancelled one
	// only failed because an earlier one did).
	var firstErr error
	for i := range objs {
		if err := objs[i].err; err != nil && !errors.Is(err, context.Canceled) {
			return nil, err
		} else if err != nil && firstErr == nil {
			firstErr = err
		}
	}
	if firstErr != nil {
		return nil, firstErr
	}
	if err := checkPlaced(objs); err != nil {
		return nil, err
	}

	ix := &wire.Index{}
	ix.Header.Producer = opt.Producer
	ix.Doc.Version = wire.CodeVersion
	var tools []string
	line := int64(1)
	for i := range objs {
		p := &objs[i]
		if s := p.tool.String(); s != "" && !contains(tools, s) {
			tools = append(tools, s)
		}
		ix.Doc.Hsaco = append(ix.Doc.Hsaco, p.in.Path)
		co := wire.CodeObject{ID: p.in.ID, Path: p.in.Path, Target: p.obj.Target}
		for _, r := range p.obj.Ranges {
			co.Ranges = append(co.Ranges, wire.LoadRange{Begin: p.in.Load + r.Begin, End: p.in.Load + r.End})
		}
		ix.Objects = append(ix.Objects, co)
		line = appendRows(ix, p, line)
		appendKernels(ix, p)
		appendFuncmap(ix, p)
	}
	ix.Header.Objdump = strings.Join(tools, "; ")
	return ix, nil
}

// checkPlaced checks that every placed object fits below 2^64 and that
// placed objects sharing a code object id do not overlap.
func checkPlaced(objs []perObject) error {
	type span struct {
		lo, hi uint64
		path   string
	}
	byID := map[uint64][]span{}
	for i := range objs {
		p := &objs[i]
		if !p.in.Placed {
			continue
		}
		lo, hi := ^uint64(0), uint64(0)
		for _, r := range p.obj.Ranges {
			lo, hi = min(lo, r.Begin), max(hi, r.End)
		}
		for _, in := range p.insts {
			lo, hi = min(lo, in.Addr), max(hi, in.Addr+max(in.Size, 1))
		}
		for a := range p.obj.Labels.Func {
			lo, hi = min(lo, a), max(hi, a+1)
		}
		if hi <= lo {
			continue // nothing loaded
		}
		if p.in.Load+hi < p.in.Load {
			return &PlacementError{fmt.Sprintf("%s: loaded at %#x, its last byte (vaddr %#x) is beyond the 64-bit address space",
				p.in.Path, p.in.Load, hi-1)}
		}
		s := span{p.in.Load + lo, p.in.Load + hi, p.in.Path}
		for _, o := range byID[p.in.ID] {
			if s.lo < o.hi && o.lo < s.hi {
				return &PlacementError{fmt.Sprintf("code object id %d: %s at [%#x, %#x) overlaps %s at [%#x, %#x)",
					p.in.ID, s.path, s.lo, s.hi, o.path, o.lo, o.hi)}
			}
		}
		byID[p.in.ID] = append(byID[p.in.ID], s)
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func appendRows(ix *wire.Index, p *perObject, line int64) int64 {
	labels := &p.obj.Labels
	if cap(ix.Rows)-len(ix.Rows) < len(p.insts) {
		rows := make([]wire.Row, len(ix.Rows), len(ix.Rows)+len(p.insts)+len(labels.Func)+8)
		copy(rows, ix.Rows)
		ix.Rows = rows
	}
	id, load := p.in.ID, p.in.Load
	for i := range p.insts {
		in := &p.insts[i]
		if name, ok := labels.Func[in.Addr]; ok {
			ix.Rows = append(ix.Rows, wire.Row{Kind: wire.RowFunction, CodeObj: id, Vaddr: load + in.Addr,
				Text: LabelText(name), Source: name, Line: line})
			line++
		}
		for _, name := range labels.Debug[in.Addr] {
			ix.Rows = append(ix.Rows, wire.Row{Kind: wire.RowLabel, CodeObj: id, Vaddr: load + in.Addr,
				Text: LabelText(name), Line: line})
			line++
		}
		ix.Rows = append(ix.Rows, wire.Row{Kind: wire.RowInstruction, CodeObj: id, Vaddr: load + in.Addr,
			Size: in.Size, Text: in.Text, Source: p.obj.Lines.Lookup(in.Addr), Line: line,
			Inline: p.obj.Lines.LookupInline(in.Addr)})
		line++
	}
	return line
}

func appendKernels(ix *wire.Index, p *perObject) {
	addrs := make([]uint64, 0, len(p.obj.Labels.Func))
	for a := range p.obj.Labels.Func {
		addrs = append(addrs, a)
	}
	sort.Slice(addrs, func(i, j int) bool { return addrs[i] < addrs[j] })
	for _, a := range addrs {
		n := p.obj.Labels.Func[a]
		ix.Kernels = append(ix.Kernels, wire.Kernel{Address: p.in.Load + a, CodeObj: p.in.ID, Name: n, Demangled: n})
	}
}

func appendFuncmap(ix *wire.Index, p *perObject) {
	if p.obj.Funcmap == nil {
		return
	}
	m := ParseFuncmap(p.obj.Funcmap)
	if !m.Packed() {
		return
	}
	id := p.in.ID
	for _, e := range m.Entries {
		var vaddr uint64
		if v, ok := p.obj.Labels.FuncMin[e.Name]; ok && (e.Kind == 'F' || e.Kind == 'K') {
			vaddr = p.in.Load + v
		}
		ix.Funcmap = append(ix.Funcmap, wire.FuncmapEntry{CodeObj: id, MarkerID: uint64(e.MarkerID),
			Kind: string(e.Kind), Name: e.Name, Source: e.Source, Vaddr: vaddr})
	}
	ix.FuncmapLayout = append(ix.FuncmapLayout, wire.FuncmapLayout{CodeObj: id, Bits: m.Bits, Shift: m.Shift})
	for _, e := range m.Entries {
		if e.Kind != 'K' && m.Payloads[e.MarkerID] != 0 {
			ix.FuncmapPayloads = append(ix.FuncmapPayloads, wire.FuncmapPayload{CodeObj: id,
				MarkerID: uint64(e.MarkerID), Count: m.Payloads[e.MarkerID]})
		}
	}
}
