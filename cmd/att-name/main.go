// Command att-name tells the shader engine and run of each trace file, by
// the naming rule of rocprofv3 captures.
//
// Usage:
//
//	att-name [--format tsv|json] [PATH…]
//
// With no PATH (or "-"), paths are read from standard input, one a line.
// A directory stands for its .att entries, sorted by name. Each trace gets
// one line: PATH<TAB>SE<TAB>RUN, or a JSON object with --format json.
// Names ending in _shader_engine_<SE>_<RUN>.att (any case) carry both;
// other names get run 1 and the lowest shader engine no named run-1 trace
// uses, in input order. A missing path is an error naming it (exit 1).
package main

import (
	"os"

	"github.com/attkit/attkit/internal/publish"
)

func main() {
	publish.RemoveOnSignal() // 128+signal, as every tool
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
