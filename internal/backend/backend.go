// Package backend defines what att-decode needs from a trace decoder, so that
// the native Go decoder (internal/sqtt) and AMD's library (internal/cdec) are
// interchangeable behind one interface.
package backend

import (
	"context"
	"io"

	"github.com/attkit/attkit/internal/isa"
	"github.com/attkit/attkit/internal/wire"
)

// Emit receives one batch per decoder callback, in callback order. The batch
// and its slices are only valid during the call. A non-nil error stops the
// decode and is returned by Decode.
type Emit func(b *wire.Batch) error

// A Decoder decodes one shader engine's .att trace.
type Decoder interface {
	// Name is the backend's name as recorded in stream headers: "native"
	// or "rocm".
	Name() string
	// Version is the decoder's version, "" when unknown.
	Version() string
	// Decode reads the whole trace from r, asks p for instructions, and
	// calls emit for every batch. It returns an error with an exit code
	// (see internal/cli) for unsupported architectures (3) or a missing
	// library (4).
	Decode(ctx context.Context, r io.Reader, p isa.Provider, emit Emit) error
}
