//go:build cgo

package cdec

import (
	"context"
	"io"

	"github.com/attkit/attkit/internal/backend"
	"github.com/attkit/attkit/internal/cli"
	"github.com/attkit/attkit/internal/isa"
	"github.com/attkit/attkit/internal/wire"
)

// Decoder is a loaded rocprof-trace-decoder library (and, for the V2 API,
// one decoder handle). It implements backend.Decoder.
type Decoder struct{}

var _ backend.Decoder = (*Decoder)(nil)

// Load loads the decoder library. An empty path means the standard lookup
// order (python-layer.md §7). Errors carry exit code 4 and list every place
// that was tried.
func Load(path string) (*Decoder, error) {
	return nil, cli.Errorf(cli.ExitLibrary, "rocm backend: not implemented yet")
}

// Name implements backend.Decoder.
func (d *Decoder) Name() string { return BackendName }

// Version implements backend.Decoder.
func (d *Decoder) Version() string { return "" }

// Path returns the file the library was loaded from.
func (d *Decoder) Path() string { return "" }

// API returns "v2" for the handle API, "v1" for parse_data.
func (d *Decoder) API() string { return "" }

// Decode implements backend.Decoder.
func (d *Decoder) Decode(ctx context.Context, r io.Reader, p isa.Provider, emit backend.Emit) error {
	return cli.Errorf(cli.ExitLibrary, "rocm backend: not implemented yet")
}

// DecodeBuffers decodes several trace buffers in one parse call.
func (d *Decoder) DecodeBuffers(ctx context.Context, bufs [][]byte, p isa.Provider, emit backend.Emit) error {
	return cli.Errorf(cli.ExitLibrary, "rocm backend: not implemented yet")
}

// AddCodeObject loads a code object into the handle (built-in disassembly).
func (d *Decoder) AddCodeObject(id, addr, size uint64, elf []byte) error {
	return cli.Errorf(cli.ExitLibrary, "rocm backend: not implemented yet")
}

// RemoveCodeObject unloads a code object.
func (d *Decoder) RemoveCodeObject(id uint64) error {
	return cli.Errorf(cli.ExitLibrary, "rocm backend: not implemented yet")
}

// Close releases the handle.
func (d *Decoder) Close() error { return nil }

// InfoString returns the library's text for an info value.
func InfoString(v wire.Info) string { return fallbackInfoString(v) }

// StatusString returns the library's text for a status value.
func StatusString(s int) string { return fallbackStatusString(s) }
