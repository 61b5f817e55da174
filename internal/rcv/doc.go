// Package rcv writes the folder ROCprof Compute Viewer opens (a
// "ui_output_…" directory), file for file and byte for byte as upstream's
// Python viewer writer does (spec: python-layer.md §5 and §6.1–6.3; what the
// viewer enforces: viewer-loader.md).
//
// A Writer is fed the records of one run, trace after trace, in stream
// order. It writes each wave file as its wave arrives, and keeps what the
// folder's other files need until the end of a trace or of the run
// (occupancy, events, dispatches, realtime samples, the rows of the
// per-trace files, one entry per wave for filenames.json) in a temporary
// spool file on the output's file system, not in memory: its memory stays
// flat however long the trace. Finish streams the index files from the
// spool, byte for byte as upstream lays them out. Two things stay in
// memory: the dispatches of a shader engine (one per kernel launch), and,
// with packed-marker correction (§5.11), the shader data and wave starts
// of all traces, because the correction looks at all of them at once.
//
// CheckFolder loads a folder as the viewer does and lists what the viewer
// would drop or fail on; the tests run it on every folder they write.
//
// A Folder is the output directory under construction: files go into a
// temporary sibling directory that Commit renames into place, so that a
// failed run leaves nothing behind.
package rcv
