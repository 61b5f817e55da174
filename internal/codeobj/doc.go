// Package codeobj reads AMDGPU code objects (.hsaco, .co, .out: ELF with
// DWARF) into an attkit index, as upstream's codegen.py does (spec:
// python-layer.md §3): the target from the ELF header flags, function and
// debug labels from the symbol tables, the disassembly of a real
// llvm-objdump with branch operands normalised, each instruction's source
// line with its inlined call chain from DWARF, and the .sqtt_funcmap marker
// metadata. Build assembles these into a *wire.Index; the wire package
// writes it as an index stream or code.json, and WriteJSON writes the JSON
// lines projection described below.
//
// Disassembly is the one slow part and runs as external processes, one per
// code object, in parallel. The ELF, DWARF, objdump-output and funcmap
// readers never panic on bad input; they are fuzzed.
//
// # JSON lines
//
// The JSON lines projection of an index (co-index --format json) writes
// one JSON object per line, each with a "type" member:
//
//	{"type":"header","format":"attkit-index","major":1,"minor":1,"producer":"co-index …","objdump":"/usr/bin/llvm-objdump-19 (…)"}
//	{"type":"object","id":1,"path":"/abs/k.hsaco","target":"gfx942","ranges":[[0,3264],[7680,8960]]}
//	{"type":"row","kind":"function","codeobj":1,"vaddr":7680,"size":0,"line":1,"text":"; _loop_sum","source":"loop_sum"}
//	{"type":"row","kind":"instruction","codeobj":1,"vaddr":7680,"size":8,"line":2,"text":"s_load_dwordx4 …","source":"k.cl:21","inline":[{"function":"loop_sum","file":"k.cl","line":21}]}
//	{"type":"row","kind":"instruction","codeobj":1,"vaddr":7720,"size":4,"line":7,"text":"v_xor_b32_e32 …","source":"h.h:8 -> k.cl:24","inline":[{"function":"mix","file":"h.h","line":8},{"function":"loop_sum","file":"k.cl","line":24}]}
//	{"type":"kernel","address":7680,"codeobj":1,"name":"loop_sum","demangled":"loop_sum"}
//	{"type":"funcmap","codeobj":1,"marker_id":7,"kind":"F","name":"scope","source":"x.cpp:1","vaddr":0}
//	{"type":"funcmap_layout","codeobj":1,"bits":12,"shift":4}
//	{"type":"funcmap_payload","codeobj":1,"marker_id":8,"count":1}
//
// Lines come in that order: the header, the objects, the rows in code
// order, the kernels, then the funcmap tables. Row kinds are
// "instruction", "function" (a function label; source holds its name) and
// "label" (a debug label). Rows carry "hit", "latency", "stall" and "idle"
// only when non-zero (never in a fresh index). An instruction row with a
// DWARF source line has "inline", its chain (wire.InlineFrame), innermost
// first: the function the code comes from at the instruction's line, then
// each function that inlined the one before at its call site, the kernel
// last; one frame per file:line of "source". jq users select rows with
// `select(.type=="row" and .kind=="instruction")`.
package codeobj
