package wire

import "strconv"

// RecordType is the decoder's record type id, the first argument of its trace
// callback. The numbers are the decoder API's wire ids.
type RecordType uint32

// Record types of the newest decoder API.
const (
	TypeGFXIP         RecordType = 0
	TypeOccupancy     RecordType = 1
	TypePerfEvent     RecordType = 2
	TypeWave          RecordType = 3
	TypeInfo          RecordType = 4
	TypeEvent         RecordType = 5
	TypeShaderData    RecordType = 6
	TypeRealtime      RecordType = 7
	TypeRTFrequency   RecordType = 8
	TypeInstOtherSIMD RecordType = 9
	TypeDispatch      RecordType = 10
	TypeMarker        RecordType = 11
	typeLast          RecordType = 12
)

var recordTypeNames = [...]string{
	"gfxip", "occupancy", "perfevent", "wave", "info", "event", "shaderdata",
	"realtime", "rt_frequency", "inst_other_simd", "dispatch", "marker",
}

// Known reports whether t is a record type this package models.
func (t RecordType) Known() bool { return t < typeLast }

// String returns the lower-case name used in the JSON projection ("wave"), or
// the decimal number for a type this package does not know.
func (t RecordType) String() string {
	if t.Known() {
		return recordTypeNames[t]
	}
	return strconv.FormatUint(uint64(t), 10)
}

// parseRecordType maps a JSON projection name back to its type.
func parseRecordType(s string) (RecordType, bool) {
	for i, n := range recordTypeNames {
		if n == s {
			return RecordType(i), true
		}
	}
	v, err := strconv.ParseUint(s, 10, 32)
	return RecordType(v), err == nil
}

// Info is a decoder warning (DecoderInfo).
type Info uint32

// Info values.
const (
	InfoNone             Info = 0
	InfoDataLost         Info = 1
	InfoStitchIncomplete Info = 2
	InfoWaveIncomplete   Info = 3
)

var infoNames = [...]string{"none", "data_lost", "stitch_incomplete", "wave_incomplete"}

// String returns the lower-case enum name, or the number when unknown.
func (v Info) String() string { return enumName(infoNames[:], uint64(v)) }

// Text returns the sentence the decoder library prints for the info value.
func (v Info) Text() string {
	switch v {
	case InfoNone:
		return "NONE"
	case InfoDataLost:
		return "Data Lost: trace data was lost (buffer full or packet loss)"
	case InfoStitchIncomplete:
		return "Stitch Incomplete: some instructions could not be matched to the ISA"
	case InfoWaveIncomplete:
		return "Wave incomplete: a wave did not end inside the trace"
	}
	return "Unknown info parameter."
}

// WaveStateType is the state of one segment of a wave's timeline.
type WaveStateType int32

// Wave states.
const (
	StateEmpty WaveStateType = 0
	StateIdle  WaveStateType = 1
	StateExec  WaveStateType = 2
	StateWait  WaveStateType = 3
	StateStall WaveStateType = 4
)

var stateNames = [...]string{"empty", "idle", "exec", "wait", "stall"}

// String returns the lower-case enum name, or the number when unknown.
func (v WaveStateType) String() string { return enumNameSigned(stateNames[:], int64(v)) }

// InstCategory is an instruction's category.
type InstCategory uint8

// Instruction categories. CatUnresolved (14) is the decoder's internal
// placeholder that can appear in incomplete gfx9 waves.
const (
	CatNone       InstCategory = 0
	CatSMEM       InstCategory = 1
	CatSALU       InstCategory = 2
	CatVMEM       InstCategory = 3
	CatFLAT       InstCategory = 4
	CatLDS        InstCategory = 5
	CatVALU       InstCategory = 6
	CatJump       InstCategory = 7
	CatNext       InstCategory = 8
	CatImmed      InstCategory = 9
	CatContext    InstCategory = 10
	CatMessage    InstCategory = 11
	CatBVH        InstCategory = 12
	CatUnresolved InstCategory = 14
)

var categoryNames = [...]string{"none", "smem", "salu", "vmem", "flat", "lds", "valu",
	"jump", "next", "immed", "context", "message", "bvh"}

// String returns the lower-case enum name, or the number when unknown.
func (v InstCategory) String() string { return enumName(categoryNames[:], uint64(v)) }

// EventType is the type of an EVENT record.
type EventType int32

// Event types.
const (
	EventNone             EventType = 0
	EventCSPartialFlush   EventType = 1
	EventBottomOfPipeTS   EventType = 2
	EventSaveContext      EventType = 3
	EventDispatchEnd      EventType = 4
	EventCacheFlush       EventType = 5
	EventPacketLoss       EventType = 6
	EventCodeObjectLoad   EventType = 7
	EventCodeObjectUnload EventType = 8
	EventTTStallBegin     EventType = 9
	EventTTStallEnd       EventType = 10
	EventTTFlush          EventType = 11
	EventDIDTStallBegin   EventType = 12
	EventDIDTStallEnd     EventType = 13
	EventClusterBarrier   EventType = 14
	EventReserved         EventType = 15
	EventGCRinse          EventType = 16
	EventSPMSample        EventType = 17
)

var eventNames = [...]string{"none", "cs_partial_flush", "bottom_of_pipe_ts", "save_context",
	"dispatch_end", "cache_flush", "packet_loss", "code_object_load", "code_object_unload",
	"tt_stall_begin", "tt_stall_end", "tt_flush", "didt_stall_begin", "didt_stall_end",
	"cluster_barrier", "reserved", "gc_rinse", "spm_sample"}

// String returns the lower-case enum name, or the number when unknown.
func (v EventType) String() string { return enumNameSigned(eventNames[:], int64(v)) }

// Marker enums.
type (
	// MarkerRecordKind says whether a marker record is a header or a payload.
	MarkerRecordKind uint32
	// MarkerKind is the kind of a marker's funcmap entry.
	MarkerKind uint32
)

var markerRecordKindNames = [...]string{"header", "payload"}
var markerKindNames = [...]string{"unknown", "function", "user_scope", "point"}

// String returns the lower-case enum name, or the number when unknown.
func (v MarkerRecordKind) String() string { return enumName(markerRecordKindNames[:], uint64(v)) }

// String returns the lower-case enum name, or the number when unknown.
func (v MarkerKind) String() string { return enumName(markerKindNames[:], uint64(v)) }

func enumName(names []string, v uint64) string {
	if v < uint64(len(names)) {
		return names[v]
	}
	return strconv.FormatUint(v, 10)
}

func enumNameSigned(names []string, v int64) string {
	if v >= 0 && v < int64(len(names)) {
		return names[v]
	}
	return strconv.FormatInt(v, 10)
}

// PC is a program counter: an ELF virtual address inside the code object
// CodeObjectID, or a raw GPU address when CodeObjectID is 0. The zero PC means
// "unresolved".
type PC struct {
	Address      uint64
	CodeObjectID uint64
}

// PerfEvent is one perf-counter sample (gfx9).
type PerfEvent struct {
	Time   int64
	Events [4]uint16 // events0..events3
	CU     uint8
	Bank   uint8
}

// Occupancy records a wave start or end. The C bit-field word is kept
// unpacked; ReservedBits holds its bits 21..31 so nothing is lost.
type Occupancy struct {
	PC           PC
	Time         uint64
	Reserved     uint8
	CU           uint8
	SIMD         uint8
	WaveID       uint8
	Start        bool
	MEID         uint8 // 3 bits
	PipeID       uint8 // 4 bits
	IsExt        bool
	WorkgroupID  uint8 // 7 bits
	ClusterID    uint8 // 5 bits
	ReservedBits uint32
}

// WaveState is one segment of a wave timeline.
type WaveState struct {
	Type     WaveStateType
	Duration int32
}

// Instruction is one executed instruction of a wave. Stall holds 24 bits in
// the C struct. Time is the first issue attempt, Time+Stall the issue and
// Time+Duration the completion.
type Instruction struct {
	Category InstCategory
	Stall    uint32
	Duration int32
	Time     int64
	PC       PC
}

// Wave is one wave with its timeline and instructions. Size is the C struct
// size the decoder reported (64, or 0 for the 0.1.6 layout).
type Wave struct {
	CU           uint8
	SIMD         uint8
	WaveID       uint8
	Contexts     uint8
	Dispatcher   uint8
	WorkgroupID  uint8
	ClusterID    uint8
	Reserved     uint8
	Size         uint64
	BeginTime    int64
	EndTime      int64
	Timeline     []WaveState
	Instructions []Instruction
}

// Realtime pairs a shader clock with the realtime clock.
type Realtime struct {
	ShaderClock   int64
	RealtimeClock uint64
	Reserved      uint64
}

// ShaderData is a value written by s_ttracedata or s_ttracedata_imm.
// Flags is a mask of 1<<ShaderDataIMM and 1<<ShaderDataPRIV.
type ShaderData struct {
	Time     int64
	Value    uint64
	CU       uint8
	SIMD     uint8
	WaveID   uint8
	Flags    uint8
	Reserved uint32
}

// Shader data flag bit positions.
const (
	ShaderDataIMM  = 0
	ShaderDataPRIV = 1
)

// OtherSIMD is an instruction seen issuing on another SIMD (gfx11+).
type OtherSIMD struct {
	Size     uint64
	Time     int64
	Cycles   uint16
	WGP      uint8
	Category InstCategory
}

// Event is one EVENT record. Payload is the raw 8-byte union.
type Event struct {
	Size       uint64
	Time       int64
	Type       EventType
	MEID       uint8
	PipeID     uint8
	Flags      uint16
	Payload    uint64
	ByteOffset uint64
}

// ClusterID is the low half of the payload as a signed 32-bit value.
func (e *Event) ClusterID() int32 { return int32(uint32(e.Payload)) }

// BarrierID is the high half of the payload as a signed 32-bit value.
func (e *Event) BarrierID() int32 { return int32(uint32(e.Payload >> 32)) }

// Dispatch is one kernel dispatch derived from register writes.
type Dispatch struct {
	Size            uint64
	Time            int64
	MEID            uint8
	PipeID          uint8
	UserSGPRs       uint16
	Flags           int32
	VGPRs           uint32
	SGPRs           uint32
	LDSSize         uint32
	ThreadDim       [3]uint32 // thread_dim_x, _y, _z
	DispatchPktAddr uint64
	ByteOffset      uint64
	EntryPoint      PC
}

// Marker is one decoded marker record. Name and SourceLocation are copies of
// the C strings; NameNull and SourceNull record a NULL pointer so the record
// round-trips.
type Marker struct {
	Size           uint64
	ShaderData     ShaderData
	KernelEntry    PC
	CodeObjectID   uint64
	Name           string
	SourceLocation string
	NameNull       bool
	SourceNull     bool
	MarkerID       uint32
	RecordKind     MarkerRecordKind
	MarkerKind     MarkerKind
	MarkerFlags    uint32
	PayloadIndex   uint32
	PayloadCount   uint32
	Delay          int32
	Reserved       uint32
}

// Raw carries a batch of a record type this package does not know: the
// record count, the element size when the producer could tell it, and the
// bytes as the decoder delivered them.
type Raw struct {
	Count    uint64
	ElemSize uint64
	Data     []byte
}

// Batch is the records of one decoder callback. Type selects which field is
// meaningful: GFXIP and RTFrequency carry one value, the slices one list, and
// Raw an unknown type. A Reader reuses a Batch and its slices between calls
// to Scan.
type Batch struct {
	Type        RecordType
	GFXIP       uint64
	RTFrequency uint64
	Info        []Info
	Occupancy   []Occupancy
	PerfEvents  []PerfEvent
	Waves       []Wave
	Events      []Event
	ShaderData  []ShaderData
	Realtime    []Realtime
	OtherSIMD   []OtherSIMD
	Dispatches  []Dispatch
	Markers     []Marker
	Raw         Raw

	emptied bool // set by Keep when it dropped a single-value batch
}

// Keep removes, in place, every record i of b for which keep[i] is false
// (keep has b.Len() entries; an unknown batch counts as one record). A
// GFXIP, RT_FREQUENCY or unknown batch is kept or dropped whole; Empty then
// reports the drop. Each kept wave keeps its own slices.
func (b *Batch) Keep(keep []bool) {
	switch {
	case !b.Type.Known(), b.Type == TypeGFXIP, b.Type == TypeRTFrequency:
		if len(keep) > 0 && !keep[0] {
			b.Reset(b.Type)
			b.Raw.Count = 0
			b.emptied = true
		}
		return
	}
	b.Info = compactSlice(b.Info, keep, b.Type == TypeInfo)
	b.Occupancy = compactSlice(b.Occupancy, keep, b.Type == TypeOccupancy)
	b.PerfEvents = compactSlice(b.PerfEvents, keep, b.Type == TypePerfEvent)
	b.Events = compactSlice(b.Events, keep, b.Type == TypeEvent)
	b.ShaderData = compactSlice(b.ShaderData, keep, b.Type == TypeShaderData)
	b.Realtime = compactSlice(b.Realtime, keep, b.Type == TypeRealtime)
	b.OtherSIMD = compactSlice(b.OtherSIMD, keep, b.Type == TypeInstOtherSIMD)
	b.Dispatches = compactSlice(b.Dispatches, keep, b.Type == TypeDispatch)
	b.Markers = compactSlice(b.Markers, keep, b.Type == TypeMarker)
	if b.Type == TypeWave {
		// Swap rather than overwrite so each wave keeps its own slices.
		j := 0
		for i, k := range keep {
			if k {
				b.Waves[i], b.Waves[j] = b.Waves[j], b.Waves[i]
				j++
			}
		}
		b.Waves = b.Waves[:j]
	}
}

func compactSlice[T any](s []T, keep []bool, active bool) []T {
	if !active {
		return s
	}
	j := 0
	for i, k := range keep {
		if k {
			s[j] = s[i]
			j++
		}
	}
	return s[:j]
}

// Empty reports whether b holds no record (after Keep dropped them all).
func (b *Batch) Empty() bool {
	if b.emptied {
		return true
	}
	switch b.Type {
	case TypeGFXIP, TypeRTFrequency:
		return false
	}
	if !b.Type.Known() {
		return false
	}
	return b.Len() == 0
}

// Clone returns a deep copy of b that shares no memory with it, as a
// caller keeping a batch must make (decoders and Readers reuse theirs).
// Empty slices become nil in the copy, so that two clones of equal
// batches are reflect.DeepEqual.
func (b *Batch) Clone() Batch {
	var a Arena
	return a.Clone(b)
}

// Len returns the number of records in the batch (1 for GFXIP and
// RT_FREQUENCY, Raw.Count for unknown types).
func (b *Batch) Len() int {
	switch b.Type {
	case TypeGFXIP, TypeRTFrequency:
		return 1
	case TypeInfo:
		return len(b.Info)
	case TypeOccupancy:
		return len(b.Occupancy)
	case TypePerfEvent:
		return len(b.PerfEvents)
	case TypeWave:
		return len(b.Waves)
	case TypeEvent:
		return len(b.Events)
	case TypeShaderData:
		return len(b.ShaderData)
	case TypeRealtime:
		return len(b.Realtime)
	case TypeInstOtherSIMD:
		return len(b.OtherSIMD)
	case TypeDispatch:
		return len(b.Dispatches)
	case TypeMarker:
		return len(b.Markers)
	}
	return int(b.Raw.Count)
}

// Reset empties b for reuse, keeping the capacity of its slices.
func (b *Batch) Reset(t RecordType) {
	*b = Batch{
		Type:       t,
		Info:       b.Info[:0],
		Occupancy:  b.Occupancy[:0],
		PerfEvents: b.PerfEvents[:0],
		Waves:      b.Waves[:0],
		Events:     b.Events[:0],
		ShaderData: b.ShaderData[:0],
		Realtime:   b.Realtime[:0],
		OtherSIMD:  b.OtherSIMD[:0],
		Dispatches: b.Dispatches[:0],
		Markers:    b.Markers[:0],
		Raw:        Raw{Data: b.Raw.Data[:0]},
	}
}
