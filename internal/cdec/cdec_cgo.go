//go:build cgo

package cdec

/*
#cgo linux LDFLAGS: -ldl -lpthread
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "cdec.h"
#include "session.h"

_Static_assert(sizeof(cdec_pc) == 16, "pc");
_Static_assert(sizeof(cdec_perfevent) == 24, "perfevent");
_Static_assert(sizeof(cdec_occupancy) == 32, "occupancy");
_Static_assert(sizeof(cdec_wave_state) == 8, "wave_state");
_Static_assert(sizeof(cdec_inst) == 32, "inst");
_Static_assert(sizeof(cdec_wave) == 64, "wave");
_Static_assert(sizeof(cdec_realtime) == 24, "realtime");
_Static_assert(sizeof(cdec_shaderdata) == 24, "shaderdata");
_Static_assert(sizeof(cdec_other_simd) == 24, "other_simd");
_Static_assert(sizeof(cdec_event) == 40, "event");
_Static_assert(sizeof(cdec_dispatch) == 80, "dispatch");
_Static_assert(sizeof(cdec_marker) == 104, "marker");
_Static_assert(offsetof(cdec_marker, name) == 56, "marker.name");
_Static_assert(offsetof(cdec_dispatch, entry_point) == 64, "dispatch.entry_point");
// What every library callback touches is two cache lines (session.h).
_Static_assert(sizeof(((cdec_session*)0)->p) == 64, "session: producer line");
_Static_assert(offsetof(cdec_session, layout) == 64 && sizeof(cdec_layout) == 64, "session: layout line");
_Static_assert(sizeof(cdec_isa_entry) == 64, "ISA cache entry: one line");
_Static_assert(sizeof(cdec_item) % 8 == 0, "ring item header keeps 8-byte alignment");

// dlopen and dlerror in one call, so the error belongs to this thread.
static uintptr_t cdec_dlopen(const char* path, char* err, size_t errlen) {
	void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		const char* e = dlerror();
		if (e == NULL) e = "dlopen failed";
		strncpy(err, e, errlen - 1);
		err[errlen - 1] = 0;
	}
	return (uintptr_t)h;
}

static void* cdec_dlsym(uintptr_t h, const char* name) {
	dlerror();
	return dlsym((void*)h, name);
}

// cdec_origin writes the file that holds sym (the library actually loaded).
static int cdec_origin(void* sym, char* out, size_t outlen) {
	Dl_info info;
	if (sym == NULL || dladdr(sym, &info) == 0 || info.dli_fname == NULL) return 0;
	strncpy(out, info.dli_fname, outlen - 1);
	out[outlen - 1] = 0;
	return 1;
}

static const char* cdec_string(void* fn, int v) {
	return ((const char* (*)(int))fn)(v);
}
static int cdec_create_handle(void* fn, uint64_t* out) {
	cdec_handle h = {0};
	int s = ((int (*)(cdec_handle*))fn)(&h);
	*out = h.handle;
	return s;
}
static int cdec_destroy_handle(void* fn, uint64_t h) {
	cdec_handle hh = {h};
	return ((int (*)(cdec_handle))fn)(hh);
}
static int cdec_set_isa(void* fn, uint64_t h, int enable, uintptr_t ud) {
	cdec_handle hh = {h};
	return ((int (*)(cdec_handle, isa_cb_t, void*))fn)(hh, enable ? cdec_isa_tramp : NULL, (void*)ud);
}
static int cdec_set_se(void* fn, uint64_t h, int enable, uintptr_t ud) {
	cdec_handle hh = {h};
	return ((int (*)(cdec_handle, data_cb_t, void*))fn)(hh, enable ? cdec_data_tramp : NULL, (void*)ud);
}
static int cdec_codeobj_load(void* fn, uint64_t h, uint64_t id, uint64_t addr, uint64_t size, const void* elf, uint64_t elf_size) {
	cdec_handle hh = {h};
	return ((int (*)(cdec_handle, uint64_t, uint64_t, uint64_t, const void*, uint64_t))fn)(
		hh, id, addr, size, elf, elf_size);
}
static int cdec_codeobj_unload(void* fn, uint64_t h, uint64_t id) {
	cdec_handle hh = {h};
	return ((int (*)(cdec_handle, uint64_t))fn)(hh, id);
}
static int cdec_get_version(void* fn, uint32_t* major, uint32_t* minor, uint32_t* patch) {
	cdec_version v;
	memset(&v, 0, sizeof v);
	v.size = sizeof v;
	int s = ((int (*)(cdec_version*))fn)(&v);
	*major = v.major; *minor = v.minor; *patch = v.patch;
	return s;
}
static size_t cdec_strnlen(const char* s, size_t max) { return strnlen(s, max); }


*/
import "C"

import (
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/cgo"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/attkit/attkit/internal/backend"
	"github.com/attkit/attkit/internal/exitcode"
	"github.com/attkit/attkit/internal/isa"
	"github.com/attkit/attkit/internal/wire"
)

// library is one dlopen'ed decoder library. Libraries are never closed:
// the decoder may own threads and static state.
type library struct {
	path    string // file the loader used
	fns     C.cdec_fns
	v2      bool
	version string
}

const symPrefix = "rocprof_trace_decoder_"

// symbol names and where they go, with the API generation that needs them.
type symbol struct {
	name string
	slot func(f *C.cdec_fns) *unsafe.Pointer
}

var symbols = []symbol{
	{"parse_data", func(f *C.cdec_fns) *unsafe.Pointer { return &f.parse_data }},
	{"get_info_string", func(f *C.cdec_fns) *unsafe.Pointer { return &f.get_info_string }},
	{"get_status_string", func(f *C.cdec_fns) *unsafe.Pointer { return &f.get_status_string }},
	{"create_handle", func(f *C.cdec_fns) *unsafe.Pointer { return &f.create_handle }},
	{"destroy_handle", func(f *C.cdec_fns) *unsafe.Pointer { return &f.destroy_handle }},
	{"set_isa_callback", func(f *C.cdec_fns) *unsafe.Pointer { return &f.set_isa_callback }},
	{"set_se_data_callback", func(f *C.cdec_fns) *unsafe.Pointer { return &f.set_se_data_callback }},
	{"set_record_filter", func(f *C.cdec_fns) *unsafe.Pointer { return &f.set_record_filter }},
	{"parse", func(f *C.cdec_fns) *unsafe.Pointer { return &f.parse }},
	{"codeobj_load", func(f *C.cdec_fns) *unsafe.Pointer { return &f.codeobj_load }},
	{"codeobj_unload", func(f *C.cdec_fns) *unsafe.Pointer { return &f.codeobj_unload }},
	{"get_version", func(f *C.cdec_fns) *unsafe.Pointer { return &f.get_version }},
}

// Symbols each API generation needs. get_version and set_record_filter are
// optional (newer libraries only).
var (
	needCommon = []string{"get_info_string", "get_status_string"}
	needV1     = []string{"parse_data"}
	needV2     = []string{"create_handle", "destroy_handle", "set_isa_callback",
		"set_se_data_callback", "parse", "codeobj_load", "codeobj_unload"}
)

var (
	libMu   sync.Mutex
	libs    = map[string]*library{} // by the path handed to dlopen
	lastLib atomic.Pointer[library] // for InfoString and StatusString
)

// Load loads the decoder library. An empty path means the standard lookup
// order (python-layer.md §7): ROCPROF_TRACE_DECODER_LIB, LD_LIBRARY_PATH
// entries, ROCM_HOME/lib, ROCM_PATH/lib, TheRock package roots,
// /opt/rocm/lib, then the dynamic loader with the unversioned name and the
// SONAMEs. Errors carry exit code 4 and list every place that was tried.
// With the V2 API, Load also creates the decoder handle; Close destroys it.
func Load(path string) (*Decoder, error) {
	pl := lookup(path, os.Getenv, pythonSitePackages(os.Getenv))
	lib, err := openPlan(pl)
	if err != nil {
		return nil, err
	}
	d := &Decoder{lib: lib, objs: map[uint64]unsafe.Pointer{}}
	if lib.v2 {
		var h C.uint64_t
		if s := int(C.cdec_create_handle(lib.fns.create_handle, &h)); s != StatusSuccess {
			return nil, exitcode.Errorf(exitcode.NoLibrary, "%s", statusText("create_handle", s, lib.statusString(s)))
		}
		d.handle = h
	}
	lastLib.Store(lib)
	return d, nil
}

func openPlan(pl plan) (*library, error) {
	if pl.file != "" {
		lib, err := openLibrary(pl.file)
		if err != nil {
			what := pl.file
			if pl.origin != "search" {
				what = pl.origin + " " + pl.file
			}
			return nil, exitcode.Errorf(exitcode.NoLibrary, "cannot use the rocprof-trace-decoder library; looked at:%s",
				pl.describe([]attempt{{where: what, err: err.Error()}}))
		}
		return lib, nil
	}
	var tried []attempt
	for _, name := range pl.loaders {
		lib, err := openLibrary(name)
		if err == nil {
			return lib, nil
		}
		tried = append(tried, attempt{where: "dynamic loader: " + name, err: err.Error()})
		var se *symbolError
		if errors.As(err, &se) {
			break // found a library, but not a usable one
		}
	}
	return nil, exitcode.Errorf(exitcode.NoLibrary,
		"rocprof-trace-decoder library not found (install ROCm or set %s to the path of %s); looked at:%s",
		EnvLib, libBase, pl.describe(tried))
}

// symbolError reports a library that lacks entry points.
type symbolError struct {
	path    string
	missing []string
}

func (e *symbolError) Error() string {
	return fmt.Sprintf("%s is not a usable rocprof-trace-decoder: missing symbol(s) %s",
		e.path, strings.Join(e.missing, ", "))
}

func openLibrary(name string) (*library, error) {
	libMu.Lock()
	defer libMu.Unlock()
	if lib, ok := libs[name]; ok {
		return lib, nil
	}
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var errbuf [512]C.char
	h := C.cdec_dlopen(cname, &errbuf[0], C.size_t(len(errbuf)))
	if h == 0 {
		// dlerror repeats the name: "NAME: cannot open shared object file".
		msg := strings.TrimPrefix(C.GoString(&errbuf[0]), name+": ")
		return nil, errors.New(msg)
	}
	lib := &library{path: name}
	for _, s := range symbols {
		cs := C.CString(symPrefix + s.name)
		*s.slot(&lib.fns) = C.cdec_dlsym(h, cs)
		C.free(unsafe.Pointer(cs))
	}
	has := func(n string) bool {
		for _, s := range symbols {
			if s.name == n {
				return *s.slot(&lib.fns) != nil
			}
		}
		return false
	}
	var missing []string
	need := func(names []string) {
		for _, n := range names {
			if !has(n) {
				missing = append(missing, symPrefix+n)
			}
		}
	}
	need(needCommon)
	switch {
	case has("create_handle"):
		lib.v2 = true
		need(needV2)
	case has("parse_data"):
		need(needV1)
	default:
		missing = append(missing, symPrefix+"create_handle (V2) or "+symPrefix+"parse_data (V1)")
	}
	if len(missing) > 0 {
		return nil, &symbolError{path: name, missing: missing}
	}
	var buf [4096]C.char
	if C.cdec_origin(lib.fns.get_status_string, &buf[0], C.size_t(len(buf))) != 0 {
		lib.path = C.GoString(&buf[0])
	}
	lib.version = lib.readVersion()
	libs[name] = lib
	return lib, nil
}

// readVersion asks get_version (0.2.2+); else it reads the version suffix of
// the real file name (librocprof-trace-decoder.so.0.1.6 → 0.1.6), else of
// the ELF SONAME (librocprof-trace-decoder.so.0.1 → 0.1), else it names the
// series the API implies: "0.1" for V1 (parse_data only), "0.2" for V2.
func (l *library) readVersion() string {
	if l.fns.get_version != nil {
		var major, minor, patch C.uint32_t
		if C.cdec_get_version(l.fns.get_version, &major, &minor, &patch) == StatusSuccess {
			return fmt.Sprintf("%d.%d.%d", major, minor, patch)
		}
	}
	p := l.path
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	if v := versionSuffix(filepath.Base(p)); v != "" {
		return v
	}
	if f, err := elf.Open(p); err == nil {
		names, _ := f.DynString(elf.DT_SONAME)
		f.Close()
		if len(names) == 1 {
			if v := versionSuffix(names[0]); v != "" {
				return v
			}
		}
	}
	if l.v2 {
		return "0.2"
	}
	return "0.1"
}

// versionSuffix returns "0.1.6" for "librocprof-trace-decoder.so.0.1.6", ""
// when the name carries no numeric version.
func versionSuffix(name string) string {
	v, ok := strings.CutPrefix(name, libBase+".")
	if !ok || v == "" {
		return ""
	}
	for _, part := range strings.Split(v, ".") {
		if _, err := strconv.ParseUint(part, 10, 32); err != nil {
			return ""
		}
	}
	return v
}

func (l *library) statusString(s int) string {
	return cText(C.cdec_string(l.fns.get_status_string, C.int(s)))
}

func (l *library) infoString(v wire.Info) string {
	return cText(C.cdec_string(l.fns.get_info_string, C.int(v)))
}

// cText copies a C string of bounded length; NULL is "".
func cText(p *C.char) string {
	if p == nil {
		return ""
	}
	n := C.cdec_strnlen(p, maxTextLen)
	return C.GoStringN(p, C.int(n))
}

// Decoder is a loaded rocprof-trace-decoder library and, for the V2 API,
// one decoder handle. It implements backend.Decoder. Calls are serialized.
type Decoder struct {
	lib    *library
	mu     sync.Mutex
	handle C.uint64_t
	closed bool
	objs   map[uint64]unsafe.Pointer // C copies of loaded code objects
	stale  []unsafe.Pointer          // replaced copies, freed on Close
}

var _ backend.Decoder = (*Decoder)(nil)

// Name implements backend.Decoder: "rocm".
func (d *Decoder) Name() string { return BackendName }

// Version implements backend.Decoder: the library's version, "" if unknown.
func (d *Decoder) Version() string { return d.lib.version }

// Path returns the file the library was loaded from.
func (d *Decoder) Path() string { return d.lib.path }

// API returns "v2" for the handle API, "v1" for parse_data (0.1.x).
func (d *Decoder) API() string {
	if d.lib.v2 {
		return "v2"
	}
	return "v1"
}

// InfoString returns the library's text for an info value.
func (d *Decoder) InfoString(v wire.Info) string { return d.lib.infoString(v) }

// StatusString returns the library's text for a status value.
func (d *Decoder) StatusString(s int) string { return d.lib.statusString(s) }

// InfoString returns the text of an info value from the most recently loaded
// library, or the documented text when none is loaded.
func InfoString(v wire.Info) string {
	if l := lastLib.Load(); l != nil {
		return l.infoString(v)
	}
	return fallbackInfoString(v)
}

// StatusString returns the text of a status value from the most recently
// loaded library, or the documented text when none is loaded.
func StatusString(s int) string {
	if l := lastLib.Load(); l != nil {
		return l.statusString(s)
	}
	return fallbackStatusString(s)
}

func (d *Decoder) check(op string, s C.int) error {
	if int(s) == StatusSuccess {
		return nil
	}
	code := exitcode.Failed
	switch int(s) {
	case StatusNotImplemented:
		code = exitcode.NoLibrary
	case StatusInvalidShaderData:
		code = exitcode.Format
	}
	return exitcode.Errorf(code, "%s", statusText(op, int(s), d.lib.statusString(int(s))))
}

var errClosed = exitcode.Errorf(exitcode.Failed, "rocprof-trace-decoder: decoder handle is closed")

// AddCodeObject registers a code object with the handle for the library's
// built-in disassembly (Decode with a nil provider): elf holds the file's
// bytes, loaded at addr with a loaded memory range of size bytes, under load
// id id. The library keeps using the bytes; a C copy lives until
// RemoveCodeObject or Close. Libraries without the handle API, or built
// without a disassembler, fail with exit code 4.
func (d *Decoder) AddCodeObject(id, addr, size uint64, elf []byte) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return errClosed
	}
	if !d.lib.v2 {
		return exitcode.Errorf(exitcode.NoLibrary, "%s (version %s) has only the V1 API: it cannot load code objects; decode with an index instead", d.lib.path, d.Version())
	}
	if len(elf) == 0 {
		return exitcode.Errorf(exitcode.Failed, "code object %d: empty file", id)
	}
	p := C.CBytes(elf)
	s := C.cdec_codeobj_load(d.lib.fns.codeobj_load, d.handle, C.uint64_t(id), C.uint64_t(addr), C.uint64_t(size), p, C.uint64_t(len(elf)))
	if int(s) != StatusSuccess {
		C.free(p)
		if int(s) == StatusNotImplemented {
			return exitcode.Errorf(exitcode.NoLibrary, "%s was built without a disassembler (codeobj_load returned %s): built-in disassembly is unavailable; decode with an index (co-index) instead",
				d.lib.path, d.lib.statusString(int(s)))
		}
		return d.check(fmt.Sprintf("codeobj_load id %d", id), s)
	}
	if old, ok := d.objs[id]; ok {
		// The library replaced the object; the old bytes may still be
		// referenced by it until the handle goes, so keep them alive.
		d.stale = append(d.stale, old)
	}
	d.objs[id] = p
	return nil
}

// RemoveCodeObject unloads the code object with load id id.
func (d *Decoder) RemoveCodeObject(id uint64) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return errClosed
	}
	if !d.lib.v2 {
		return exitcode.Errorf(exitcode.NoLibrary, "%s has only the V1 API: it cannot unload code objects", d.lib.path)
	}
	s := C.cdec_codeobj_unload(d.lib.fns.codeobj_unload, d.handle, C.uint64_t(id))
	if err := d.check(fmt.Sprintf("codeobj_unload id %d", id), s); err != nil {
		return err
	}
	if p, ok := d.objs[id]; ok {
		C.free(p)
		delete(d.objs, id)
	}
	return nil
}

// Close destroys the handle (once) and frees the code-object copies.
func (d *Decoder) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	var err error
	if d.lib.v2 {
		err = d.check("destroy_handle", C.cdec_destroy_handle(d.lib.fns.destroy_handle, d.handle))
	}
	for id, p := range d.objs {
		C.free(p)
		delete(d.objs, id)
	}
	for _, p := range d.stale {
		C.free(p)
	}
	d.stale = nil
	return err
}

// Decode implements backend.Decoder: it reads the whole trace from r (one
// shader engine's .att file) straight into C memory and decodes it in one
// parse call. With a nil provider, a V2 library disassembles the code
// objects given to AddCodeObject itself.
func (d *Decoder) Decode(ctx context.Context, r io.Reader, p isa.Provider, emit backend.Emit) error {
	c, err := readAllC(r)
	if err != nil {
		return err
	}
	return d.decode(ctx, []chunk{c}, true, p, emit)
}

// DecodeBuffers decodes several trace buffers in one parse call through the
// library's data callback. Each buffer is decoded as an independent trace
// (its own header and time base); the ISA cache, GFXIP, once-only infos and
// RT_FREQUENCY are shared by the call (sqtt-format.md §5.1). Empty buffers
// are skipped: the library takes an empty buffer as the end of the data.
func (d *Decoder) DecodeBuffers(ctx context.Context, bufs [][]byte, p isa.Provider, emit backend.Emit) error {
	chunks := make([]chunk, len(bufs))
	for i, b := range bufs {
		chunks[i] = chunk{goBuf: b, n: len(b)}
	}
	return d.decode(ctx, chunks, false, p, emit)
}

// A chunk is one trace buffer: Go bytes copied to C memory when the library
// asks for them, or C memory already (c non-nil).
type chunk struct {
	goBuf []byte
	c     unsafe.Pointer
	n     int
}

// fileLike is a regular file's reader: its bytes can be read in parallel.
type fileLike interface {
	io.Reader
	io.ReaderAt
	io.Seeker
}

// parallelReadMin is the size from which a regular file is read by two
// goroutines: most of a big read's time goes to mapping the fresh buffer's
// pages and copying into them, which two cores do in half the time.
const parallelReadMin = 8 << 20

// readParallel fills buf from f's current offset with two concurrent
// ReadAt calls and moves the offset past what it read. It returns how many
// bytes it read: fewer than len(buf) when the file is shorter than its
// size said; 0 (and no error) when f cannot tell its offset, leaving the
// reading to Read. Each half's pages are mapped before it is read into
// (cdec_prefault).
func readParallel(f fileLike, buf []byte) (int, error) {
	off, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return 0, nil
	}
	half := len(buf) / 2
	var n2 int
	var err2 error
	done := make(chan struct{})
	go func() {
		defer close(done)
		prefault(buf[half:])
		n2, err2 = f.ReadAt(buf[half:], off+int64(half))
	}()
	prefault(buf[:half])
	n1, err1 := f.ReadAt(buf[:half], off)
	<-done
	n := n1
	if n1 == half {
		n += n2
		if err2 != nil && err2 != io.EOF {
			return 0, err2
		}
	}
	if err1 != nil && err1 != io.EOF {
		return 0, err1
	}
	if _, err := f.Seek(off+int64(n), io.SeekStart); err != nil {
		return 0, err
	}
	return n, nil
}

// prefault maps b's pages ahead of a write (session.h cdec_prefault).
func prefault(b []byte) {
	if len(b) > 0 {
		C.cdec_prefault(unsafe.Pointer(&b[0]), C.size_t(len(b)))
	}
}

// freeC frees C memory (for tests, which cannot use cgo).
func freeC(p unsafe.Pointer) { C.free(p) }

// readAllC reads r into C memory (NULL for empty input).
func readAllC(r io.Reader) (chunk, error) {
	size := 1 << 20
	// A regular file is read into one buffer of its size (plus one byte, to
	// see the end without growing), not through doubling reallocs.
	if f, ok := r.(interface{ Stat() (os.FileInfo, error) }); ok {
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > 0 && st.Size() < 1<<40 {
			size = int(st.Size()) + 1
		}
	}
	p := C.malloc(C.size_t(size))
	if p == nil {
		return chunk{}, errors.New("out of C memory")
	}
	n := 0
	if f, ok := r.(fileLike); ok && size > parallelReadMin {
		var err error
		if n, err = readParallel(f, unsafe.Slice((*byte)(p), size-1)); err != nil {
			C.free(p)
			return chunk{}, err
		}
	}
	for {
		if n == size {
			size *= 2
			q := C.realloc(p, C.size_t(size))
			if q == nil {
				C.free(p)
				return chunk{}, fmt.Errorf("out of C memory for a %d-byte trace", size)
			}
			p = q
		}
		m, err := r.Read(unsafe.Slice((*byte)(p), size)[n:])
		n += m
		if err == io.EOF {
			break
		}
		if err != nil {
			C.free(p)
			return chunk{}, err
		}
	}
	if n == 0 {
		C.free(p)
		return chunk{}, nil
	}
	if size < n+tailSlack {
		q := C.realloc(p, C.size_t(n+tailSlack))
		if q == nil {
			C.free(p)
			return chunk{}, fmt.Errorf("out of C memory for a %d-byte trace", n)
		}
		p = q
	}
	clear(unsafe.Slice((*byte)(p), n+tailSlack)[n:])
	return chunk{c: p, n: n}, nil
}

// tailSlack zero bytes follow every trace buffer handed to the library:
// AMD's 0.1.6 decodes a token that the end of an unpadded buffer cuts,
// reading up to 7 bytes past the end (sqtt-format.md A.4 item 8.6), so
// what it reads there is defined, and is what the native decoder assumes.
const tailSlack = 16

func (d *Decoder) decode(ctx context.Context, chunks []chunk, direct bool, p isa.Provider, emit backend.Emit) error {
	s := &session{ctx: ctx, p: p, emit: emit, chunks: chunks}
	owned := false // the chunks' C memory belongs to the C session
	defer func() {
		if !owned {
			for _, c := range chunks {
				C.free(c.c)
			}
		}
	}()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return errClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if p == nil && !d.lib.v2 {
		return exitcode.Errorf(exitcode.NoLibrary, "%s (version %s) has only the V1 API and no built-in disassembly: decode with an index", d.lib.path, d.Version())
	}
	h := cgo.NewHandle(s)
	defer h.Delete()
	cs := C.cdec_session_new(C.uintptr_t(h))
	if cs == nil {
		return errors.New("rocprof-trace-decoder: out of C memory")
	}
	defer C.cdec_session_free(cs)
	s.cs = cs
	for i, c := range chunks {
		if c.c != nil && C.cdec_own(cs, c.c) == 0 {
			for _, c := range chunks[i:] {
				C.free(c.c)
			}
			owned = true
			return errors.New("rocprof-trace-decoder: out of C memory")
		}
	}
	owned = true
	setLayout(cs)
	ud := C.cdec_session_ud(cs)

	// The parse call runs on a C thread of the session (session.h); this
	// goroutine converts and emits what it copies out. Go's processors
	// make room for that thread while it runs (procs).
	procsParsing()
	s.parsing = true
	defer s.parsed()
	var started C.int
	switch {
	case !d.lib.v2:
		started = C.cdec_start(cs, C.CDEC_PARSE_V1, d.lib.fns.parse_data, 0, nil, 0)
	case direct && len(chunks) == 1:
		// As upstream's Python layer: the whole buffer in one parse
		// call (NULL and 0 for empty input).
		if err := d.setISA(p != nil, ud); err != nil {
			return err
		}
		defer d.setISA(false, 0)
		started = C.cdec_start(cs, C.CDEC_PARSE_V2, d.lib.fns.parse, d.handle, chunks[0].c, C.uint64_t(chunks[0].n))
	default:
		if err := d.setISA(p != nil, ud); err != nil {
			return err
		}
		defer d.setISA(false, 0)
		if err := d.check("set_se_data_callback", C.cdec_set_se(d.lib.fns.set_se_data_callback, d.handle, 1, ud)); err != nil {
			return err
		}
		defer C.cdec_set_se(d.lib.fns.set_se_data_callback, d.handle, 0, 0)
		started = C.cdec_start(cs, C.CDEC_PARSE_V2, d.lib.fns.parse, d.handle, nil, 0)
	}
	if started == 0 {
		_, e, _ := failInfo(cs)
		return exitcode.Errorf(exitcode.Failed, "rocprof-trace-decoder: cannot start the parse thread (error %d)", e)
	}
	cerr := s.consume()
	status := C.cdec_join(cs)
	if cerr != nil {
		return cerr
	}
	if err := s.failure(); err != nil {
		return err
	}
	if int(status) == StatusNotImplemented && p == nil {
		return exitcode.Errorf(exitcode.NoLibrary, "%s cannot disassemble by itself (parse returned %s): decode with an index (co-index) instead",
			d.lib.path, d.lib.statusString(int(status)))
	}
	return d.check("parse", status)
}

// setLayout tells the C side what this package knows of the record types:
// sizes, which structs begin with their own size, which hold pointers, and
// the bounds on counts and sizes.
func setLayout(cs *C.cdec_session) {
	l := C.cdec_session_layout(cs)
	for t, r := range recordLayout {
		l.size[t] = C.uint16_t(r.size)
		if r.selfSized {
			l.flags[t] |= C.CDEC_SELF_SIZED
		}
		switch {
		case r.waves:
			l.flags[t] |= C.CDEC_WAVES
		case r.strings:
			l.flags[t] |= C.CDEC_MARKERS
		}
	}
	l.max_records = maxRecordsPerBatch
	l.max_bytes = maxBatchBytes
	l.min_elem = minRawElemSize
	l.max_elem = maxRawElemSize
	C.cdec_set_max_text(cs, maxTextLen)
}

// consume converts and emits the batches the parse thread copies into the
// session's ring, in callback order, until the parse returns. On an error
// (emit, conversion, a panic in either, a cancelled context) it stops the
// producer, whose later callbacks are then refused, and returns the error.
func (s *session) consume() (err error) {
	done := make(chan struct{})
	stopWatch := context.AfterFunc(s.ctx, func() {
		defer close(done)
		C.cdec_stop(s.cs)
	})
	defer func() {
		if r := recover(); r != nil {
			err = panicError("trace", r)
		}
		if err != nil {
			s.mu.Lock()
			s.fail(err)
			s.mu.Unlock()
			C.cdec_stop(s.cs)
		}
		if !stopWatch() {
			<-done // cs must outlive the watcher
		}
	}()
	var release C.int
	for {
		var buf *C.uint8_t
		var n C.uint64_t
		var done C.int
		ok := C.cdec_next(s.cs, release, &buf, &n, &done)
		if done != 0 {
			s.parsed() // what is left (the library's last batches) gets every core
		}
		if ok == 0 {
			return s.ctx.Err()
		}
		release = 1
		base := unsafe.Pointer(buf)
		for off := uintptr(0); off < uintptr(n); {
			it := (*C.cdec_item)(unsafe.Add(base, off))
			if err := s.ctx.Err(); err != nil {
				return err
			}
			if pooled(it) {
				// One of the library's last callbacks: the parse
				// returns while it is converted, on every processor.
				s.parsed()
			}
			if err := s.convert(it); err != nil {
				return err
			}
			if err := s.emit(&s.batch); err != nil {
				return err
			}
			off += uintptr(it.next)
		}
	}
}

// pooled tells a batch of the records the library pools to the end of
// the trace (occupancy, perf counters, realtime: one batch each, made as
// the parse finishes) large enough to be converted in parts (inParts).
func pooled(it *C.cdec_item) bool {
	switch wire.RecordType(uint32(it._type)) {
	case wire.TypeOccupancy, wire.TypePerfEvent, wire.TypeRealtime:
		return uint64(it.count) >= parallelMin
	}
	return false
}

// failInfo returns the record type and numbers of the session's failure.
func failInfo(cs *C.cdec_session) (typ, a, b uint64) {
	var t, x, y C.uint64_t
	C.cdec_fail_info(cs, &t, &x, &y)
	return uint64(t), uint64(x), uint64(y)
}

// failure is the error the producer side recorded, if any.
func (s *session) failure() error {
	t, a, b := failInfo(s.cs)
	switch C.cdec_failed(s.cs) {
	case C.CDEC_FAIL_NONE:
		return nil
	case C.CDEC_FAIL_COUNT:
		return badBatch(wire.RecordType(uint32(t)), "%d records", a)
	case C.CDEC_FAIL_BYTES:
		return badBatch(wire.RecordType(uint32(t)), "%d records of %d bytes", a, b)
	case C.CDEC_FAIL_WAVE:
		return badBatch(wire.TypeWave, "wave with %d timeline states and %d instructions", a, b)
	case C.CDEC_FAIL_NOMEM:
		return exitcode.Errorf(exitcode.Failed, "rocprof-trace-decoder: out of C memory copying a batch (%d bytes)", a)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	return exitcode.Errorf(exitcode.Failed, "rocprof-trace-decoder: decode failed")
}

// setISA installs the ISA trampoline, or NULL (built-in disassembly).
func (d *Decoder) setISA(enable bool, ud C.uintptr_t) error {
	on := C.int(0)
	if enable {
		on = 1
	}
	return d.check("set_isa_callback", C.cdec_set_isa(d.lib.fns.set_isa_callback, d.handle, on, ud))
}

// A session is the state of one parse call, reached from the callbacks
// through a cgo.Handle.
type session struct {
	ctx    context.Context
	p      isa.Provider
	emit   backend.Emit
	mu     sync.Mutex // callbacks may come from library threads
	err    error      // first error; later callbacks fail fast
	chunks []chunk    // buffers for the data callback
	next   int
	batch  wire.Batch
	cs     *C.cdec_session // C side: userdata of the library, ISA cache

	parsing bool // the parse thread counts in procs (procsParsing)
}

// parsed takes the session's parse thread out of procs, once.
func (s *session) parsed() {
	if s.parsing {
		s.parsing = false
		procsParsed()
	}
}

// procs caps Go's processors while parse threads run. A parse thread is
// a C thread that Go's scheduler does not count: on two cores, Go's two
// processors and the library's thread make three for two cores, and the
// runtime wakes idle threads onto the library's core as the consumer
// blocks and wakes, a core the library needs whole (its thread is
// att-decode's critical path). So while n parse threads run, GOMAXPROCS
// is what it was before the first of them less n, at least 1; when the
// last one returns, it is that value again, or before the conversion of a
// large whole-trace pool (pooled), which comes with the library's last
// callbacks. Reading the trace before the parse and converting its last
// batches use every processor.
var procs struct {
	sync.Mutex
	n    int // parse threads running
	base int // GOMAXPROCS before the first of them
}

// procsParsing counts a parse thread in (procsParsed counts it out).
func procsParsing() {
	procs.Lock()
	defer procs.Unlock()
	if procs.n == 0 {
		procs.base = runtime.GOMAXPROCS(0)
	}
	procs.n++
	runtime.GOMAXPROCS(max(1, procs.base-procs.n))
}

// procsParsed counts a parse thread out.
func procsParsed() {
	procs.Lock()
	defer procs.Unlock()
	procs.n--
	runtime.GOMAXPROCS(max(1, procs.base-procs.n))
}

// cbuf copies b into C memory that the session frees once the parse has
// returned; nil when out of memory.
func (s *session) cbuf(b []byte) unsafe.Pointer {
	p := C.calloc(C.size_t(len(b)+tailSlack), 1)
	if p == nil {
		return nil
	}
	C.cdec_prefault(p, C.size_t(len(b)+tailSlack))
	copy(unsafe.Slice((*byte)(p), len(b)), b)
	if C.cdec_own(s.cs, p) == 0 {
		C.free(p)
		return nil
	}
	return p
}

// fail records the first error.
func (s *session) fail(err error) {
	if s.err == nil {
		s.err = err
		if s.cs != nil {
			// The C side refuses every callback from now on.
			C.cdec_fail_go(s.cs)
		}
	}
}

// failed reports whether the session already failed or was cancelled.
func (s *session) failed() bool {
	if s.err != nil {
		return true
	}
	if err := s.ctx.Err(); err != nil {
		s.fail(err)
		return true
	}
	return false
}

func sessionOf(ud C.uintptr_t) *session {
	return cgo.Handle(ud).Value().(*session)
}

func panicError(where string, r any) error {
	return exitcode.Errorf(exitcode.Failed, "rocprof-trace-decoder: panic in the %s callback: %v", where, r)
}

// statusText formats a non-success status of a library call.
func statusText(op string, s int, text string) string {
	if text == "" {
		text = "rocprof-trace-decoder returned status " + strconv.Itoa(s)
	}
	return "rocprof-trace-decoder: " + op + ": " + text + " (status " + strconv.Itoa(s) + ")"
}
