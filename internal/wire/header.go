package wire

// Stream format names and the major versions this package reads and writes.
const (
	RecordsFormat = "attkit-records"
	IndexFormat   = "attkit-index"
	RecordsMajor  = 1
	IndexMajor    = 1
	// IndexMinor is the minor version of the index streams WriteIndex
	// writes: 1 added the "inline" entries (docs/wire.md §3).
	IndexMinor = 1
)

// Header opens every record stream (and every part of a concatenated one).
// Readers ignore keys they do not know, so minor additions need no new major.
type Header struct {
	Format         string `msgpack:"format"`
	Major          int    `msgpack:"major"`
	Minor          int    `msgpack:"minor"`
	Producer       string `msgpack:"producer"`        // tool and version, "att-decode 0.1.0"
	Backend        string `msgpack:"backend"`         // "native" or "rocm"
	BackendVersion string `msgpack:"backend_version"` // decoder version, "" when unknown
	Trace          Trace  `msgpack:"trace"`
}

// Trace is the metadata of the trace a record stream was decoded from.
type Trace struct {
	Path  string `msgpack:"path"`
	SE    int    `msgpack:"se"`
	Run   int    `msgpack:"run"`
	GFXIP int    `msgpack:"gfxip"` // 0 when not known
	// Target is the GPU target the trace's capture names ("gfx950"; ""
	// when not known, and then not written): a gfx9 trace's bytes do not
	// tell its generation (internal/arch). Added in minor 1.
	Target string `msgpack:"target,omitempty"`
}
