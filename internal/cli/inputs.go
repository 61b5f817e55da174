package cli

import (
	"os"

	"github.com/attkit/attkit/internal/exitcode"
)

// Distinct fails with a usage error when an input is given twice: the
// same path, two paths of one file (a link, "./x" and "x"), or "-" (standard
// input) twice. A tool that sums its inputs would count that file twice.
// Paths that cannot be opened are left to the caller to report.
func Distinct(paths []string) error {
	type seen struct {
		path string
		st   os.FileInfo
	}
	var files []seen
	stdin := false
	for _, p := range paths {
		if p == "-" || p == "" {
			if stdin {
				return exitcode.Errorf(exitcode.Usage, "standard input (-) given twice")
			}
			stdin = true
			continue
		}
		st, err := os.Stat(p)
		if err != nil {
			continue
		}
		for _, s := range files {
			if os.SameFile(s.st, st) {
				if s.path == p {
					return exitcode.Errorf(exitcode.Usage, "%s given twice: give each input once", p)
				}
				return exitcode.Errorf(exitcode.Usage, "%s and %s are the same file: give each input once", s.path, p)
			}
		}
		files = append(files, seen{p, st})
	}
	return nil
}
