// Command co-index indexes AMDGPU code objects (.hsaco, .co, .out: ELF with
// DWARF) for the other attkit tools: for every instruction its address,
// size, ISA text (branch operands normalised), source file:line with the
// inlined call chain (in the index and its JSON lines also as "inline"
// frames naming each function, innermost first; code.json's Source column
// stays upstream's), and the function and debug labels, in the order and
// numbering of the viewer's code.json (python-layer spec §3). It is the
// counterpart of upstream's codegen.py and generate_code.py.
//
// Usage:
//
//	co-index [--format msgpack|json|code.json] [-o FILE] [--snapshots DIR]
//	         [--objdump PATH] [--code-object ID=PATH[@ADDR]]… [CODEOBJ…]
//
// Each CODEOBJ gets the code object id its file name carries
// (…code_object_id_<N>…, or the integer after the last "_" of the stem; a
// single file without one gets 0); --code-object ID=PATH gives an id
// explicitly. "-" as CODEOBJ or PATH reads the code object from standard
// input; errors and the index call it "<stdin>". A directory CODEOBJ stands for the code objects in it (files
// ending in .hsaco, .co, .out or .o, sorted by name), such as a rocprofv3
// output directory. Objects are indexed in the order given: the CODEOBJ
// arguments, then the --code-object pairs. Two inputs with one id are an
// error, unless both are placed.
//
// --code-object ID=PATH@ADDR places the object at the load address ADDR
// (0x… hex or decimal): every address in the index (instructions, labels,
// kernels, load ranges, funcmap) is ADDR + its ELF vaddr. This indexes a
// capture without code-object load records, as runtimes other than
// rocprofv3 record them: the decoders then report absolute PCs in code
// object 0, so give such objects id 0, each at its own load address
// (placed objects may share an id when their addresses do not overlap):
//
//	co-index -o k.idx --code-object 0=k.hsaco@0x7f3a00001000
//	att-decode --index k.idx -o se0.rec se0.att
//
// --format msgpack (the default) writes the index stream (docs/wire.md)
// that att-decode, att-stats and att-rcv read with --index; json writes the
// same index as JSON lines, one object per line with a "type" member
// (header, object, row, kernel, funcmap…; see internal/codeobj); code.json
// writes the viewer's code.json with zero counters. -o writes FILE
// atomically instead of standard output. --snapshots DIR copies the source
// files the rows name into DIR as source_<i>_<name> with snapshots.json.
//
// Disassembly runs llvm-objdump: --objdump PATH, else $LLVM_OBJDUMP, else
// the first that can disassemble the object's target among
// $ROCM_HOME/$ROCM_PATH, TheRock and /opt/rocm installs (llvm/bin, bin),
// then llvm-objdump-19, -18, -17 (then -20…-22) and llvm-objdump on PATH.
// LLVM 19 cannot disassemble gfx950 (MI350), so its objects go to the
// newer ones (scripts/install-deps installs llvm-22). The tool used is
// named in the index header.
//
// Exit status: 0 ok; 1 failure (missing file, no usable llvm-objdump,
// unreadable DWARF); 2 usage (bad flags, ambiguous or duplicate ids);
// 3 not an ELF file or not an AMDGPU code object; 128+signal when SIGINT,
// SIGTERM, SIGHUP or SIGQUIT ended it (130, 143, 129, 131). Nothing is
// written on failure.
package main

import (
	"os"

	"github.com/attkit/attkit/internal/publish"
)

func main() {
	// An interrupt removes the temporary of -o: what was at FILE stays.
	publish.RemoveOnSignal()
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
