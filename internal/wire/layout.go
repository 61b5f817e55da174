package wire

// The record stream's layout (docs/wire.md §1, "Payloads"), defined once:
// the names of the fields of each record's msgpack array, in order. The
// writer writes arrays of these lengths and the reader wants them; the
// names are those of docs/wire.md, and layout_test.go decodes a stream
// with msgpack/v5 into []any and checks every position, and this table,
// against that document.
var recordFields = [typeLast][]string{
	TypeOccupancy: {"pc.address", "pc.code_object_id", "time", "reserved", "cu", "simd", "wave_id", "word"},
	TypePerfEvent: {"time", "events0", "events1", "events2", "events3", "cu", "bank"},
	TypeWave: {"cu", "simd", "wave_id", "contexts", "dispatcher", "workgroup_id", "cluster_id", "reserved",
		"size", "begin_time", "end_time", "timeline", "instructions"},
	TypeEvent:         {"size", "time", "type", "me_id", "pipe_id", "flags", "payload", "byte_offset"},
	TypeShaderData:    {"time", "value", "cu", "simd", "wave_id", "flags", "reserved"},
	TypeRealtime:      {"shader_clock", "realtime_clock", "reserved"},
	TypeInstOtherSIMD: {"size", "time", "cycles", "wgp", "category"},
	TypeDispatch: {"size", "time", "me_id", "pipe_id", "user_sgprs", "flags", "vgprs", "sgprs", "lds_size",
		"thread_dim_x", "thread_dim_y", "thread_dim_z", "dispatch_pkt_addr", "byte_offset",
		"entry_point.address", "entry_point.code_object_id"},
	TypeMarker: {"size", "shaderdata", "kernel_entry.address", "kernel_entry.code_object_id", "code_object_id",
		"name", "source_location", "marker_id", "record_kind", "marker_kind", "marker_flags",
		"payload_index", "payload_count", "delay", "reserved"},
}

// The flat arrays of a wave: values per timeline entry and per
// instruction, and the fields of an unknown batch.
var (
	timelineFields    = []string{"type", "duration"}
	instructionFields = []string{"category", "stall", "duration", "time", "pc.address", "pc.code_object_id"}
	rawFields         = []string{"count", "elem_size", "bin"}
)

// Array lengths of the layout, as the writer and reader use them.
var (
	nTimeline    = len(timelineFields)
	nInstruction = len(instructionFields)
	nRaw         = len(rawFields)
)

// nFields is the length of a record array of type t.
func nFields(t RecordType) int { return len(recordFields[t]) }
