// Command att-tool is the one-command pipeline, attkit's counterpart of
// upstream's att_tool.py (python-layer.md §6.4): it takes the folder
// rocprofv3 wrote (or any mix of .att traces, code objects and a code.json)
// and writes one ROCprof Compute Viewer folder per run,
// ui_output_<name><run>, with stats_ui_output_<name><run>.csv beside it.
//
// Usage:
//
//	att-tool [-d DIR] [--lib LIB] [--formats json,csv[,html]] [--base-name NAME]
//	         [--no-decode-markers] [--backend auto|native|rocm] [-j N]
//	         [--code-object ID=PATH@ADDR]… [--group PID_AGENT] [--force]
//	         [--counters NAME,…] [--allow-duplicates] [--source DIR]
//	         [--keep-going] [--kernel GLOB]… [--dispatch N]… [--progress] FILE…
//
// It does in one process what co-index, att-decode, att-rcv and att-stats
// do: it indexes the code objects, decodes the shader engines of all runs
// in parallel (-j, default the number of cores), and writes each run's
// folder and stats CSV (runs in parallel too). --formats html adds
// att-report's page of each run, report_ui_output_<name><run>.html, beside
// the folder and the CSV (not inside: the folder stays the viewer's); it is
// one output of the same publish set, so folder, CSV and page are
// replaced together or not at all.
//
// Each input file is taken once: the same file under two names (given
// twice, a folder and a file in it, a symbolic or hard link; by device and
// inode) is warned of and counted once, and so is a trace with the bytes of
// another under a second name (a copy), unless --allow-duplicates. Files
// named after different processes or agents (<pid>_<agent>_…) are inputs
// of different groups and never duplicates of each other.
//
// Directories are searched recursively (rocprofv3 writes
// <out>/<hostname>/<pid>_<agent>_…), skipping hidden entries and earlier
// ui_output_* folders. Traces and code objects are grouped by the
// <pid>_<agent> prefix of their names; code objects without one belong to
// every group. Several groups give one output per group (folders named
// ui_output_<name>_<pid>_<agent>_<run>), and --group PID_AGENT processes
// one.
//
// The viewer's Counters series are named by the perf counters the capture
// was made with: --counters, or else those rocprofv3 recorded for the
// group's process in <pid>_config.json beside the traces (written with
// --output-config; member att_param_perfcounters), else none.
//
// With -d DIR and a single run, DIR is the viewer folder and the stats CSV
// goes beside it; when DIR holds other files (it is not an earlier viewer
// folder), the folder is made inside DIR instead. With several runs, the
// folders and CSVs go into DIR; without -d, beside the traces.
//
// No result is lost or mixed: everything is written under temporary names
// and renamed into place when the whole run succeeded, all outputs
// together. An output that holds an earlier result is refused, or with
// --force replaced as a whole (folder and stats CSV together). Two runs
// into one place commit one after the other (a lock on the parent
// directory): the later one refuses, or with --force replaces the earlier
// one's result whole. On SIGINT, SIGTERM, SIGHUP or SIGQUIT the work
// stops within a second (a second signal stops it at once), the
// temporaries and work files are removed (a large folder, as the viewer
// folder of a big capture, is renamed aside and removed by a background
// process after the exit), what was there before stays, and att-tool
// exits 128+signal.
//
// --code-object is for captures without code-object load records
// (runtimes other than rocprofv3): their PCs are absolute, so the code
// object is indexed at its load address (co-index --code-object); give
// such objects id 0. A copy of PATH found among the FILEs is not indexed
// again. When no executed instruction is in the index at all, att-tool
// warns and suggests it.
//
// Each trace is decoded as att-decode decodes it (one driver,
// internal/driver): the same backend choice, architecture check (a trace
// of another GPU than its code objects is refused, exit 3), warnings
// (decoder INFO records, a truncated or empty trace) and error messages.
// Decoder warnings go to stderr as "Warning: <trace>: <text>" unless
// ATT_SUPPRESS_WARNING is set. Progress goes to stderr when it is a
// terminal or with --progress: a line as each phase starts (indexing,
// decoding, writing, committing), then every second where it is (traces
// decoded, bytes read, waves; runs and waves written), and a line per
// decoded trace.
//
// With --keep-going a trace that fails to decode is reported and left out
// of its run; the other traces and runs are still written (a run whose
// traces all failed is not), and att-tool ends with exit status 1 and a
// summary of what it skipped.
//
// Source snapshots (source_* files and snapshots.json, for the viewer's
// source view) copy only regular files of at most 16 MiB: those the code
// objects' line tables name (looked up in --source DIR too), or a
// code.json capture's own source_* files; a symbolic link is never
// followed out of the capture or DIR, a copy is never more readable than
// its source, and what is skipped is named in a warning. The folders are
// printed on stdout, one a line, when all are in place.
//
// --kernel GLOB and --dispatch N write only the waves of those kernels or
// dispatches (wave files, counters, stats CSV, report), every other record
// whole, as att-rcv and att-stats do (internal/waveselect); a selection
// that matches no wave of any run is an error (exit 1, nothing written)
// naming the kernels and dispatches the capture holds.
//
// Exit status: 0 ok; 1 failure (missing input, bad trace data, an output
// that exists without --force, a trace skipped by --keep-going); 2 usage (bad flags, ambiguous or duplicate
// code object ids); 3 not a trace (a body after a valid header that is no
// token stream included) or an unsupported architecture; 4 the
// ROCm library is missing with --backend rocm; 128+signal when SIGINT,
// SIGTERM, SIGHUP or SIGQUIT ended it (130, 143, 129, 131).
package main

import "os"

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
