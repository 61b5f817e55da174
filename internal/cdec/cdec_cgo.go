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

typedef struct { uint64_t handle; } cdec_handle;

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

// A cdec_session is the C side of one parse call; its address is the
// userdata the library gets. It holds the runtime/cgo.Handle of the Go
// session (an integer, never a Go pointer) and the ISA answer cache: the
// 0.1.x library asks for the same PC about once per wave, and a C-to-Go
// call costs far more than a hash lookup, so Go is asked once per unique
// (address, code object id) per parse, misses included. The cache holds
// the provider's answer (status, text, memory size); the buffer-size
// protocol towards the library (OUT_OF_RESOURCES, then a retry) is played
// from it on every call, exactly as the Go callback would.
typedef struct {
	uint64_t addr, coid;
	char* text;      // malloc'ed by Go, NULL when empty
	uint64_t len, mem;
	int status;      // STATUS_SUCCESS or STATUS_INVALID_ARGUMENT (a miss)
	int used;
} cdec_isa_entry;

typedef struct {
	uintptr_t handle;       // runtime/cgo.Handle of the Go session
	int32_t failed;         // set (atomically) by Go once the session failed
	pthread_mutex_t mu;     // the library may call from several threads
	cdec_isa_entry* tab;    // open addressing, power-of-two size
	size_t cap, n;
} cdec_session;

enum { CDEC_OK = 0, CDEC_ERROR = 1, CDEC_OOR = 2, CDEC_INVAL = 3 };

static cdec_session* cdec_session_new(uintptr_t handle) {
	cdec_session* s = calloc(1, sizeof *s);
	if (s == NULL) return NULL;
	s->handle = handle;
	pthread_mutex_init(&s->mu, NULL);
	return s;
}

static void cdec_session_free(cdec_session* s) {
	if (s == NULL) return;
	for (size_t i = 0; i < s->cap; i++) free(s->tab[i].text);
	free(s->tab);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

static uintptr_t cdec_session_ud(cdec_session* s) { return (uintptr_t)s; }

static size_t cdec_isa_slot(cdec_isa_entry* tab, size_t cap, uint64_t addr, uint64_t coid) {
	uint64_t h = (addr * 0x9E3779B97F4A7C15ull) ^ (coid * 0xC2B2AE3D27D4EB4Full);
	size_t i = (size_t)(h ^ (h >> 29)) & (cap - 1);
	while (tab[i].used && (tab[i].addr != addr || tab[i].coid != coid)) i = (i + 1) & (cap - 1);
	return i;
}

// cdec_isa_grow keeps the table at most half full; 0 when out of memory.
static int cdec_isa_grow(cdec_session* s) {
	if (s->cap != 0 && 2 * (s->n + 1) <= s->cap) return 1;
	size_t cap = s->cap ? 2 * s->cap : 256;
	cdec_isa_entry* tab = calloc(cap, sizeof *tab);
	if (tab == NULL) return 0;
	for (size_t i = 0; i < s->cap; i++) {
		if (s->tab[i].used) tab[cdec_isa_slot(tab, cap, s->tab[i].addr, s->tab[i].coid)] = s->tab[i];
	}
	free(s->tab);
	s->tab = tab;
	s->cap = cap;
	return 1;
}

// Trampolines: the library calls these; they hand the Go session's handle
// to the Go side as an integer.
static int cdec_trace_tramp(int type, void* data, uint64_t count, void* ud) {
	uintptr_t h = ((cdec_session*)ud)->handle;
	if (type == 0) return cdecGoTrace(0, NULL, (uint64_t)(uintptr_t)data, count, h);
	return cdecGoTrace(type, data, 0, count, h);
}
static int cdec_isa_tramp(char* text, uint64_t* memory_size, uint64_t* size, cdec_pc pc, void* ud) {
	cdec_session* s = ud;
	if (__atomic_load_n(&s->failed, __ATOMIC_ACQUIRE) || size == NULL || memory_size == NULL) return CDEC_ERROR;
	pthread_mutex_lock(&s->mu);
	size_t i = s->cap ? cdec_isa_slot(s->tab, s->cap, pc.address, pc.code_object_id) : 0;
	if (s->cap == 0 || !s->tab[i].used) {
		char* t = NULL;
		uint64_t len = 0, mem = 0;
		int st = cdecGoISA(&t, &len, &mem, pc.address, pc.code_object_id, s->handle);
		if (st != CDEC_OK && st != CDEC_INVAL) {
			free(t);
			pthread_mutex_unlock(&s->mu);
			return st;
		}
		if (!cdec_isa_grow(s)) {
			free(t);
			pthread_mutex_unlock(&s->mu);
			return CDEC_ERROR;
		}
		i = cdec_isa_slot(s->tab, s->cap, pc.address, pc.code_object_id);
		cdec_isa_entry e = {pc.address, pc.code_object_id, t, len, mem, st, 1};
		s->tab[i] = e;
		s->n++;
	}
	cdec_isa_entry e = s->tab[i]; // e.text lives until the session is freed
	pthread_mutex_unlock(&s->mu);
	if (e.status != CDEC_OK) return e.status;
	uint64_t capacity = *size;
	*size = e.len;
	*memory_size = e.mem;
	if (e.len > capacity || (text == NULL && e.len > 0)) return CDEC_OOR;
	if (e.len > 0) memcpy(text, e.text, e.len);
	return CDEC_OK;
}
static uint64_t cdec_data_tramp(uint8_t** buffer, uint64_t* size, void* ud) {
	return cdecGoData(buffer, size, ((cdec_session*)ud)->handle);
}

typedef int (*trace_cb_t)(int, void*, uint64_t, void*);
typedef int (*isa_cb_t)(char*, uint64_t*, uint64_t*, cdec_pc, void*);
typedef uint64_t (*data_cb_t)(uint8_t**, uint64_t*, void*);

// Calls through the library's function pointers.
static int cdec_parse_data(void* fn, uintptr_t ud) {
	return ((int (*)(data_cb_t, trace_cb_t, isa_cb_t, void*))fn)(
		cdec_data_tramp, cdec_trace_tramp, cdec_isa_tramp, (void*)ud);
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
static int cdec_parse(void* fn, uint64_t h, const void* data, uint64_t size, uintptr_t ud) {
	cdec_handle hh = {h};
	return ((int (*)(cdec_handle, const void*, uint64_t, trace_cb_t, void*))fn)(
		hh, data, size, cdec_trace_tramp, (void*)ud);
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
	"runtime/cgo"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/attkit/attkit/internal/backend"
	"github.com/attkit/attkit/internal/cli"
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
			return nil, cli.Errorf(cli.ExitLibrary, "%s", statusText("create_handle", s, lib.statusString(s)))
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
			return nil, cli.Errorf(cli.ExitLibrary, "cannot use the rocprof-trace-decoder library; looked at:%s",
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
	return nil, cli.Errorf(cli.ExitLibrary,
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
	code := cli.ExitFailed
	switch int(s) {
	case StatusNotImplemented:
		code = cli.ExitLibrary
	case StatusInvalidShaderData:
		code = cli.ExitFormat
	}
	return cli.Errorf(code, "%s", statusText(op, int(s), d.lib.statusString(int(s))))
}

var errClosed = cli.Errorf(cli.ExitFailed, "rocprof-trace-decoder: decoder handle is closed")

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
		return cli.Errorf(cli.ExitLibrary, "%s (version %s) has only the V1 API: it cannot load code objects; decode with an index instead", d.lib.path, d.Version())
	}
	if len(elf) == 0 {
		return cli.Errorf(cli.ExitFailed, "code object %d: empty file", id)
	}
	p := C.CBytes(elf)
	s := C.cdec_codeobj_load(d.lib.fns.codeobj_load, d.handle, C.uint64_t(id), C.uint64_t(addr), C.uint64_t(size), p, C.uint64_t(len(elf)))
	if int(s) != StatusSuccess {
		C.free(p)
		if int(s) == StatusNotImplemented {
			return cli.Errorf(cli.ExitLibrary, "%s was built without a disassembler (codeobj_load returned %s): built-in disassembly is unavailable; decode with an index (co-index) instead",
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
		return cli.Errorf(cli.ExitLibrary, "%s has only the V1 API: it cannot unload code objects", d.lib.path)
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
	return chunk{c: p, n: n}, nil
}

func (d *Decoder) decode(ctx context.Context, chunks []chunk, direct bool, p isa.Provider, emit backend.Emit) error {
	s := &session{ctx: ctx, p: p, emit: emit, chunks: chunks}
	for _, c := range chunks {
		if c.c != nil {
			s.cmem = append(s.cmem, c.c) // freed with the session
		}
	}
	defer s.free()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return errClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if p == nil && !d.lib.v2 {
		return cli.Errorf(cli.ExitLibrary, "%s (version %s) has only the V1 API and no built-in disassembly: decode with an index", d.lib.path, d.Version())
	}
	h := cgo.NewHandle(s)
	defer h.Delete()
	cs := C.cdec_session_new(C.uintptr_t(h))
	if cs == nil {
		return errors.New("rocprof-trace-decoder: out of C memory")
	}
	defer C.cdec_session_free(cs)
	s.cs = cs
	ud := C.cdec_session_ud(cs)

	var status C.int
	switch {
	case !d.lib.v2:
		status = C.cdec_parse_data(d.lib.fns.parse_data, ud)
	case direct && len(chunks) == 1:
		// As upstream's Python layer: the whole buffer in one parse
		// call (NULL and 0 for empty input).
		if err := d.setISA(p != nil, ud); err != nil {
			return err
		}
		status = C.cdec_parse(d.lib.fns.parse, d.handle, chunks[0].c, C.uint64_t(chunks[0].n), ud)
		d.setISA(false, 0)
	default:
		if err := d.setISA(p != nil, ud); err != nil {
			return err
		}
		if err := d.check("set_se_data_callback", C.cdec_set_se(d.lib.fns.set_se_data_callback, d.handle, 1, ud)); err != nil {
			d.setISA(false, 0)
			return err
		}
		status = C.cdec_parse(d.lib.fns.parse, d.handle, nil, 0, ud)
		C.cdec_set_se(d.lib.fns.set_se_data_callback, d.handle, 0, 0)
		d.setISA(false, 0)
	}
	s.mu.Lock()
	err := s.err
	s.mu.Unlock()
	if err != nil {
		return err
	}
	if int(status) == StatusNotImplemented && p == nil {
		return cli.Errorf(cli.ExitLibrary, "%s cannot disassemble by itself (parse returned %s): decode with an index (co-index) instead",
			d.lib.path, d.lib.statusString(int(status)))
	}
	return d.check("parse", status)
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
	cmem   []unsafe.Pointer // C copies handed to the library, freed after parse
	batch  wire.Batch
	cs     *C.cdec_session // C side: userdata of the library, ISA cache
}

// cbuf copies b into C memory that stays valid until the parse returns.
func (s *session) cbuf(b []byte) unsafe.Pointer {
	p := C.CBytes(b)
	s.cmem = append(s.cmem, p)
	return p
}

func (s *session) free() {
	for _, p := range s.cmem {
		C.free(p)
	}
	s.cmem = nil
}

// fail records the first error.
func (s *session) fail(err error) {
	if s.err == nil {
		s.err = err
		if s.cs != nil {
			// The C-side ISA cache answers ERROR from now on.
			atomic.StoreInt32((*int32)(unsafe.Pointer(&s.cs.failed)), 1)
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
	return cli.Errorf(cli.ExitFailed, "rocprof-trace-decoder: panic in the %s callback: %v", where, r)
}

// statusText formats a non-success status of a library call.
func statusText(op string, s int, text string) string {
	if text == "" {
		text = "rocprof-trace-decoder returned status " + strconv.Itoa(s)
	}
	return "rocprof-trace-decoder: " + op + ": " + text + " (status " + strconv.Itoa(s) + ")"
}
