package wire

import "encoding/json"

// RowKind tells instruction rows from label rows in an index.
type RowKind uint8

// Row kinds.
const (
	RowInstruction RowKind = 0 // an instruction
	RowFunction    RowKind = 1 // a function label, "; _name", Source holds the name
	RowLabel       RowKind = 2 // a debug label, "; _label_x"
)

// IndexHeader opens an index stream.
type IndexHeader struct {
	Format   string `msgpack:"format"`
	Major    int    `msgpack:"major"`
	Minor    int    `msgpack:"minor"`
	Producer string `msgpack:"producer"` // "co-index 0.1.0"
	Objdump  string `msgpack:"objdump"`  // the disassembler used: path and version line
}

// CodeObject describes one indexed code object.
type CodeObject struct {
	ID     uint64      `msgpack:"id"`
	Path   string      `msgpack:"path"`   // absolute path as indexed
	Target string      `msgpack:"target"` // "gfx942", "" when unknown
	Ranges []LoadRange `msgpack:"ranges"` // loadable segments (ELF vaddr)
}

// LoadRange is a half-open range of ELF virtual addresses, [Begin, End).
type LoadRange struct {
	Begin uint64 `msgpack:"begin"`
	End   uint64 `msgpack:"end"`
}

// Row is one row of the code document: an instruction or a label. Line is
// the viewer's line number, the join key with wave files. Size is the byte
// distance to the next instruction (0 when unknown: the ISA provider then
// estimates it). Counters are zero in a fresh index.
//
// Extra holds, as raw JSON, the columns after the tenth of a code.json row
// (the PC-sampling columns), and Raw a whole row that is not of the
// ten-column form; both only serve lossless code.json round trips.
type Row struct {
	Kind    RowKind
	CodeObj uint64
	Vaddr   uint64
	Size    uint64
	Text    string
	Source  string
	// SourceNull records a null Source column of a foreign code.json, so that
	// it is written back as null.
	SourceNull bool
	Line       int64
	Hit        int64
	Latency    int64
	Stall      int64
	Idle       int64
	Extra      json.RawMessage
	Raw        json.RawMessage
	// Inline is the instruction's inline chain from DWARF, innermost
	// first (nil when unknown: a label, no DWARF, or a code.json index,
	// which cannot carry it). See InlineFrame.
	Inline []InlineFrame
}

// An InlineFrame is one function of an instruction's inline chain. The
// first frame is the function whose code the instruction is, at the
// instruction's own source line (Row.Source's first file:line); each
// next frame is the function that inlined the one before, at the call
// site (the next file:line of Row.Source); the last is the concrete,
// not inlined, function (the kernel or a called function). Line 0 is
// unknown ("file:?" in Source); Function is "" when DWARF names none.
type InlineFrame struct {
	Function string
	File     string
	Line     int64
}

// PC returns the row's program counter.
func (r *Row) PC() PC { return PC{Address: r.Vaddr, CodeObjectID: r.CodeObj} }

// IsLabel reports whether the row is a label row (text starting with ';' or
// "label", the test every reader of code.json applies).
func (r *Row) IsLabel() bool {
	if r.Kind != RowInstruction {
		return true
	}
	return len(r.Text) > 0 && r.Text[0] == ';' || len(r.Text) >= 5 && r.Text[:5] == "label"
}

// Kernel is one entry of code.json's "kernels" list.
type Kernel struct {
	Address   uint64 `msgpack:"address"`
	CodeObj   uint64 `msgpack:"codeobj"`
	Name      string `msgpack:"name"`
	Demangled string `msgpack:"demangled"`
}

// FuncmapEntry is one row of code.json's "sqtt_funcmap" table.
type FuncmapEntry struct {
	CodeObj  uint64 `msgpack:"codeobj"`
	MarkerID uint64 `msgpack:"marker_id"`
	Kind     string `msgpack:"kind"` // "F", "U", "P" or "K"
	Name     string `msgpack:"name"`
	Source   string `msgpack:"source"`
	Vaddr    uint64 `msgpack:"vaddr"`
}

// FuncmapLayout is one row of "sqtt_funcmap_layout".
type FuncmapLayout struct {
	CodeObj uint64 `msgpack:"codeobj"`
	Bits    uint32 `msgpack:"bits"`
	Shift   uint32 `msgpack:"shift"`
}

// FuncmapPayload is one row of "sqtt_funcmap_payloads".
type FuncmapPayload struct {
	CodeObj  uint64 `msgpack:"codeobj"`
	MarkerID uint64 `msgpack:"marker_id"`
	Count    uint32 `msgpack:"count"`
}

// Index is a whole index: small enough (one row per instruction of the code
// objects) to hold in memory. Doc keeps what a code.json document carried
// beyond the rows so that it can be written back unchanged.
type Index struct {
	Header          IndexHeader
	Objects         []CodeObject
	Rows            []Row
	Kernels         []Kernel
	Funcmap         []FuncmapEntry
	FuncmapLayout   []FuncmapLayout
	FuncmapPayloads []FuncmapPayload
	Doc             DocMeta
	// Skipped counts the code.json rows a lenient read kept whole in Raw
	// (malformed, or a PC's second row): ReadOptions.Lenient.
	Skipped int
}

// DocMeta is the part of a code.json document that is not rows, kernels or
// funcmap tables: the version string, the header as written (a string or an
// array), the hsaco list, the order of the top-level keys and any unknown
// keys, raw.
type DocMeta struct {
	Version   string
	HeaderRaw json.RawMessage
	Hsaco     []string
	Keys      []string
	Unknown   map[string]json.RawMessage
}

// CodeVersion and CodeHeader are what a generated code.json carries.
const (
	CodeVersion = "snapshot_dwarf-1.1"
	CodeHeader  = "ISA, _, LineNumber, Source, Codeobj, Vaddr, Hit, Latency, Stall, Idle"
)
