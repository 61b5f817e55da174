// Package cdec decodes thread traces through AMD's rocprof-trace-decoder
// shared library (librocprof-trace-decoder.so), loaded at run time with
// dlopen so that attkit builds and runs on machines without ROCm.
//
// Load finds the library in the order of the upstream Python layer
// (python-layer.md §7), resolves every symbol it needs at once (naming the
// missing ones), and returns a Decoder that implements backend.Decoder.
// Both API generations are supported: the handle API (V2, library 0.2.x)
// when the library exports rocprof_trace_decoder_create_handle, else the
// stateless rocprof_trace_decoder_parse_data of the 0.1.x builds (V1).
//
// Decode hands the whole trace to one parse call, as the Python layer does;
// DecodeBuffers feeds several buffers through the library's data callback.
// Trace bytes are copied into C memory that lives until the parse returns.
// The ISA callback answers from an isa.Provider with the library's buffer
// protocol (OUT_OF_RESOURCES with the needed size, then the retry). With a
// nil provider a V2 library disassembles the code objects given to
// AddCodeObject itself (built-in disassembly).
//
// Every callback becomes one *wire.Batch. Records are read with the struct
// layouts of sqtt-format.md §4.5; the 0.1.6 layout (§4.6) has the same
// offsets with reserved bytes where newer fields are, so its records read
// with those fields zero (Wave.Size 0). Record types added after 0.1.6 begin
// with their own u64 struct size; a library whose size is larger than ours
// is read at its stride. A record type this package does not know is
// carried as a wire.Raw batch: when the first u64 of the data is a
// plausible struct size (8..4096 bytes, a multiple of 8) it is taken as the
// element size and the count×size bytes are copied; otherwise the layout is
// unknowable and the batch carries only the count (ElemSize 0, no data).
// Counts and sizes coming from C are bounded before any memory is read.
//
// The parse call runs on a C thread of its own (session.h), so that the
// library never waits for Go: its trace callback copies each batch (with
// the wave arrays and marker strings it points to) into a bounded ring of
// C memory, and the goroutine that called Decode converts and emits the
// batches in callback order while the library goes on decoding. Memory
// stays bounded: when Go falls behind, the library thread waits. Go is
// called from the library thread only for ISA answers (once per PC; a
// C-side cache answers the repeats) and the data callback. They reach Go
// state through a runtime/cgo.Handle; C never holds a Go pointer.
// Go's scheduler does not count that thread, so while parse threads run,
// GOMAXPROCS is lowered by one per running parse (to at least 1) and set
// back when the last one returns: Go's threads then leave the library's
// thread a core of its own instead of waking idle threads onto it. The
// trace is read before, and the library's last batches (a whole trace's
// occupancy, which it pools to its last callbacks) are converted with
// every processor.
//
// A panic or an error in emit, in the provider or in the data callback is
// returned by Decode, after the batches that came before it; from then on
// the library is answered with an error status and its later callbacks are
// refused (the full parser ignores callback status and runs to its end).
//
// Built without cgo, the package keeps its API and every entry point returns
// an error with exit code 4 (exitcode.NoLibrary).
package cdec

import "github.com/attkit/attkit/internal/wire"

// BackendName is the name the binding reports in stream headers.
const BackendName = "rocm"

// EnvLib is the environment variable that names the library file.
const EnvLib = "ROCPROF_TRACE_DECODER_LIB"

// Decoder status values (rocprofiler_thread_trace_decoder_status_t).
const (
	StatusSuccess           = 0
	StatusError             = 1
	StatusOutOfResources    = 2
	StatusInvalidArgument   = 3
	StatusInvalidShaderData = 4
	StatusNotImplemented    = 5
	statusLast              = 6
	statusPrefix            = "ROCPROFILER_THREAD_TRACE_DECODER_STATUS_"
	maxTextLen              = 1 << 20 // bound on C strings copied into Go
	maxRecordsPerBatch      = 1 << 28 // bound on a callback's record count
	maxBatchBytes           = 1 << 32 // bound on the bytes one batch may span
	maxRawElemSize          = 4096    // largest plausible element size of an unknown type
	minRawElemSize          = 8
)

var statusNames = [...]string{"SUCCESS", "ERROR", "ERROR_OUT_OF_RESOURCES",
	"ERROR_INVALID_ARGUMENT", "ERROR_INVALID_SHADER_DATA", "ERROR_NOT_IMPLEMENTED"}

// fallbackStatusString is the library's text for s as documented
// (sqtt-format.md §5.2), used when no library is loaded.
func fallbackStatusString(s int) string {
	if s >= 0 && s < len(statusNames) {
		return statusPrefix + statusNames[s]
	}
	return "STATUS_UNKNOWN"
}

// fallbackInfoString is the documented library text for an info value.
func fallbackInfoString(v wire.Info) string {
	if v == 4 {
		return "INFO_LAST"
	}
	return v.Text()
}
