package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/attkit/attkit/internal/cli"
	"github.com/attkit/attkit/internal/tracename"
)

type flags struct {
	cli.VersionFlag
	Format string   `help:"Output format: tsv (PATH<TAB>SE<TAB>RUN) or json (one object a line)." enum:"tsv,json" default:"tsv"`
	Paths  []string `arg:"" optional:"" help:"Trace files or directories; none or - reads paths from stdin, one a line."`
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	env := &cli.Env{Name: "att-name", Stdin: stdin, Stdout: stdout, Stderr: stderr}
	var f flags
	if code, done := env.Parse(&f, "Tell the shader engine and run of each trace file.", args); done {
		return code
	}
	return env.Fail(name(env, &f))
}

func name(env *cli.Env, f *flags) error {
	var paths []string
	for _, p := range f.Paths {
		if p != "-" {
			paths = append(paths, p)
		}
	}
	if len(f.Paths) == 0 || len(paths) < len(f.Paths) {
		sc := bufio.NewScanner(env.Stdin)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			if line := strings.TrimRight(sc.Text(), "\r"); line != "" {
				paths = append(paths, line)
			}
		}
		if err := sc.Err(); err != nil {
			return fmt.Errorf("reading paths from stdin: %w", err)
		}
	}
	expanded, err := tracename.Expand(paths)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(env.Stdout)
	for _, t := range tracename.Assign(expanded) {
		if f.Format == "json" {
			p, _ := json.Marshal(t)
			w.Write(p)
			w.WriteByte('\n')
		} else {
			fmt.Fprintf(w, "%s\t%d\t%d\n", t.Path, t.SE, t.Run)
		}
	}
	return w.Flush()
}
