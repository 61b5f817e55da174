// Command att-info tells what a thread-trace capture holds, before any
// analysis: its folders, traces and code objects, taken as att-tool takes
// them (directories searched recursively, traces grouped by the
// <pid>_<agent> of their rocprofv3 names), each trace decoded once.
//
// Usage:
//
//	att-info [--format text|json] [flags] FILE|DIR…
//
// For each trace it tells the shader engine and run, the architecture, the
// size, whether the shader engine carried instruction tokens (only the
// shader engines whose target CU ran waves do; the others see occupancy
// and events only), the WAVE records and their instructions as the decoder
// delivers them, the waves the decoder reported incomplete, the kernels
// whose waves ran (by the index's kernel ranges, as --kernel selects
// them), the DISPATCH records, the first and last cycle of its records,
// whether data was lost, and the decoder's warnings. Then, per capture
// (per <pid>_<agent> group), a verdict: which shader engines and CUs were
// traced, whether the trace buffer probably filled (waves still open at
// the end of a trace of about its share of the configured buffer), whether
// code objects are missing (instructions at PCs outside every index range)
// and whether the code objects' architecture is the traces', each with the
// rocprofv3 option or att-tool form to try.
//
// --format text (the default) prints a short table per capture; --format
// json prints JSON lines: one {"type":"trace",…} object per trace, then
// one {"type":"capture",…} object per capture.
//
// Exit status: 0 when some trace holds an instruction to analyse, 1 when
// none does (no instruction in any trace, or only with code objects of
// another architecture) or on an error, 2 on bad usage, 3 when an input is
// not a trace (after the others are reported), 4 when --backend rocm finds
// no decoder library.
package main

import "os"

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
