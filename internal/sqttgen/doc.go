// Package sqttgen writes synthetic thread traces (.att files) together with
// the records a correct decoder must produce from them. The gfx9 generator
// (Generate, GenerateTo) is described here; the RDNA one lives in the
// rdna*.go files.
//
// It is the inverse of the decoder, written from the format specification
// (docs/spec/sqtt-format.md sections 1, 2.1, 2.2, 3, 4 and appendices A
// and B), not from any decoder's code. Generate and GenerateTo simulate waves
// executing a real kernel taken from an attkit index: the waves follow the
// kernel's branches (loop trip counts and branch directions come from the
// seed, thousands of trips when MaxTrips allows), calls and returns
// (s_swappc/s_setpc with INST_PC), run on several SIMDs with several waves
// per SIMD, and issue their instructions with seeded timings: stalls,
// INST tokens late or after later issues (Pipeline), XNACK replays, barriers
// as MESSAGE + IMMED. The trace carries the software header, wave starts and
// ends, ISSUE/INST/INST_PC tokens, occupancy of other compute units and,
// optionally, the instrumentation packets (code object load, early or late,
// realtime frequency, realtime samples, perf-counter interval), dispatch
// register writes, perf counters, shader data, events, packet loss,
// time resets (the TIME token right after the reset or after other tokens),
// context save/restore of running waves, and traces cut off with waves in
// flight (Truncate).
//
// The expected records come from a model of the decoder semantics of the
// specification (section 2.2.6 for waves and timelines, 2.1 for registers
// and instrumentation, 3.5 for stitching, 4.3 for the callback order). The
// model stitches with the specification's stitcher and checks its PCs
// against the PCs the simulated waves executed, so a generated trace is
// always one the stitcher can follow. Config.Compat016 switches the model
// to what AMD's 0.1.6 library reports (appendix A.3 and the differences
// observed with that library, noted on the model's v016 field); Normalize016
// removes the record fields 0.1.6 does not have.
//
// What real hardware writes, learnt from the real traces of ../shared/real
// (each also a round trip that fails on the decoder before the fix):
// RDNA.ExecTokens writes the 8-bit ALU_EXEC and VMEM_EXEC tokens among the
// wave's tokens (gfx1100 and gfx1200 captures; spec 2.3.2), and
// Config.GFX9.EndpgmMessage issues s_endpgm as an OTHER_MSG at the WAVE_END time
// (gfx950 captures; spec 2.2.4).
//
// Shared transcriptions. A round trip checks that the decoder and the model
// read the specification alike; where both transcribe the same rule, a
// misread rule passes unnoticed. These rules are transcribed on both sides:
// the stitcher's text classification trie and category rules (spec 3.2;
// classify.go and rdna_codes.go against internal/sqtt/isacache.go), the
// stitcher itself (3.5, stitch.go and rdna_stitch.go against
// internal/sqtt/stitch.go, gfx9_stitch.go and rdna_stitch.go), mfmaScale (the gfx950
// v_mfma_scale rule), the RDNA instruction and event tables (2.4, 2.3.6),
// the token framing tables (2.2.2, 2.3.2) and the 0.1.6 differences of the
// v016/compat016 models (A.3, A.4). Each has an independent check: the real
// traces (internal/sqtt/real_test.go decodes all 126 against AMD's records:
// classification, stitching, framing, the RDNA tables and the 0.1.6 rules on
// real kernels), the hand-worked vectors of appendix B, the hand-built token
// streams of internal/sqtt's tests, internal/sqtt's TestLibrary016 (hand-built
// streams whose expected records are what AMD's 0.1.6 library decoded from
// them, committed, so CI checks the 0.1.6 rules found by scripts/difffuzz
// without the library: the OTHER_MSG rules of the model's inst and
// programEnd016 (the deleted entry, its kept time, the closing message),
// the IMMED-versus-SMEM stitch rule, TIME_RESET, realtime and end-of-buffer
// rules; the scenarios016 traces state the same OTHER_MSG values by hand),
// and, where ROCPROF_TRACE_DECODER_LIB names AMD's library, the
// differential tests against it.
//
// Without the instrumentation, no packet announces the code objects and
// the trace's PCs are raw GPU addresses in code object 0, as in captures of
// runtimes other than rocprofv3; Loaded moves an index's code objects to
// their load addresses for such traces.
//
// Without expected records, traces of two segments or more (TargetBytes)
// are generated in parallel segments, each with waves of its own; the
// scripts/gentrace program writes such traces for benchmarks.
package sqttgen
