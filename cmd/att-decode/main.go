// Command att-decode decodes one shader engine's thread trace (.att) into
// the attkit record stream: a header, then the decoder's record batches in
// its callback order.
//
// Usage:
//
//	att-decode [flags] TRACE.att|-
//
// The instruction text the decoder needs comes from an index (--index, an
// index stream from co-index or a code.json). Two decoders are built in:
// the native Go decoder (gfx9: MI200, MI300, MI350; gfx10, gfx11, gfx12:
// RDNA2 to RDNA4) and AMD's rocprof-trace-decoder library, loaded at run
// time. --backend auto (the
// default) uses the library when it is found and the native decoder
// otherwise; the stream header records which one ran. --code-object
// ID=PATH@ADDR hands code objects to the library's built-in disassembler
// instead of an index (rocm only).
//
// The shader engine and run recorded in the header come from the file name
// (rocprofv3's ..._shader_engine_<SE>_<RUN>.att) unless --se and --run are
// given; other names get SE 0, run 1.
//
// Output is msgpack (the record stream att-stats and att-rcv read) or, with
// --format json, one JSON object per record per line. --jq FILTER runs a jq
// program on each record's JSON projection: JSON output prints its results
// as `jq -c` does; msgpack output keeps the records it accepts.
//
// The native decoder delivers occupancy, perf-counter and realtime records
// in batches of at most 65536, so that its memory does not grow with the
// trace; the library pools them to the end of the trace.
// --whole-batches makes the native decoder do the same. The native decoder
// follows the newest library; --compat 0.1.6 makes its gfx9 records exactly
// those of AMD's 0.1.6 build (the one ROCm 7.x ships), for comparisons.
//
// The native decoder runs on two cores when the machine has them
// (GOMAXPROCS; -j 0, the default): the token reading and the waves' state
// on one, the stitching, the record building, the checks, encoding and
// writing on the other, handing finished waves over in bounded chunks;
// the output is the same byte for byte. -j 1 decodes on one core.
//
// Decoder warnings (data lost, stitch incomplete, wave incomplete) are
// records and also printed on stderr as "att-decode: warning: TRACE: TEXT"
// unless --quiet, and so is a trace holding less than one 32-byte block
// after its 8-byte header ("truncated trace") and one cut short, inside a
// token or with waves still running ("cut trace", with the number of
// waves and whether its size is that of a full buffer; spec 1.7).
//
// A trace of another GPU generation than every code object of the index
// (a gfx9 trace, a gfx1100 index) is an error unless --any-arch.
//
// Exit status: 0 ok; 1 decoding failed (malformed trace data, I/O); 2 usage;
// 3 not a trace, a valid header followed by data that is no token stream
// (either backend; spec 1.6), an architecture the chosen backend does not decode
// (MI400 traces need --backend rocm), or one the index's code objects are
// not for; 4 the ROCm library is
// missing with --backend rocm; 128+signal when SIGINT, SIGTERM, SIGHUP or
// SIGQUIT ended it (130, 143, 129, 131), FILE as it was.
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
