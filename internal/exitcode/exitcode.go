// Package exitcode is the one home of coded errors: the exit statuses every
// attkit tool shares, the interface an error implements to choose one
// (Coder), an error carrying a status (Error, Errorf) and the mark of an
// error already reported (Silent). Errors flow in, a process exit status
// flows out (Of). It imports only the standard library's errors and fmt, so
// that libraries (internal/sqtt, internal/wire, internal/cdec…) give their
// errors a code without pulling in the command-line packages; the commands
// print errors and exit through internal/cli.
package exitcode

import (
	"errors"
	"fmt"
)

// The exit statuses (docs: each command's "Exit status" paragraph).
const (
	OK        = 0 // success
	Failed    = 1 // processing failed or records were bad
	Usage     = 2 // bad flags or arguments
	Format    = 3 // not our format, or an unsupported version or architecture
	NoLibrary = 4 // decoder library missing or unusable
)

// A Coder is an error that chooses the process exit status.
type Coder interface {
	ExitCode() int
}

// Of returns the exit status an error asks for: that of the first Coder in
// its chain, Failed if none, OK for nil.
func Of(err error) int {
	if err == nil {
		return OK
	}
	var c Coder
	if errors.As(err, &c) {
		return c.ExitCode()
	}
	return Failed
}

// Error is an error with an exit code.
type Error struct {
	Code int
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// ExitCode implements Coder.
func (e *Error) ExitCode() int { return e.Code }

// Errorf returns an error with the given exit code; %w wraps as in
// fmt.Errorf.
func Errorf(code int, format string, args ...any) error {
	return &Error{Code: code, Err: fmt.Errorf(format, args...)}
}

// Silent marks an error whose messages were already printed: cli's Fail
// prints nothing more and returns its code.
type Silent struct{ Code int }

func (s Silent) Error() string { return "already reported" }

// ExitCode implements Coder.
func (s Silent) ExitCode() int { return s.Code }
