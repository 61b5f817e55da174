// Package cli holds what every attkit binary shares: the one place errors
// are printed (with the exit codes of internal/exitcode), kong parsing that a test can drive in-process,
// "-" for standard input, atomic output files and the progress switch.
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/attkit/attkit/internal/exitcode"
	"github.com/attkit/attkit/internal/publish"
	"github.com/attkit/attkit/internal/version"
)

// Env is one invocation of a tool: its name and standard streams.
type Env struct {
	Name   string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
}

// Fail prints err once as "<tool>: <err>" on stderr and returns its exit
// code. A nil error returns 0.
func (e *Env) Fail(err error) int {
	if err == nil {
		return exitcode.OK
	}
	var s exitcode.Silent
	if !errors.As(err, &s) {
		msg := strings.TrimRight(err.Error(), "\n")
		fmt.Fprintf(e.Stderr, "%s: %s\n", e.Name, msg)
	}
	return exitcode.Of(err)
}

// Warnf prints "<tool>: warning: <msg>" on stderr.
func (e *Env) Warnf(format string, args ...any) {
	fmt.Fprintf(e.Stderr, "%s: warning: %s\n", e.Name, fmt.Sprintf(format, args...))
}

// ExitStatusHelp is the paragraph ending every tool's --help whose
// description does not give its own "Exit status:" (which then lists the
// same codes, with what they mean for that tool, 130 and 143 included).
const ExitStatusHelp = "Exit status: 0 ok; 1 failed; 2 usage; 3 not our format, or an unsupported version or architecture; 4 decoder library missing; 130 or 143 interrupted (128 + SIGINT or SIGTERM)."

type exitSignal struct{ code int }

// Parse parses args into the kong grammar cli. It returns done=true when the
// tool must stop with the returned code: after --help or --version (0) or a
// usage error (2, message printed on stderr with a --help hint).
func (e *Env) Parse(cli any, description string, args []string, opts ...kong.Option) (code int, done bool) {
	defer func() {
		if r := recover(); r != nil {
			s, ok := r.(exitSignal)
			if !ok {
				panic(r)
			}
			code, done = s.code, true
		}
	}()
	if !strings.Contains(description, "Exit status:") {
		description += "\n\n" + ExitStatusHelp
	}
	all := append([]kong.Option{
		kong.Name(e.Name),
		kong.Description(description + "\n\n" + publish.SignalHelp),
		kong.Writers(e.Stdout, e.Stderr),
		kong.Exit(func(c int) { panic(exitSignal{c}) }),
		kong.Vars{"version": e.Name + " " + Version()},
		kong.ConfigureHelp(kong.HelpOptions{Compact: true}),
	}, opts...)
	parser, err := kong.New(cli, all...)
	if err != nil {
		fmt.Fprintf(e.Stderr, "%s: %v\n", e.Name, err)
		return exitcode.Failed, true
	}
	if _, err := parser.Parse(args); err != nil {
		fmt.Fprintf(e.Stderr, "%s: %v\n", e.Name, err)
		fmt.Fprintf(e.Stderr, "Run '%s --help' for usage.\n", e.Name)
		return exitcode.Usage, true
	}
	return exitcode.OK, false
}

// Version returns the module version and VCS revision of the running
// binary and the Go version it was built with (internal/version).
func Version() string { return version.String() }

// VersionFlag is the --version flag every tool embeds.
type VersionFlag struct {
	Version kong.VersionFlag `help:"Print the version and exit."`
}

// Open opens an input: "-" (or "") is standard input, named "<stdin>".
// The caller closes the result.
func (e *Env) Open(path string) (io.ReadCloser, string, error) {
	if path == "" || path == "-" {
		return io.NopCloser(e.Stdin), "<stdin>", nil
	}
	publish.Input(path) // no output of the process may replace it
	f, err := os.Open(path)
	if err != nil {
		return nil, path, err
	}
	return f, path, nil
}

// WriteFileAtomic writes a file through a temporary sibling renamed into
// place when write succeeded (publish.WriteFile): a failure, or an
// interrupt in a tool that called publish.RemoveOnSignal, never leaves a
// partial file at path or a temporary beside it. A symbolic link is
// followed: its target is replaced, the link stays. A path that is not a
// regular file (/dev/null, a FIFO, a terminal) is written directly.
func WriteFileAtomic(path string, write func(w io.Writer) error) error {
	return publish.WriteFile(path, write)
}

// ProgressWanted reports whether progress goes to stderr: when asked with
// --progress, or else when stderr is a terminal.
func ProgressWanted(flag bool, stderr io.Writer) bool {
	if flag {
		return true
	}
	f, ok := stderr.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
