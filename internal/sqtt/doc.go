// Package sqtt is attkit's native decoder of AMD thread traces (ATT/SQTT):
// it turns the bytes of one shader engine's .att file into the records AMD's
// rocprof-trace-decoder library delivers, in the library's callback order,
// without the library.
//
// The format and the algorithms follow the clean-room specification in
// docs/spec/sqtt-format.md (sections 1 to 4), taking the newest library
// behaviour where it differs from the 0.1.6 binary. It decodes gfx9 traces
// (MI100, MI200, MI300, MI350) and RDNA traces (gfx10, gfx11, gfx12: Radeon
// 6000, 7000, 9000); MI400 traces are recognised from their header and
// refused with an error that suggests the ROCm backend. Architecture-specific
// code lives in gfx9*.go and rdna*.go; the files without a prefix hold what
// all architectures share: header detection, the register and
// instrumentation state (2.1), the instruction cache and the steps of the
// stitch walk every family takes (3; each family's stitcher is in
// gfx9_stitch.go and rdna_stitch.go) and the record emitter (4).
//
// Decoder.Compat Lib016 makes the records of every family exactly those of
// AMD's 0.1.6 library build (the one ROCm 7.x ships): on the test vectors, the sample
// captures and generated traces up to 100 MB the record streams are
// byte-identical to the library's (TestCompat016MatchesLibrary runs the
// comparison where ROCPROF_TRACE_DECODER_LIB names the library). The
// differences it reproduces: the wave end (0.1.6 ends a gfx9 wave at the
// WAVE_END token and types the last segment IDLE; newest ends 4 cycles later
// in the current state, spec A.3 item 1); OTHER_MSG barrier messages dropped
// (A.3 item 2), although the dropped entry still sets where the next IMMED
// starts; the record layouts of spec §4.6 (no EVENT, DISPATCH or MARKER
// records, no dispatcher, workgroup or cluster fields); and, observed on the
// library beyond A.3, no late code-object attribution of waves that ended
// inside the buffer, unresolved placeholders of category NONE instead of 14,
// and shader-data batches of 65537 records. For RDNA it reproduces 0.1.6's
// differences too (its token tables, no gfx10/gfx11 barrier extension, A.3
// item 3; WAVE_START_EXT, DP-rate scaling, no CONTEXT instruction after a
// trap, waves emitted at their WAVE_END); the real RDNA traces decode to the
// library's records exactly with it (real_test.go).
//
// Two checks of the trace itself serve every backend: CheckPlausible
// (plausible.go) refuses a body after a valid header that is no token
// stream, from a bounded prefix (spec 1.6), and Ending (ending.go) tells
// how a decoded trace ended, cut inside a token or with waves still
// running (Decoder.Ended; EndWatch counts running waves from any
// backend's records; spec 1.7).
//
// Decoding streams: the trace is read through a bufio.Reader, and the
// decoder keeps only per-wave state for the waves in flight on the target
// CU, the running-wave table for occupancy, the instruction cache (one entry
// per PC seen) and the records the library pools until the end of the
// buffer. Those pools (occupancy, perf counters, realtime pairs) are bounded
// by Decoder.PoolLimit (65536 by default): past it a batch is delivered
// early. That changes batch boundaries and where those records fall among
// the others, not the records of one type or their order (except that the
// late code-object attribution of 2.1.3 cannot reach records already
// delivered). A negative PoolLimit gives the library's batching.
package sqtt
