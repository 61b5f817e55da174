// Command att-timeline turns record streams into a trace in the Trace
// Event Format (the JSON that Perfetto's UI and trace processor, and
// Chrome's DevTools Performance panel, open), so that the waves of a
// capture can be looked at on a timeline.
//
// Usage:
//
//	att-timeline [-o FILE] [--index FILE] [--start T] [--end T] [--jq FILTER]
//	             [--no-instructions] [--max-size SIZE] [--kernel GLOB]…
//	             [--dispatch N]… [--wave slowest|fastest|ID] [STREAM…]
//
// Each STREAM is a record stream from att-decode, or its JSON projection
// (no STREAM, or "-", reads standard input). The trace goes to standard
// output, or to FILE (written whole or not at all).
//
// Layout: one process per shader engine ("SE<n>"); one thread (track) per
// wave slot, "CU<c> SIMD<s> slot<w>", holding a slice per wave and, nested
// in it, a slice per instruction (named by its category; args: PC,
// instruction text and source line from --index, stall and duration)
// with its stall as a nested "stall" slice. Instruction slices are cut at
// the next instruction's issue and at the wave's end so that they nest;
// the full duration is in the args. Occupancy is a counter track per CU
// ("CU<c> waves", waves resident); dispatches and events are instants on
// the shader engine's "dispatches and events" track; markers are scopes
// (enter/exit) or instants on the wave slot's "markers" track.
//
// Time is the shader clock: one trace microsecond is one cycle. --start
// and --end keep what lies in [T, T'] (slices cut to it); --jq keeps the
// records a jq program accepts (as att-decode --jq). --max-size bounds
// the output (default 256MB): once it is reached, instruction slices are
// dropped, then everything but the closing, and a warning says from which
// cycle on; --no-instructions leaves instruction slices out from the
// start.
//
// Every wave slice's args carry its ID ("id": se<SE>.cu<CU>.simd<SIMD>.
// slot<SLOT>@<BEGIN>), its kernel and its dispatch, and every dispatch
// instant its dispatch ID (the 0-based position of the DISPATCH record in
// its trace). --kernel GLOB, --dispatch N and --wave slowest|fastest|ID
// show only those waves, every other record as without them
// (internal/waveselect, as att-stats): a wave belongs to the kernel whose
// index range holds its first PC, else to its dispatch's; a selection
// that matches nothing is an error (exit 1) naming what is there. --wave
// keeps one wave, chosen after --kernel, --dispatch and --jq (before
// --start/--end): the slowest or fastest by end - begin (ties to the first
// in stream order; the input is read twice, standard input through a
// temporary copy that nothing can outlive) or the wave of an ID.
//
// SIGINT, SIGTERM, SIGHUP or SIGQUIT end it with 128+signal (130, 143,
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
