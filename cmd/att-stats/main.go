// Command att-stats folds decoded waves into per-instruction statistics:
// for every program counter the hit count and the latency, stall and idle
// cycles (python-layer §4.1), the hotspot table a kernel developer reads
// first.
//
// Usage:
//
//	att-stats [--index FILE] [--format csv|code.json|json|pprof|hidden.csv|top|histogram|histogram.json]
//	          [--kernel GLOB]… [--dispatch N]… [--wave slowest|fastest|ID]
//	          [--by pc|line|function|kernel] [-n N] [-o FILE] [--expect CONTROL.csv]… [--run N | --merge-runs]
//	          [--jq FILTER] [--csv-only] [--progress] [STREAM…]
//	att-stats --diff [--index FILE] [--run N | --merge-runs] [--jq FILTER]
//	          [-o FILE] BEFORE AFTER
//
// STREAMs are record streams from att-decode: files, or "-" / none for
// standard input; concatenated streams are fine, each part keeps the run of
// its header. Their JSON projection (att-decode --format json, or jq's
// output on it; docs/wire.md §2) reads as well. --index gives the code metadata (an index stream from
// co-index, or a code.json): ISA text, source lines, labels and line
// numbers. Without it every traced PC gets a row with empty text. The
// counters of a code.json given as --index are not carried over: every run
// starts from zero, as upstream's att_tool does.
//
// Formats:
//
//	csv        the stats CSV of rocprof-trace-decoder (CodeObj, Vaddr,
//	           Instruction, Hitcount, Latency, Stall, Idle, Source; CRLF)
//	code.json  the viewer's code.json with the counters filled in
//	json       one JSON object per PC a line, for jq
//	pprof      a gzipped pprof profile: sample types hits, latency (the
//	           default), stall, idle, exposed and hidden; kernels are
//	           functions (their symbol, at their source file and line),
//	           each PC a location at its address and source line inside
//	           its kernel, inlined source chains inline frames (the
//	           functions of co-index's inline chains: "mix" inlined in
//	           the kernel); sample labels codeobj, vaddr and
//	           instruction (the ISA text)
//	hidden.csv the hidden latency per PC (python-layer §8) in upstream's
//	           control layout: CodeObj, Vaddr, Instruction, Latency,
//	           HiddenIdle, HiddenStall, HiddenIssue; rows of the PCs with
//	           hidden cycles, in the stats CSV's order and bytes
//	top        text for a terminal: the PCs ranked by exposed cycles, then
//	           total cycles, then hits (§8.1), -n of them (default 30, 0
//	           for all), with instruction text and source line
//	histogram  text for people: per kernel, the distribution of its wave
//	           durations (end_time - begin_time, cycles) in quarter-octave
//	           bins ([64, 80) [80, 96) …, exact counts), with min, mean,
//	           max and the IDs of its slowest and fastest wave
//	histogram.json
//	           the same for scripts: one JSON object per kernel a line,
//	           {kernel, waves, negative, min, max, mean, slowest, fastest,
//	           bins: [{lo, hi, count}]} (internal/waveselect.Histogram)
//
// --by line|function|kernel sums the counters (Hitcount, Latency, Stall,
// Idle; HiddenIdle, HiddenStall, HiddenIssue as in hidden.csv; Hidden and
// Exposed as in top), exactly, per source line (a Source column, the
// instruction's own file:line: an inlined helper's line sums over its call
// sites), per function (the innermost function of the index's inline
// chain, else the kernel) or per kernel (CodeObj, Kernel), with a PCs
// column counting the PCs summed; as CSV, or JSON lines with --format
// json. A PC without a source line, function or kernel is summed in the
// row whose key is empty, last. --by pc (the default) writes the formats
// below unchanged. internal/rollup documents the keys.
//
// Hidden latency is the part of an instruction's cycles during which
// other instruction pipes of the same SIMD were busy (§8.2). Per PC,
// total = latency + idle, hidden = hidden stall + hidden issue + the
// hidden idle bounded by the idle, and exposed = total - hidden: the
// cycles a kernel developer can still win back at that line. Each input
// part (one shader engine's trace) is its own scope; matrix instructions
// are told by their index text (v_mfma, v_smfma, v_wmma, v_swmma). The
// analysis spools about 8 bytes per instruction to a temporary file, then
// takes one SIMD at a time per CPU: it reads that SIMD's instructions back,
// builds its busy intervals in memory and computes their hidden cycles.
//
// With the pprof format, go tool pprof -top lists the kernels, -top
// -addresses the hottest instructions, -list KERNEL the source lines with
// their cycles (run it where the index's source paths resolve, or use
// -source_path), -peek KERNEL its inlined helpers, -traces every
// instruction with its text, and -sample_index=exposed|hidden|stall|idle|hits
// switches the counter; -diff_base=BEFORE.pb.gz compares two captures per
// kernel and per line.
//
// --diff BEFORE AFTER compares two captures, each a stats CSV, a code.json
// with counters or a record-stream file (folded with --index, --run,
// --merge-runs and --jq as without --diff): a text report of the PCs whose
// hits, latency, stall, idle or exposed cycles changed (after - before),
// largest change first, then the same by source line. PCs are matched by
// (code object, address) when their instruction texts agree, otherwise
// (another build, or the kernel loaded as another code object) by source
// line and instruction text. Exposed cycles need the waves, so they show
// only when both sides are record streams ("-" otherwise).
//
// The unresolved PC (0, 0) has no counters (python-layer §4.1), but
// upstream's viewer wave files ask for its line number, which gives it a
// row: "0,0,,0,0,0,0," in the stats CSV (first of the PCs the index lacks,
// so last when the index has every other PC; late code-object loads make
// such instructions) and one in code.json (§4.4, §5.6). att-stats writes
// that row as upstream's default json,csv run does: once a folded wave
// holds an unresolved instruction. --csv-only leaves it out, as
// att_tool.py --formats csv, which writes no wave files, does.
//
// Runs are kept apart: an input holding several runs needs --run N (fold
// that run only) or --merge-runs (fold them together).
//
// --progress (the default when stderr is a terminal) reports the waves and
// instructions read and ends with a summary on stderr.
//
// --jq FILTER folds only the wave records the jq program accepts (on the
// JSON projection of att-decode --format json: type "wave", se, run, cu,
// simd, wave_id, begin_time, end_time, instructions, …), e.g. '.simd == 0'
// or '.begin_time >= 1000000'.
//
// --kernel GLOB, --dispatch N and --wave slowest|fastest|ID fold only some
// waves (internal/waveselect; every other record is read as without
// them). A wave belongs to the kernel whose index range holds its first
// PC (else to its dispatch's kernel; kernels the index does not name are
// "<code object> / 0x<address>") and to dispatch N, the Nth DISPATCH
// record (from 0) of its trace on the wave's queue, at or before the
// wave's begin. A --kernel or --dispatch that matches no wave is an error
// (exit 1) naming the kernels and dispatches present. --wave keeps one
// wave, after the other selections and --jq: the slowest or fastest by
// end_time - begin_time (ties to the first in stream order; the input is
// read twice, standard input through a temporary copy that nothing can
// outlive), or the wave of an ID se<SE>.cu<CU>.simd<SIMD>.slot<SLOT>@<BEGIN>
// (--format histogram names the slowest and fastest wave of each kernel,
// att-timeline shows every wave's ID); --progress names the wave chosen.
//
// --expect compares the counters with control CSVs (stats-CSV form; rows
// of a PC add up over all files) as validate_expected does, prints each
// mismatching PC on stderr and exits 1 if there is any. With --expect and
// neither --format nor -o, no statistics are written.
//
// When an index is given but some executed PCs are not in it, att-stats
// warns and still writes them (rows without text, line numbers after the
// index's). When none of the executed PCs is in the index, the index
// belongs to other code objects: att-stats fails (exit 1) and writes
// nothing.
//
// Exit status: 0 ok; 1 bad or truncated input, mismatch with the control,
// index that matches nothing; 2 usage (including several runs without --run
// or --merge-runs); 3 input that is not a record stream, or an unsupported
// version; 128+signal when SIGINT, SIGTERM, SIGHUP or SIGQUIT ended it
// (130, 143, 129, 131), FILE as it was and no spool left.
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
