package main

import (
	"github.com/attkit/attkit/internal/cli"
	"github.com/attkit/attkit/internal/jq"
	"github.com/attkit/attkit/internal/waveselect"
	"github.com/attkit/attkit/internal/wire"
)

// selectFlags choose the waves shown (internal/waveselect).
type selectFlags struct {
	Kernel   []string `help:"Show only the waves of the kernels matching this glob (path.Match: * ? [..], where * spans / too; repeatable): the kernel whose code range holds a wave's first PC, else its dispatch's (a wave slice's args.kernel). Other records stay." placeholder:"GLOB" sep:"none"`
	Dispatch []string `help:"Show only the waves launched by dispatch N of each trace (0-based position of its DISPATCH record, a dispatch instant's args.dispatch; repeatable)." placeholder:"N" sep:"none"`
	Wave     string   `help:"Show one wave: slowest or fastest (by end - begin, ties to the first in stream order; the input is read twice, standard input through a temporary copy), or the wave of an ID (a wave slice's args.id: se<SE>.cu<CU>.simd<SIMD>.slot<SLOT>@<BEGIN>)." placeholder:"slowest|fastest|ID"`
}

// selection makes the selector of f. With --wave slowest|fastest it reads
// the streams a first time and returns the opener of the second reading;
// done removes that reading's copies.
func (f *flags) selection(env *cli.Env, ix *wire.Index, filter *jq.Filter, paths []string) (sel *waveselect.Selector, open waveselect.OpenFunc, done func(), err error) {
	sel, err = waveselect.New(ix, waveselect.Options{Kernels: f.Kernel, Dispatches: f.Dispatch, Wave: f.Wave})
	if err != nil {
		return nil, nil, nil, err
	}
	var apply func(*wire.Header, *wire.Batch) error
	if filter != nil {
		apply = filter.Apply
	}
	open, done, err = sel.Prepare(env.Open, paths, nil, apply)
	if err != nil {
		return nil, nil, nil, err
	}
	return sel, open, done, nil
}

// endSelection checks that the selection matched and names the wave
// --wave slowest|fastest chose (when stderr is a terminal).
func endSelection(env *cli.Env, sel *waveselect.Selector) error {
	return sel.End(env.Stderr, env.Name, cli.ProgressWanted(false, env.Stderr))
}
