package codeobj

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"sort"

	"github.com/attkit/attkit/internal/exitcode"
)

// emAMDGPU is the ELF machine number of AMD GPUs (EM_AMDGPU).
const emAMDGPU = elf.Machine(224)

// efAMDGPUMach masks the processor (EF_AMDGPU_MACH) in e_flags.
const efAMDGPUMach = 0xff

// machNames maps EF_AMDGPU_MACH values to processor names (LLVM's
// BinaryFormat/ELF.h and AMDGPUUsage).
var machNames = map[uint32]string{
	0x020: "gfx600", 0x021: "gfx601", 0x022: "gfx700", 0x023: "gfx701",
	0x024: "gfx702", 0x025: "gfx703", 0x026: "gfx704", 0x028: "gfx801",
	0x029: "gfx802", 0x02a: "gfx803", 0x02b: "gfx810", 0x02c: "gfx900",
	0x02d: "gfx902", 0x02e: "gfx904", 0x02f: "gfx906", 0x030: "gfx908",
	0x031: "gfx909", 0x032: "gfx90c", 0x033: "gfx1010", 0x034: "gfx1011",
	0x035: "gfx1012", 0x036: "gfx1030", 0x037: "gfx1031", 0x038: "gfx1032",
	0x039: "gfx1033", 0x03a: "gfx602", 0x03b: "gfx705", 0x03c: "gfx805",
	0x03d: "gfx1035", 0x03e: "gfx1034", 0x03f: "gfx90a", 0x040: "gfx940",
	0x041: "gfx1100", 0x042: "gfx1013", 0x043: "gfx1150", 0x044: "gfx1103",
	0x045: "gfx1036", 0x046: "gfx1101", 0x047: "gfx1102", 0x048: "gfx1200",
	0x04a: "gfx1151", 0x04b: "gfx941", 0x04c: "gfx942", 0x04e: "gfx1201",
	0x04f: "gfx950", 0x051: "gfx9-generic", 0x052: "gfx10-1-generic",
	0x053: "gfx10-3-generic", 0x054: "gfx11-generic", 0x055: "gfx1152",
	0x058: "gfx1153", 0x059: "gfx12-generic",
}

// TargetName returns the processor name (gfx942, ...) that the EF_AMDGPU_MACH
// bits of an AMDGPU ELF header's e_flags select, or "" when unknown.
func TargetName(flags uint32) string {
	return machNames[flags&efAMDGPUMach]
}

// A FormatError reports a file that is not an AMDGPU code object: not an
// ELF file, an ELF file of another machine, or an ELF file too damaged to
// read. Its exit code is 3 (exitcode.Format).
type FormatError struct {
	Path string
	Msg  string
	Err  error
}

func (e *FormatError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Path, e.Msg, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Path, e.Msg)
}

func (e *FormatError) Unwrap() error { return e.Err }

// ExitCode implements exitcode.Coder.
func (e *FormatError) ExitCode() int { return exitcode.Format }

// An Object is what co-index reads from one code object without running a
// disassembler: its target, load ranges, symbol labels, source line ranges
// and funcmap section.
type Object struct {
	Path   string // as given to Parse
	Type   elf.Type
	Target string // "gfx942"; "" when the e_flags name no known processor
	Flags  uint32
	Ranges []Range // loadable segments, or allocated sections of a relocatable object
	// HasCode tells that an executable section holds bytes.
	HasCode bool

	Labels Labels

	// Lines maps instruction addresses to source text (§3.5). Empty when
	// the object has no DWARF.
	Lines *LineTable

	// Funcmap is the raw .sqtt_funcmap section, nil when absent.
	Funcmap []byte
}

// A Range is a half-open address range [Begin, End).
type Range struct{ Begin, End uint64 }

// ReadFile reads and parses the code object at path.
func ReadFile(path string) (*Object, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(data, path)
}

// Parse parses an AMDGPU code object held in data; name is used in errors.
// Files that are not ELF, not AMDGPU or too damaged to read fail with a
// *FormatError. An object whose DWARF cannot be read (debug/elf cannot
// relocate it, for instance a relocatable .o with .rela.debug_* sections)
// fails with an error naming the file; an object without DWARF parses with
// an empty line table.
func Parse(data []byte, name string) (obj *Object, err error) {
	if len(data) < 4 || !bytes.Equal(data[:4], []byte(elf.ELFMAG)) {
		return nil, &FormatError{Path: name, Msg: "not an ELF code object"}
	}
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return nil, &FormatError{Path: name, Msg: "unreadable ELF file", Err: err}
	}
	if f.Machine != emAMDGPU {
		return nil, &FormatError{Path: name, Msg: fmt.Sprintf("not an AMDGPU code object (ELF machine %v)", f.Machine)}
	}
	if f.Class != elf.ELFCLASS64 {
		return nil, &FormatError{Path: name, Msg: fmt.Sprintf("not an AMDGPU code object (%v)", f.Class)}
	}
	// debug/elf does not expose e_flags; in ELF64 it sits at offset 48.
	flags := f.ByteOrder.Uint32(data[48:52])
	obj = &Object{Path: name, Type: f.Type, Flags: flags, Target: TargetName(flags)}
	obj.Ranges = loadRanges(f)
	for _, s := range f.Sections {
		if s.Flags&elf.SHF_EXECINSTR != 0 && s.Type == elf.SHT_PROGBITS && s.Size > 0 {
			obj.HasCode = true
		}
	}
	if obj.Labels, err = readLabels(f); err != nil {
		return nil, &FormatError{Path: name, Msg: "reading symbols", Err: err}
	}
	if s := f.Section(".sqtt_funcmap"); s != nil && s.Type != elf.SHT_NOBITS {
		// A read error means "no funcmap" (§3.6).
		if b, err := s.Data(); err == nil {
			obj.Funcmap = b
		}
	}
	obj.Lines, err = readLines(f)
	if err != nil {
		return nil, fmt.Errorf("%s: reading DWARF: %w", name, err)
	}
	return obj, nil
}

func loadRanges(f *elf.File) []Range {
	var rs []Range
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Memsz > 0 && p.Vaddr+p.Memsz > p.Vaddr {
			rs = append(rs, Range{p.Vaddr, p.Vaddr + p.Memsz})
		}
	}
	if len(rs) == 0 {
		for _, s := range f.Sections {
			if s.Flags&elf.SHF_ALLOC != 0 && s.Size > 0 && s.Addr+s.Size > s.Addr {
				rs = append(rs, Range{s.Addr, s.Addr + s.Size})
			}
		}
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].Begin < rs[j].Begin })
	return rs
}

// errNoDWARF tells readLines' callers that there is nothing to map.
var errNoDWARF = errors.New("no DWARF")
