// Package codeobj reads AMDGPU code objects (.hsaco, .co, .out: ELF with
// DWARF) into an attkit index, as upstream's codegen.py does (spec:
// python-layer.md §3): the target from the ELF header flags, function and
// debug labels from the symbol tables, the disassembly of a real
// llvm-objdump with branch operands normalised, each instruction's source
// line with its inlined call chain from DWARF, and the .sqtt_funcmap marker
// metadata. Build assembles these into a *wire.Index; the wire package
// writes it as an index stream or code.json, and WriteJSON writes the JSON
// lines projection (format in jsonl.go).
//
// Disassembly is the one slow part and runs as external processes, one per
// code object, in parallel. The ELF, DWARF, objdump-output and funcmap
// readers never panic on bad input; they are fuzzed.
package codeobj
