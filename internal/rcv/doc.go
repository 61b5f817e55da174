// Package rcv writes the folder ROCprof Compute Viewer opens (a
// "ui_output_…" directory), file for file and byte for byte as upstream's
// Python viewer writer does (spec: python-layer.md §5 and §6.1–6.3; what the
// viewer enforces: viewer-loader.md).
//
// A Writer is fed the records of one run, trace after trace, in stream
// order. It writes each wave file as its wave arrives, so its memory grows
// with what the folder's index files need at the end (occupancy, events,
// dispatches, realtime samples, one small entry per wave for
// filenames.json) and not with the size of the waves. Per-trace files
// (perf counters, other-SIMD instructions, shader data) are written when
// their trace ends; with packed-marker correction (§5.11) the shader data
// of all traces is kept until Finish, because the correction looks at all
// of them at once.
//
// CheckFolder loads a folder as the viewer does and lists what the viewer
// would drop or fail on; the tests run it on every folder they write.
//
// A Folder is the output directory under construction: files go into a
// temporary sibling directory that Commit renames into place, so that a
// failed run leaves nothing behind.
package rcv
