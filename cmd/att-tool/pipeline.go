package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"

	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/attkit/attkit/internal/driver"
	"github.com/attkit/attkit/internal/exitcode"
	"github.com/attkit/attkit/internal/pypath"

	"github.com/attkit/attkit/internal/capture"
	"github.com/attkit/attkit/internal/cli"
	"github.com/attkit/attkit/internal/codeobj"
	"github.com/attkit/attkit/internal/fold"
	"github.com/attkit/attkit/internal/publish"
	"github.com/attkit/attkit/internal/rcv"
	"github.com/attkit/attkit/internal/report"
	"github.com/attkit/attkit/internal/snapshot"
	"github.com/attkit/attkit/internal/tracename"
	"github.com/attkit/attkit/internal/waveselect"
	"github.com/attkit/attkit/internal/wire"
)

// code is the code metadata of a group: the index and where the viewer
// folder's source snapshots come from.
type code struct {
	ix       *wire.Index
	fromJSON string // the code.json the index came from ("" when built)
	drv      *driver.Code
}

// An output is one viewer folder (and stats CSV) to write: one run of one
// group.
type output struct {
	g        *capture.Group
	counters []string // filenames.json counter_names
	run      int
	code     *code
	dir      string // target folder
	csv      string // target stats CSV ("" without csv)
	html     string // target report page ("" without html)
	tmpHTML  string
	folder   *rcv.Folder // the viewer folder, one output of pipeline.set
	tmpCSV   string
	traces   []int // indexes into pipeline.tasks, in discovery order
	noMatch  bool  // waves ran, but no instruction is in the index
	sel      *waveselect.Selector

	rwOnce sync.Once  // makes rw, for the run's writer or a direct decode
	rw     *runWriter // what turns the run's records into its outputs
	rwErr  error
}

// A task is one trace to decode into a record file, or straight into the
// writer of its run (direct).
type task struct {
	t    tracename.Trace
	code *code
	rec  string
	live *recFile // the record file as it is written (without --keep-going)
	err  error    // the decode failed (--keep-going)
	// direct is the run whose writer the decode feeds itself, with no
	// record file: the first trace of each run, without --keep-going.
	direct *output
}

type pipeline struct {
	env    *cli.Env
	f      *flags
	json   bool
	csv    bool
	html   bool
	set    *publish.Set
	tasks  []task
	outs   []*output
	made   []string // directories made for the outputs, removed on failure if empty
	prog   *progress
	drv    *driver.Driver
	quiet  bool
	warnMu sync.Mutex
}

func tool(ctx context.Context, env *cli.Env, f *flags) (err error) {
	wantJSON, wantCSV, wantHTML, err := parseFormats(f.Formats)
	if err != nil {
		return err
	}
	fd, err := capture.Discover(capture.Options{Inputs: f.Inputs, CodeObjects: f.CodeObject,
		AllowDuplicates: f.AllowDuplicates, Warn: env.Warnf})
	if err != nil {
		return err
	}
	publish.Input(fd.Traces...) // no output is, or holds, an input
	publish.Input(fd.Objects...)
	publish.Input(fd.CodeJSON)
	for _, in := range fd.Placed {
		publish.Input(in.Path)
	}
	p := &pipeline{env: env, f: f, json: wantJSON, csv: wantCSV, html: wantHTML, set: publish.NewSet(f.Force),
		quiet: os.Getenv("ATT_SUPPRESS_WARNING") != ""}
	if cli.ProgressWanted(f.Progress, env.Stderr) {
		p.prog = newProgress(env)
		defer p.prog.stop()
	}
	defer func() {
		if err != nil {
			p.set.Abort()
			for i := len(p.made) - 1; i >= 0; i-- {
				os.Remove(p.made[i]) // only if empty: another run may use it
			}
		}
	}()
	if len(fd.Traces) == 0 {
		return p.codeOnly(ctx, fd)
	}
	groups, err := capture.GroupInputs(fd, f.Group)
	if err != nil {
		return err
	}
	if len(groups) > 1 {
		var labels []string
		for _, g := range groups {
			labels = append(labels, g.Label())
		}
		env.Warnf("the inputs hold the traces of %d processes or agents: %s; writing one output per group (--group %s picks one)",
			len(groups), strings.Join(labels, ", "), groups[0].Key)
	}
	if err := p.plan(ctx, fd, groups); err != nil {
		return err
	}
	if p.drv, err = p.newDriver(); err != nil {
		return err
	}
	defer p.drv.Close()
	recs, removeRecs, err := publish.WorkDir("", "att-tool")
	if err != nil {
		return err
	}
	defer removeRecs()
	for i := range p.tasks {
		p.tasks[i].rec = filepath.Join(recs, strconv.Itoa(i)+".rec")
	}
	if p.prog != nil {
		var bytes int64
		for _, tk := range p.tasks {
			if st, err := os.Stat(tk.t.Path); err == nil {
				bytes += st.Size()
			}
		}
		p.prog.traces, p.prog.runs = len(p.tasks), len(p.outs)
		p.prog.start("decode", fmt.Sprintf("decoding %d traces (%s), %d at once", len(p.tasks), size(bytes), min(f.Jobs, len(p.tasks))))
	}
	if f.KeepGoing {
		err = p.decodeThenWrite(ctx)
	} else {
		err = p.decodeAndWrite(ctx)
	}
	if err != nil {
		return err
	}
	var outs []*output // those written
	for _, o := range p.outs {
		if o.folder != nil {
			outs = append(outs, o)
		}
	}
	if err := p.checkSelection(); err != nil {
		return err
	}
	p.warnNoMatch()
	if err := ctx.Err(); err != nil {
		return err
	}
	p.prog.start("commit", fmt.Sprintf("committing %d outputs", len(outs)))
	if err := p.set.Commit(); err != nil {
		return err
	}
	p.prog.stop()
	for _, o := range outs {
		fmt.Fprintln(env.Stdout, o.dir)
	}
	for _, o := range outs {
		if o.csv != "" {
			fmt.Fprintf(env.Stderr, "%s: stats CSV: %s\n", env.Name, o.csv)
		}
		if o.html != "" {
			fmt.Fprintf(env.Stderr, "%s: report: %s\n", env.Name, o.html)
		}
	}
	return p.skipped(len(outs))
}

// decodeThenWrite decodes every trace into its record file, then writes
// the runs that have a trace that decoded (--keep-going: a trace that
// fails is left out of its run, which is known only once it ended).
func (p *pipeline) decodeThenWrite(ctx context.Context) error {
	if err := each(ctx, p.f.Jobs, len(p.tasks), func(ctx context.Context, i int) error {
		tk := &p.tasks[i]
		err := p.decode(ctx, tk)
		var te *traceError
		if errors.As(err, &te) && ctx.Err() == nil {
			// Reported now, left out of its run, summed up at the end.
			tk.err = te.err
			p.warn("%s: %v", p.env.Name, te.err)
			return nil
		}
		return err
	}); err != nil {
		return err
	}
	var outs []*output // those with a trace to write
	for _, o := range p.outs {
		if slices.ContainsFunc(o.traces, func(i int) bool { return p.tasks[i].err == nil }) {
			outs = append(outs, o)
		}
	}
	for _, o := range outs {
		if err := p.open(o); err != nil {
			return err
		}
	}
	p.prog.start("write", fmt.Sprintf("writing %d runs", len(outs)))
	return each(ctx, p.f.Jobs, len(outs), func(ctx context.Context, i int) error {
		return p.write(ctx, outs[i])
	})
}

// errTraceFailed is what the writer of a run gets when a trace it follows
// failed to decode: the decode's own error is the one reported.
var errTraceFailed = errors.New("a trace of the run failed to decode")

// decodeAndWrite decodes the traces (-j at once) while the runs are
// written (-j at once). The first trace of a run is decoded straight into
// the run's writer (direct: its records are not encoded into a record file
// and read back, which cost a third of a trace's work); the writer of a
// run reads each of its other traces' record files as the decode appends
// to it, so the decode of a trace and the writing of its viewer files
// overlap. Any failure ends both.
func (p *pipeline) decodeAndWrite(ctx context.Context) error {
	for _, o := range p.outs {
		if err := p.open(o); err != nil {
			return err
		}
		if p.direct() {
			p.tasks[o.traces[0]].direct = o
		}
	}
	for i := range p.tasks {
		tk := &p.tasks[i]
		tk.live = newRecFile()
		if tk.direct != nil {
			continue // tk.live only says when the decode ended
		}
		// Made now, so that a writer can open it before its decode starts.
		f, err := os.Create(tk.rec)
		if err != nil {
			return err
		}
		f.Close()
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var decErr, wrErr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		wrErr = each(wctx, p.f.Jobs, len(p.outs), func(ctx context.Context, i int) error {
			err := p.write(ctx, p.outs[i])
			if err != nil {
				cancel()
			}
			return err
		})
	}()
	decErr = each(wctx, p.f.Jobs, len(p.tasks), func(ctx context.Context, i int) error {
		tk := &p.tasks[i]
		err := p.decode(ctx, tk)
		tk.live.end(err)
		if err != nil {
			cancel()
		}
		return err
	})
	if decErr == nil {
		p.prog.start("write", fmt.Sprintf("writing %d runs", len(p.outs)))
	}
	wg.Wait()
	for _, o := range p.outs {
		if o.rw != nil && o.rw.rep != nil {
			o.rw.rep.Close() // a run whose writer did not start
		}
	}
	// The first real failure: a decode's, else a writer's, else the
	// interrupt.
	for _, err := range []error{decErr, wrErr} {
		if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, errTraceFailed) {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return errors.Join(decErr, wrErr)
}

// skipped sums up what --keep-going left out: an error (exit 1) when a
// trace failed, nil when none did.
func (p *pipeline) skipped(written int) error {
	var bad []string
	for _, tk := range p.tasks {
		if tk.err != nil {
			bad = append(bad, tk.t.Path)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	var runs []string
	for _, o := range p.outs {
		if o.folder == nil {
			runs = append(runs, fmt.Sprintf("%s (all its traces failed)", o.dir))
		}
	}
	msg := fmt.Sprintf("--keep-going: %d of %d traces skipped: %s; %d of %d runs written",
		len(bad), len(p.tasks), strings.Join(bad, ", "), written, len(p.outs))
	if len(runs) > 0 {
		msg += ", not written: " + strings.Join(runs, ", ")
	}
	return exitcode.Errorf(exitcode.Failed, "%s", msg)
}

// baseName is --base-name, else the name of the base input's folder, else
// "att" (python-layer §6.4).
func baseName(f *flags, base string) string {
	if f.BaseName != "" {
		return f.BaseName
	}
	if n := filepath.Base(filepath.Dir(base)); n != "" && n != "/" && n != "." {
		return n
	}
	return "att"
}

// plan indexes each group's code, names the outputs and creates their
// temporaries.
func (p *pipeline) plan(ctx context.Context, fd *capture.Found, groups []*capture.Group) error {
	// Groups with the same code objects share one index.
	built := map[string]*code{}
	for _, g := range groups {
		key := strings.Join(g.Objects, "\x00")
		c := built[key]
		if c == nil {
			var err error
			if c, err = p.index(ctx, g.Objects, fd); err != nil {
				if len(groups) > 1 {
					return fmt.Errorf("group %s: %w", g.Label(), err)
				}
				return err
			}
			built[key] = c
		}
		counters, err := rcv.ParseCounters(p.f.Counters)
		if err != nil {
			return err
		}
		if len(p.f.Counters) == 0 {
			if counters, _, err = captureCounters(g); err != nil {
				return err
			}
		}
		runs := map[int][]tracename.Trace{}
		for _, t := range g.Traces {
			runs[t.Run] = append(runs[t.Run], t)
		}
		name := baseName(p.f, g.Traces[0].Path)
		if len(groups) > 1 {
			name += "_" + g.Key + "_"
		}
		for _, r := range slices.Sorted(maps.Keys(runs)) {
			o := &output{g: g, run: r, code: c, counters: counters}
			o.dir = filepath.Join(filepath.Dir(g.Traces[0].Path), "ui_output_"+name+strconv.Itoa(r))
			for _, t := range runs[r] {
				o.traces = append(o.traces, len(p.tasks))
				p.tasks = append(p.tasks, task{t: t, code: c})
			}
			p.outs = append(p.outs, o)
		}
	}
	if c := p.outs[0].code; c.ix == nil {
		p.env.Warnf("no code objects or code.json among the inputs: instructions get no PCs and no ISA text")
	}
	if d := p.f.Dir; d != "" {
		dir, err := filepath.Abs(expandHome(d))
		if err != nil {
			return err
		}
		if len(p.outs) == 1 && !occupiedByOthers(dir) {
			p.outs[0].dir = dir
		} else {
			if len(p.outs) == 1 {
				p.env.Warnf("%s holds other files: writing the run's folder inside it", d)
			}
			for _, o := range p.outs {
				o.dir = filepath.Join(dir, filepath.Base(o.dir))
			}
		}
	}
	for _, o := range p.outs {
		parent := filepath.Dir(o.dir)
		if err := p.mkdirAll(parent); err != nil {
			return err
		}
		if p.csv {
			o.csv = filepath.Join(parent, "stats_"+filepath.Base(o.dir)+".csv")
		}
		if p.html {
			// Beside the folder, as the stats CSV: the viewer folder
			// stays what the viewer reads; the same set commits all.
			o.html = filepath.Join(parent, "report_"+filepath.Base(o.dir)+".html")
		}
	}
	// Refuse an output that holds an earlier result before decoding; the
	// outputs themselves are made after it (open), when it is known which
	// runs have a trace to write (--keep-going).
	probe := publish.NewSet(p.f.Force)
	defer probe.Abort()
	for _, o := range p.outs {
		if _, err := probe.Dir(o.dir); err != nil {
			return err
		}
		if o.csv != "" {
			if _, err := probe.File(o.csv); err != nil {
				return err
			}
		}
		if o.html != "" {
			if _, err := probe.File(o.html); err != nil {
				return err
			}
		}
	}
	return probe.Check()
}

// open makes the temporaries of an output in the pipeline's Set.
func (p *pipeline) open(o *output) error {
	var err error
	if o.folder, err = rcv.NewFolder(o.dir, rcv.FolderOptions{Force: p.f.Force, Set: p.set}); err != nil {
		return err
	}
	if o.csv != "" {
		if o.tmpCSV, err = p.set.File(o.csv); err != nil {
			return err
		}
	}
	if o.html != "" {
		if o.tmpHTML, err = p.set.File(o.html); err != nil {
			return err
		}
	}
	return nil
}

// expandHome replaces a leading ~ by the user's home directory.
func expandHome(p string) string { return pypath.ExpandUser(p, userHome) }

func userHome() string {
	h, _ := os.UserHomeDir()
	return h
}

// occupiedByOthers reports whether dir holds files and is not an earlier
// output of ours (publish's mark, not the look of a viewer folder: a
// capture holds a code.json too): a single run is then written into a
// folder inside it rather than among its files.
func occupiedByOthers(dir string) bool {
	return publish.Occupied(dir) && !publish.HasMark(dir)
}

// mkdirAll creates dir and its missing parents, remembering them.
func (p *pipeline) mkdirAll(dir string) error {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil || filepath.Dir(d) == d {
			break
		}
		missing = append(missing, d)
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := os.Mkdir(missing[i], 0o777); err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("creating %s: %w", missing[i], err)
		}
		p.made = append(p.made, missing[i])
	}
	return nil
}

// index builds the index of a group's code objects (and the --code-object
// ones), or reads the code.json when there are none.
func (p *pipeline) index(ctx context.Context, objects []string, fd *capture.Found) (*code, error) {
	if len(objects) == 0 && len(fd.Placed) == 0 {
		if fd.CodeJSON == "" {
			return &code{drv: driver.NewCode(nil)}, nil
		}
		ix, err := p.env.ReadIndex(fd.CodeJSON, p.f.Lenient)
		if err != nil {
			return nil, err
		}
		return &code{ix: ix, fromJSON: fd.CodeJSON, drv: driver.NewIndexCode(ix, fd.CodeJSON)}, nil
	}
	var inputs []codeobj.Input
	if len(objects) > 0 {
		in, err := codeobj.InferIDs(objects)
		if err != nil {
			return nil, &exitcode.Error{Code: exitcode.Usage, Err: err}
		}
		inputs = in
	}
	inputs = append(inputs, fd.Placed...)
	if err := codeobj.CheckIDs(inputs); err != nil {
		return nil, &exitcode.Error{Code: exitcode.Usage, Err: err}
	}
	inputs, err := codeobj.Normalize(inputs)
	if err != nil {
		return nil, err
	}
	p.prog.start("index", fmt.Sprintf("indexing %d code objects", len(inputs)))
	ix, err := codeobj.Build(ctx, inputs, codeobj.Options{
		Objdump:  &codeobj.Objdump{},
		Producer: "att-tool " + cli.Version(),
	})
	if err != nil {
		return nil, err
	}
	return &code{ix: ix, drv: driver.NewCode(ix)}, nil
}

// codeOnly writes code.json and the source snapshots when no trace was
// given (python-layer §6.4).
func (p *pipeline) codeOnly(ctx context.Context, fd *capture.Found) error {
	var objects []string
	objects = append(objects, fd.Objects...)
	c, err := p.index(ctx, objects, fd)
	if err != nil {
		return err
	}
	if len(objects) == 0 && len(fd.Placed) == 0 && p.f.Dir == "" {
		fmt.Fprintln(p.env.Stdout, filepath.Dir(fd.CodeJSON))
		return nil
	}
	var dir string
	switch {
	case p.f.Dir != "":
		if dir, err = filepath.Abs(expandHome(p.f.Dir)); err != nil {
			return err
		}
	case len(objects) > 0:
		dir = filepath.Dir(objects[0])
	case len(fd.Placed) > 0:
		dir = filepath.Dir(fd.Placed[0].Path)
	default:
		dir = filepath.Dir(fd.CodeJSON)
	}
	// The files are made in a staging folder, then each is put in place.
	if err := p.mkdirAll(dir); err != nil {
		return err
	}
	stage, removeStage, err := publish.WorkDir(dir, "att-tool")
	if err != nil {
		return err
	}
	defer removeStage()
	if err := os.WriteFile(filepath.Join(stage, "code.json"), c.ix.CodeJSON(), 0o666); err != nil {
		return err
	}
	if c.fromJSON == "" {
		if _, err := snapshot.Write(stage, c.ix, p.snapshotOptions()); err != nil {
			return fmt.Errorf("writing source snapshots: %w", err)
		}
	}
	ents, err := os.ReadDir(stage)
	if err != nil {
		return err
	}
	for _, e := range ents {
		tmp, err := p.set.File(filepath.Join(dir, e.Name()))
		if err != nil {
			return err
		}
		if err := os.Rename(filepath.Join(stage, e.Name()), tmp); err != nil {
			return err
		}
	}
	p.prog.start("commit", fmt.Sprintf("committing %d files", len(ents)))
	if err := p.set.Commit(); err != nil {
		return err
	}
	p.prog.stop()
	fmt.Fprintln(p.env.Stdout, dir)
	return nil
}

// newDriver chooses the backend once (a missing library is reported once)
// and routes the decoders' warnings: "Warning: <trace>: <text>" as
// upstream prints them, unless ATT_SUPPRESS_WARNING is set. The -j cores
// are shared: a decode takes a second one (driver.Options.Cores) only
// while the decodes and, without --keep-going, the writers of the runs
// that run at the same time leave one spare.
func (p *pipeline) newDriver() (*driver.Driver, error) {
	atOnce := min(p.f.Jobs, len(p.tasks))
	if !p.f.KeepGoing {
		atOnce += min(p.f.Jobs, len(p.outs)) // decodeAndWrite
	}
	return driver.New(driver.Options{
		Backend: p.f.Backend, Lib: p.f.Lib, Compat: p.f.Compat,
		Producer: "att-tool " + cli.Version(), AnyArch: p.f.AnyArch,
		Cores: p.f.Jobs, AtOnce: atOnce,
		Warn: func(trace, text string) {
			switch {
			case trace == "":
				p.warnMu.Lock()
				if p.prog != nil {
					p.prog.clear()
				}
				p.env.Warnf("%s", text)
				p.warnMu.Unlock()
			case !p.quiet:
				p.warn("Warning: %s: %s", trace, text)
			}
		},
	})
}

// each runs fn(0…n-1) on at most jobs goroutines. The first error cancels
// the others and is the one returned: one message per problem.
func each(ctx context.Context, jobs, n int, fn func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu    sync.Mutex
		first error
		wg    sync.WaitGroup
		next  = make(chan int)
	)
	for range min(jobs, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := fn(ctx, i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
						cancel()
					}
					mu.Unlock()
				}
			}
		}()
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	return first
}

// direct tells whether the first trace of each run may be decoded
// straight into its writer: not with --kernel or --dispatch, whose
// selection rearranges the batches it is given (wire.Batch.Keep), which
// belong to the decoder.
func (p *pipeline) direct() bool { return len(p.f.Kernel) == 0 && len(p.f.Dispatch) == 0 }

// decode decodes one trace into its record file, or into its run's writer
// (direct).
func (p *pipeline) decode(ctx context.Context, tk *task) (err error) {
	in, err := os.Open(tk.t.Path)
	if err != nil {
		return err
	}
	defer in.Close()
	tr := driver.Trace{
		Name:   tk.t.Path,
		Header: wire.Trace{Path: tk.t.Path, SE: tk.t.SE, Run: tk.t.Run},
		Input:  in,
		Code:   tk.code.drv,
	}
	if p.prog != nil {
		tr.Read = &p.prog.bytes
	}
	if o := tk.direct; o != nil {
		rw, err := p.runWriter(o)
		if err != nil {
			return err
		}
		ds := &directSink{ctx: ctx, rw: rw, path: tk.t.Path, prog: p.prog}
		res, err := p.drv.Decode(ctx, tr, ds)
		switch {
		case ds.err != nil:
			return ds.err // the writer's, named by the trace as a record file's read
		case err != nil:
			return &traceError{err}
		}
		p.prog.traceDone(tk.t.Path, res.Bytes, ds.waves)
		return nil
	}
	out, err := os.Create(tk.rec)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := out.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	var w io.Writer = out
	if tk.live != nil {
		w = tk.live.appender(out)
	}
	rs := &recSink{w: wire.NewWriter(w), prog: p.prog}
	res, err := p.drv.Decode(ctx, tr, rs)
	if err != nil {
		return &traceError{err}
	}
	if err := rs.w.Flush(); err != nil {
		return err
	}
	p.prog.traceDone(tk.t.Path, res.Bytes, rs.waves)
	return nil
}

// A traceError is a trace that failed to decode: with --keep-going it is
// reported and left out, the other traces still written.
type traceError struct{ err error }

func (e *traceError) Error() string { return e.err.Error() }
func (e *traceError) Unwrap() error { return e.err }

// recSink writes a trace's records into its record file, counting waves.
type recSink struct {
	w     *wire.Writer
	prog  *progress
	waves int64
}

func (s *recSink) Header(h *wire.Header) error { return s.w.WriteHeader(h) }

func (s *recSink) Batch(b *wire.Batch) error {
	if b.Type == wire.TypeWave {
		s.waves += int64(len(b.Waves))
		if s.prog != nil {
			s.prog.waves.Add(int64(len(b.Waves)))
		}
	}
	return s.w.WriteBatch(b)
}

// directSink hands a trace's records straight to its run's writer,
// counting waves.
type directSink struct {
	ctx   context.Context
	rw    *runWriter
	path  string
	prog  *progress
	waves int64
	err   error // the writer's first error, named by the trace
}

func (s *directSink) Header(h *wire.Header) error {
	return s.fail(s.rw.header(h))
}

func (s *directSink) Batch(b *wire.Batch) error {
	// An interrupt takes effect within a batch, not a trace.
	if err := s.ctx.Err(); err != nil {
		return err
	}
	if b.Type == wire.TypeWave {
		s.waves += int64(len(b.Waves))
		if s.prog != nil {
			s.prog.waves.Add(int64(len(b.Waves)))
		}
	}
	return s.fail(s.rw.batch(b))
}

func (s *directSink) fail(err error) error {
	if err != nil && s.err == nil {
		s.err = fmt.Errorf("%s: %w", s.path, err)
	}
	return err
}

// snapshotOptions say where the sources are (--source) and warn of what
// is not copied.
func (p *pipeline) snapshotOptions() snapshot.Options {
	return snapshot.Options{Source: p.f.Source, Warn: func(m string) {
		p.warnMu.Lock()
		defer p.warnMu.Unlock()
		if p.prog != nil {
			p.prog.clear()
		}
		p.env.Warnf("%s", m)
	}}
}

// warn prints one line on stderr, whole among parallel decodes.
func (p *pipeline) warn(format string, args ...any) {
	p.warnMu.Lock()
	defer p.warnMu.Unlock()
	if p.prog != nil {
		p.prog.clear()
	}
	fmt.Fprintf(p.env.Stderr, format+"\n", args...)
}

// A runWriter turns the records of one run, trace after trace, into its
// outputs: the viewer folder, the fold behind the stats CSV and the report.
// It is fed by one goroutine at a time: the decode of the run's first
// trace (direct), then the run's writer.
type runWriter struct {
	fo   *fold.Fold
	sel  *waveselect.Selector
	w    *rcv.Writer
	rep  *report.Report
	prog *progress
}

// runWriter returns the writer of o's records, made at the first call.
func (p *pipeline) runWriter(o *output) (*runWriter, error) {
	o.rwOnce.Do(func() {
		sel, err := waveselect.New(o.code.ix, p.f.selectOptions())
		if err != nil {
			o.rwErr = err
			return
		}
		o.sel = sel
		fo := fold.New(o.code.ix)
		rw := &runWriter{fo: fo, sel: sel, prog: p.prog,
			w: rcv.NewWriter(o.folder, o.code.ix, fo, rcv.Options{JSON: p.json, DecodeMarkers: !p.f.NoDecodeMarkers,
				CounterNames: o.counters})}
		if p.html {
			rw.rep = report.New(o.code.ix, nil)
		}
		o.rw = rw
	})
	return o.rw, o.rwErr
}

// header begins a trace of the run.
func (rw *runWriter) header(h *wire.Header) error {
	rw.sel.BeginPart(h)
	if rw.rep != nil {
		if err := rw.rep.Header(h); err != nil {
			return err
		}
	}
	return rw.w.BeginTrace(h)
}

// batch adds a batch of the current trace; b is not retained.
func (rw *runWriter) batch(b *wire.Batch) error {
	rw.sel.Select(b)
	if rw.prog != nil && b.Type == wire.TypeWave {
		rw.prog.wavesOut.Add(int64(len(b.Waves)))
	}
	if rw.rep != nil {
		if err := rw.rep.Batch(b); err != nil {
			return err
		}
	}
	return rw.w.AddBatch(b)
}

// write writes the viewer folder and stats CSV of one output from its
// traces' record files, as att-rcv and att-stats do; the records of a
// trace decoded straight into the run's writer (direct) are in it once
// its decode ends.
func (p *pipeline) write(ctx context.Context, o *output) (err error) {
	defer func() {
		// The viewer files still being written, and their error.
		if cerr := o.folder.Close(); err == nil {
			err = cerr
		}
	}()
	rw, err := p.runWriter(o)
	if err != nil {
		return err
	}
	if rw.rep != nil {
		defer rw.rep.Close()
	}
	fo, w, rep := rw.fo, rw.w, rw.rep
	// One reader (one read buffer) for every trace's records.
	fs := wire.Files{MaxBatch: rcv.MaxBatch}
	for _, i := range o.traces {
		if err := ctx.Err(); err != nil {
			return err
		}
		tk := &p.tasks[i]
		if tk.err != nil {
			continue // --keep-going: reported, left out
		}
		if tk.direct == o {
			if err := tk.live.wait(ctx); err != nil {
				return err
			}
			continue
		}
		opened := false
		fs.Open = func(path string) (io.ReadCloser, string, error) {
			f, err := os.Open(path)
			if err != nil {
				return nil, tk.t.Path, err
			}
			opened = true
			if tk.live != nil {
				return tk.live.follow(ctx, f), tk.t.Path, nil
			}
			return f, tk.t.Path, nil
		}
		err := fs.Read(tk.rec, func(rd *wire.Reader, _ string) error {
			// An interrupt takes effect within a batch, not a trace.
			if err := ctx.Err(); err != nil {
				return err
			}
			switch rd.Kind() {
			case wire.KindHeader:
				return rw.header(rd.Header())
			case wire.KindBatch:
				return rw.batch(rd.Batch())
			}
			return nil
		})
		if errors.Is(err, errTraceFailed) {
			return err
		}
		if err != nil && opened {
			return fmt.Errorf("%s: %w", tk.t.Path, err)
		}
		if err != nil {
			return err
		}
	}
	if err := w.Finish(); err != nil {
		return err
	}
	switch {
	case o.code.fromJSON != "":
		if err := snapshot.Copy(filepath.Dir(o.code.fromJSON), o.folder.TempDir(), p.snapshotOptions()); err != nil {
			return fmt.Errorf("copying source snapshots: %w", err)
		}
	case o.code.ix != nil:
		if _, err := snapshot.Write(o.folder.TempDir(), o.code.ix, p.snapshotOptions()); err != nil {
			return fmt.Errorf("writing source snapshots: %w", err)
		}
	}
	if o.csv != "" {
		f, err := os.OpenFile(o.tmpCSV, os.O_WRONLY|os.O_TRUNC, 0)
		if err != nil {
			return err
		}
		err = fo.WriteCSV(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("writing %s: %w", o.csv, err)
		}
	}
	if rep != nil {
		if err := p.writeReport(o, rep); err != nil {
			return fmt.Errorf("writing %s: %w", o.html, err)
		}
	}
	o.noMatch = noMatch(o.code.ix, fo, w.Stats())
	if p.prog != nil {
		p.prog.written.Add(1)
	}
	return nil
}

// noMatch tells an index that matches none of the executed instructions:
// waves ran, the index has instructions, and not one of its PCs was hit.
// A capture without code-object load records (runtimes other than
// rocprofv3) gives that: its PCs are absolute.
func noMatch(ix *wire.Index, fo *fold.Fold, st rcv.Stats) bool {
	if ix == nil || st.Waves == 0 {
		return false
	}
	rows := false
	for i := range ix.Rows {
		if ix.Rows[i].Kind == wire.RowInstruction {
			rows = true
			break
		}
	}
	if !rows {
		return false
	}
	for _, e := range fo.Entries() {
		if e.InIndex && e.Hit > 0 {
			return false
		}
	}
	return true
}

// warnNoMatch warns once for all outputs whose counters are all zero.
func (p *pipeline) warnNoMatch() {
	var dirs []string
	for _, o := range p.outs {
		if o.noMatch {
			dirs = append(dirs, o.dir)
		}
	}
	if len(dirs) == 0 {
		return
	}
	p.env.Warnf("no executed instruction is in the code objects' index, so every counter is zero (%s): "+
		"a capture without code-object load records (made by a runtime other than rocprofv3) has absolute PCs; "+
		"give each code object's load address with --code-object ID=PATH@ADDR (id 0)", strings.Join(dirs, ", "))
}
