package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/attkit/attkit/internal/cli"
	"github.com/attkit/attkit/internal/codeobj"
	"github.com/attkit/attkit/internal/exitcode"
	"github.com/attkit/attkit/internal/publish"
	"github.com/attkit/attkit/internal/snapshot"
	"github.com/attkit/attkit/internal/wire"
)

type flags struct {
	cli.VersionFlag
	Format     string   `help:"Output: msgpack (index stream), json (JSON lines) or code.json." enum:"msgpack,json,code.json" default:"msgpack"`
	Output     string   `short:"o" placeholder:"FILE" help:"Write to FILE (atomically) instead of standard output."`
	Snapshots  string   `placeholder:"DIR" help:"Copy the source files the index names into DIR, with snapshots.json."`
	Objdump    string   `placeholder:"PATH" help:"The llvm-objdump to use (default: $LLVM_OBJDUMP, ROCm installs, llvm-objdump-19… on PATH)."`
	CodeObject []string `name:"code-object" sep:"none" placeholder:"ID=PATH[@ADDR]" help:"A code object with an explicit id, indexed at load address ADDR + ELF vaddr when @ADDR is given (repeatable)."`
	Inputs     []string `arg:"" optional:"" name:"CODEOBJ" help:"Code objects; ids inferred from the names (…code_object_id_N…); - reads one from standard input (id 0, or --code-object ID=-)."`
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	env := &cli.Env{Name: "co-index", Stdin: stdin, Stdout: stdout, Stderr: stderr}
	var f flags
	if code, done := env.Parse(&f, "Index AMDGPU code objects: ISA, sizes, source lines and labels per instruction.", args); done {
		return code
	}
	return env.Fail(index(env, &f))
}

func index(env *cli.Env, f *flags) error {
	inputs, err := inputsOf(f)
	for _, in := range inputs {
		publish.Input(in.Path) // -o never replaces an input
	}
	if err != nil {
		return err
	}
	if err := readStdin(env, inputs); err != nil {
		return err
	}
	inputs, err = codeobj.Normalize(inputs)
	if err != nil {
		return err
	}
	od := &codeobj.Objdump{Explicit: f.Objdump}
	ix, err := codeobj.Build(context.Background(), inputs, codeobj.Options{
		Objdump:  od,
		Producer: "co-index " + cli.Version(),
	})
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	switch f.Format {
	case "json":
		err = codeobj.WriteJSON(&buf, ix)
	case "code.json":
		buf.Write(ix.CodeJSON())
	default:
		err = wire.WriteIndex(&buf, ix)
	}
	if err != nil {
		return err
	}
	if f.Snapshots != "" {
		if _, err := snapshot.Write(f.Snapshots, ix, snapshot.Options{Warn: func(m string) { env.Warnf("%s", m) }}); err != nil {
			return err
		}
	}
	if f.Output != "" && f.Output != "-" {
		return cli.WriteFileAtomic(f.Output, func(w io.Writer) error {
			_, err := w.Write(buf.Bytes())
			return err
		})
	}
	_, err = env.Stdout.Write(buf.Bytes())
	return err
}

// inputsOf collects the inputs: positional paths with inferred ids, then
// the explicit --code-object pairs.
func inputsOf(f *flags) ([]codeobj.Input, error) {
	if len(f.Inputs) == 0 && len(f.CodeObject) == 0 {
		return nil, exitcode.Errorf(exitcode.Usage, "no code objects given (usage: co-index [flags] CODEOBJ…; see --help)")
	}
	var inputs []codeobj.Input
	paths, err := expandDirs(f.Inputs)
	if err != nil {
		return nil, err
	}
	if len(paths) > 0 {
		in, err := codeobj.InferIDs(paths)
		if err != nil {
			return nil, &exitcode.Error{Code: exitcode.Usage, Err: err}
		}
		inputs = append(inputs, in...)
	}
	for _, arg := range f.CodeObject {
		in, err := codeobj.ParseInputArg(arg)
		if err != nil {
			return nil, &exitcode.Error{Code: exitcode.Usage, Err: err}
		}
		inputs = append(inputs, in)
	}
	// Ids collide before paths are checked: the message names the
	// arguments as given.
	if err := codeobj.CheckIDs(inputs); err != nil {
		return nil, &exitcode.Error{Code: exitcode.Usage, Err: err}
	}
	return inputs, nil
}

// readStdin gives the input named "-" the bytes of standard input, and
// the name "<stdin>" in errors and in the index. Standard input can be
// read once only.
func readStdin(env *cli.Env, inputs []codeobj.Input) error {
	n := 0
	for i := range inputs {
		if inputs[i].Path != "-" {
			continue
		}
		if n++; n > 1 {
			return exitcode.Errorf(exitcode.Usage, "standard input (-) given twice")
		}
		data, err := io.ReadAll(env.Stdin)
		if err != nil {
			return fmt.Errorf("reading <stdin>: %w", err)
		}
		if data == nil {
			data = []byte{}
		}
		inputs[i].Path, inputs[i].Data = "<stdin>", data
	}
	return nil
}

// expandDirs replaces each directory argument by the code objects in it
// (regular files ending in .hsaco, .co, .out or .o, any case), sorted by
// name, as generate_code.py scans its working directory.
func expandDirs(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil || !st.IsDir() {
			out = append(out, a) // files, and errors, are reported later
			continue
		}
		ents, err := os.ReadDir(a)
		if err != nil {
			return nil, err
		}
		var found []string
		for _, e := range ents {
			switch strings.ToLower(filepath.Ext(e.Name())) {
			case ".hsaco", ".co", ".out", ".o":
				p := filepath.Join(a, e.Name())
				if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
					found = append(found, p)
				}
			}
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("%s: no .hsaco/.out/.co/.o code objects in the directory", a)
		}
		sort.Strings(found)
		out = append(out, found...)
	}
	return out, nil
}
