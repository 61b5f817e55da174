// Package sqttgen writes synthetic gfx9 and RDNA (gfx10, gfx11, gfx12)
// thread traces (.att files) together with the records a correct decoder
// must produce from them.
//
// It is the inverse of the decoder, written from the format specification
// (shared/spec/sqtt-format.md sections 1, 2.1, 2.2, 3, 4 and appendices A
// and B), not from any decoder's code. Generate and GenerateTo simulate waves
// executing a real kernel taken from an attkit index: the waves follow the
// kernel's branches (loop trip counts and branch directions come from the
// seed), run on several SIMDs with several waves per SIMD, and issue their
// instructions with seeded timings. The trace carries the software header,
// wave starts and ends, ISSUE/INST/INST_PC tokens, occupancy of other
// compute units and, optionally, the instrumentation packets (code object
// load, realtime frequency, realtime samples), dispatch register writes,
// perf counters and shader data.
//
// The expected records are computed by a model of the decoder semantics of
// the specification (section 2.2.6 for waves and timelines, 2.1 for
// registers and instrumentation, 4.3 for the callback order); the PCs are the
// ones the simulated waves actually executed. The generator only produces
// token patterns for which the specification's stitcher (section 3.5) must
// find those PCs.
//
// GenerateRDNA and GenerateRDNATo (rdna*.go) do the same for RDNA from
// sections 1.2, 1.3, 2.1, 2.3, 2.4, 3, 4 and appendix B.3/B.4: a
// nibble-aligned token stream after a HEADER token, one traced SIMD with up
// to 16 wave slots, and a separate model of the RDNA parser (§2.3.6), its
// reorder queue, the RDNA stitcher rules and the gfx12 excluded barrier
// waits.
package sqttgen
