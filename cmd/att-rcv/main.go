// Command att-rcv writes the folder ROCprof Compute Viewer opens (a
// "ui_output_…" directory) from the record streams of one run, the way
// upstream's Python viewer writer does, file for file and byte for byte.
//
// Usage:
//
//	att-rcv -d DIR [--index FILE] [--formats json,csv] [--no-decode-markers]
//	        [--counters NAME,…] [--kernel GLOB]… [--dispatch N]… [--force] [STREAM…]
//	att-rcv --check -d DIR
//
// Each STREAM is a record stream from att-decode, or its JSON projection
// (no STREAM, or "-", reads standard input); a file may hold several
// concatenated streams. The shader engine of each part comes from its
// header. Streams are read once, in order, and wave files are written as
// their waves arrive.
//
// DIR receives filenames.json, occupancy.json, realtime.json (when the
// run has realtime samples), se<SE>_perfcounter.json,
// se<SE>_sm<SIMD>_sl<SLOT>_wv<N>.json for every wave,
// other_simd_se<SE>_<K>.json, shaderdata_<SE>_<K>.json and code.json with
// the folded counters; --formats csv adds stats_<DIR name>.csv next to DIR.
// --index names the index (an index stream from co-index, or a code.json):
// it gives code.json its rows, names the kernels, and carries the marker
// tables for the packed-marker correction (turned off by
// --no-decode-markers). Source snapshots (snapshots.json, source_*) are
// copied along: from the directory of a code.json index, or from the source
// files an index stream names. --counters names the perf counters the
// capture was made with (rocprofv3's --att-perfcounters, in order): they
// go to filenames.json's counter_names, which the viewer's Counters view
// names its series by (bank 0: names 1-4, bank 1: names 5-8); without it
// the list is empty, as upstream's Python writer leaves it, and the series
// are UNK_0..UNK_3.
//
// With --check, att-rcv writes nothing: it loads the folder DIR as the
// viewer does and reports, one a line, every file or entry the viewer
// would drop (most of them silently) and every broken cross-reference
// (wave files listed in filenames.json, code.json line numbers, kernel
// names, snapshot files).
//
// --kernel GLOB and --dispatch N write only the waves of those kernels or
// dispatches (wave files, their counters in code.json and the CSV); every
// other record (occupancy, events, perf counters, …) is written whole. A
// wave belongs to the kernel whose index range holds its first PC, else to
// its dispatch's, and to the Nth DISPATCH record (from 0) of its trace on
// its queue (internal/waveselect, as att-stats and att-timeline); a
// selection that matches nothing is an error (exit 1, nothing written)
// naming the kernels and dispatches present.
//
// Decoder warnings (INFO records) are not repeated: att-decode printed
// them. Marker records have no viewer file.
//
// The folder is built in a temporary sibling directory and moved into place
// at the end, with the stats CSV, so a failed or interrupted run (SIGINT,
// SIGTERM, SIGHUP, SIGQUIT: exit 128+signal, 130, 143, 129, 131) leaves
// nothing behind. An existing DIR that is
// not empty is refused unless --force is given; the earlier folder and CSV
// are then replaced as a whole. Two att-rcv writing one DIR at once commit
// one after the other: the later refuses, or with --force replaces the
// earlier result whole.
package main

import "os"

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
