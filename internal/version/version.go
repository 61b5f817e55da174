// Package version says which attkit is running: the module version and VCS
// revision of the binary, from its build information. Nothing flows in; a
// string flows out, for --version (through internal/cli) and for the
// native decoder's backend_version in stream headers (internal/sqtt). It
// imports only the standard library.
package version

import (
	"runtime"
	"runtime/debug"
)

// Module returns attkit's version: the module version ("devel" for a
// build from a work tree) and the first 12 digits of the VCS revision
// when the build recorded one.
func Module() string {
	v := "devel"
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				v += " " + s.Value[:12]
			}
		}
	}
	return v
}

// String returns Module and the Go version the binary was built with.
func String() string { return Module() + " " + runtime.Version() }
