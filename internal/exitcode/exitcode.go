// Package exitcode holds the exit statuses every attkit tool shares and the
// interface an error implements to choose one. It imports nothing, so that
// libraries (internal/sqtt, internal/wire, internal/codeobj…) can give
// their errors a code without pulling in the command-line packages; the
// commands print errors and exit through internal/cli, which re-exports
// these names.
package exitcode

import "errors"

// The exit statuses (docs: each command's "Exit status" paragraph).
const (
	OK      = 0 // success
	Failed  = 1 // processing failed or records were bad
	Usage   = 2 // bad flags or arguments
	Format  = 3 // not our format, or an unsupported version or architecture
	Library = 4 // decoder library missing or unusable
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
