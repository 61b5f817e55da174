//go:build !cgo

package cdec

import (
	"context"
	"io"
	"os"

	"github.com/attkit/attkit/internal/backend"
	"github.com/attkit/attkit/internal/exitcode"
	"github.com/attkit/attkit/internal/isa"
	"github.com/attkit/attkit/internal/wire"
)

// Decoder is the ROCm decoder binding; built without cgo it never loads.
type Decoder struct{}

var _ backend.Decoder = (*Decoder)(nil)

func errNoCgo() error {
	return exitcode.Errorf(exitcode.NoLibrary, "rocm backend unavailable: attkit was built without cgo (CGO_ENABLED=0), so it cannot load librocprof-trace-decoder.so")
}

// Load always fails when built without cgo; the message says where the
// library would have been looked for.
func Load(path string) (*Decoder, error) {
	pl := lookup(path, os.Getenv, pythonSitePackages(os.Getenv))
	var where []attempt
	if pl.file != "" {
		where = append(where, attempt{where: pl.file})
	}
	for _, n := range pl.loaders {
		where = append(where, attempt{where: "dynamic loader: " + n})
	}
	return nil, exitcode.Errorf(exitcode.NoLibrary, "%v; a cgo build would look at:%s", errNoCgo(), pl.describe(where))
}

// Name implements backend.Decoder.
func (d *Decoder) Name() string { return BackendName }

// Version implements backend.Decoder.
func (d *Decoder) Version() string { return "" }

// Path returns "" when built without cgo.
func (d *Decoder) Path() string { return "" }

// API returns "" when built without cgo.
func (d *Decoder) API() string { return "" }

// Decode implements backend.Decoder; it always fails without cgo.
func (d *Decoder) Decode(ctx context.Context, r io.Reader, p isa.Provider, emit backend.Emit) error {
	return errNoCgo()
}

// DecodeBuffers always fails without cgo.
func (d *Decoder) DecodeBuffers(ctx context.Context, bufs [][]byte, p isa.Provider, emit backend.Emit) error {
	return errNoCgo()
}

// AddCodeObject always fails without cgo.
func (d *Decoder) AddCodeObject(id, addr, size uint64, elf []byte) error { return errNoCgo() }

// RemoveCodeObject always fails without cgo.
func (d *Decoder) RemoveCodeObject(id uint64) error { return errNoCgo() }

// Close does nothing.
func (d *Decoder) Close() error { return nil }

// InfoString returns the documented text of an info value.
func InfoString(v wire.Info) string { return fallbackInfoString(v) }

// StatusString returns the documented text of a status value.
func StatusString(s int) string { return fallbackStatusString(s) }
