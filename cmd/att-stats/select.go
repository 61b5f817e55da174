package main

import (
	"github.com/attkit/attkit/internal/cli"
	"github.com/attkit/attkit/internal/jq"
	"github.com/attkit/attkit/internal/waveselect"
	"github.com/attkit/attkit/internal/wire"
)

// selectFlags choose the waves folded (internal/waveselect).
type selectFlags struct {
	Kernel   []string `help:"Fold only the waves of the kernels matching this glob (path.Match: * ? [..], where * spans / too; repeatable): the kernel whose code range holds a wave's first PC, else its dispatch's. Kernels the index does not name are \"<code object> / 0x<entry>\"." placeholder:"GLOB" sep:"none"`
	Dispatch []string `help:"Fold only the waves launched by dispatch N of each trace (0-based position of its DISPATCH record; repeatable)." placeholder:"N" sep:"none"`
	Wave     string   `help:"Fold one wave: slowest or fastest (by end - begin, ties to the first in stream order; the input is read twice, standard input through a temporary copy), or an ID se<SE>.cu<CU>.simd<SIMD>.slot<SLOT>@<BEGIN> (as --format histogram and att-timeline show)." placeholder:"slowest|fastest|ID"`

	hist *waveselect.Histogram // --format histogram|histogram.json
}

// selection makes the selector of f for one reading of paths. With --wave
// slowest|fastest it reads them a first time and returns the opener of the
// second reading; done removes that reading's copies.
func selection(env *cli.Env, f *flags, ix *wire.Index, filter *jq.Filter, paths []string) (sel *waveselect.Selector, open waveselect.OpenFunc, done func(), err error) {
	sel, err = waveselect.New(ix, waveselect.Options{Kernels: f.Kernel, Dispatches: f.Dispatch, Wave: f.Wave})
	if err != nil {
		return nil, nil, nil, err
	}
	if f.Format == "histogram" || f.Format == "histogram.json" {
		f.hist = waveselect.NewHistogram()
	}
	skip := func(h *wire.Header) bool { return f.Run != nil && h.Trace.Run != *f.Run }
	var apply func(*wire.Header, *wire.Batch) error
	if filter != nil {
		apply = filter.Apply
	}
	open, done, err = sel.Prepare(env.Open, paths, skip, apply)
	if err != nil {
		return nil, nil, nil, err
	}
	return sel, open, done, nil
}

// endSelection checks that the selection matched and names the wave
// --wave slowest|fastest chose (with the progress report).
func endSelection(env *cli.Env, f *flags, sel *waveselect.Selector) error {
	return sel.End(env.Stderr, env.Name, cli.ProgressWanted(f.Progress, env.Stderr))
}
