// Command att-report writes one self-contained HTML page about a thread
// trace: per kernel its summary, the ISA listing beside the source with
// bars for latency, stall, idle and exposed cycles, the occupancy of each
// shader engine over time, the wave-duration histogram and the hottest
// instructions.
//
// Usage:
//
//	att-report [--index FILE] [-o FILE] [--title TEXT] [--source-dir DIR]…
//	           [--run N | --merge-runs] [--kernel GLOB]… [--dispatch N]…
//	           [--wave slowest|fastest|ID] [--jq FILTER] [--any-arch]
//	           [--progress] [STREAM…]
//
// STREAMs are record streams from att-decode (or their JSON projection):
// files, or "-" / none for standard input, as att-stats reads them; each
// part (one shader engine's trace) keeps the run and shader engine of its
// header. --index gives the code metadata (co-index's index stream or a
// code.json): the ISA text, source lines and kernels (function labels). An
// input holding several runs needs --run N or --merge-runs. --kernel,
// --dispatch and --wave select waves as in att-stats (internal/waveselect;
// --wave slowest or fastest reads the inputs twice, standard input through
// an unlinked temporary copy); --jq filters the wave records after them.
// Records of another architecture than the index's code objects exit 3
// unless --any-arch.
//
// What flows in and out: the records are folded as they are read, per PC
// (internal/fold: hits, latency, stall, idle), per PC hidden and exposed
// cycles (internal/hidden, python-layer §8, as att-stats --format top),
// summed per kernel and per source line as att-stats --by kernel and --by
// line sum them (internal/rollup; a line is a PC's own line, the first
// file:line of its source chain), per kernel its waves' durations
// (waveselect's histogram), per shader engine its waves in flight over
// time (from the occupancy records, or from the waves' begin
// and end times when a part has none). Memory grows with the number of
// PCs of the index, not with the length of the trace. The page is written
// to -o FILE (through a temporary sibling renamed into place; an
// interrupt leaves what was there) or to standard output.
//
// The page: its data is one JSON document inside a
// <script type="application/json"> element (every "<", ">" and "&" of it
// escaped as \u003c, \u003e and \u0026, so no text of the trace can close
// the element), drawn by the page's own script and style sheet, both
// inline. It makes no network request, loads no font, script or image and
// needs no server: open the file in a browser. Per kernel it shows:
//
//   - the summary: waves, instructions executed, wave cycles (the sum of
//     end - begin), latency, stall, idle, hidden and exposed cycles;
//   - the source (files found at their index path, relative to the working
//     directory, or under a --source-dir) with per-line bars, beside the
//     ISA listing with per-instruction bars; a click on a column head sorts
//     by it, a click on a source line shows its instructions, hovering an
//     instruction shows its inline chain (innermost first);
//   - the wave-duration histogram (four bins per power of two);
//   - the hottest instructions by exposed cycles.
//
// Below, a chart per shader engine of the waves in flight over time
// (average per time bin, 1024 bins at most), drawn on a canvas.
//
// Large listings: the ISA listing and the source lines are virtual
// lists: only the rows in view (about a screenful) are in the page's DOM,
// rebuilt on scroll, so a kernel of 100,000 instructions or more scrolls
// and sorts as one of 100; the histogram and the occupancy charts are
// drawn on canvases of fixed size.
//
// Exit status: 0 ok; 1 bad or truncated input, an index that matches none
// of the traced PCs; 2 usage (several runs without --run or --merge-runs);
// 3 an input that is not a record stream, or an unsupported version;
// 128+signal when SIGINT, SIGTERM, SIGHUP or SIGQUIT ended it (130, 143,
// 129, 131), FILE as it was.
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
