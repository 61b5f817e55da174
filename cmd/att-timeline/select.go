package main

import (
	"fmt"

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
	if !sel.TwoPass() {
		return sel, env.Open, func() {}, nil
	}
	in := waveselect.NewInputs(env.Open)
	var apply func(*wire.Header, *wire.Batch) error
	if filter != nil {
		apply = filter.Apply
	}
	if err := sel.FirstPass(in, paths, nil, apply); err != nil {
		in.Close()
		return nil, nil, nil, err
	}
	return sel, in.Open, func() { in.Close() }, nil
}

// endSelection checks that the selection matched and names the wave
// --wave slowest|fastest chose (when stderr is a terminal).
func endSelection(env *cli.Env, f *flags, sel *waveselect.Selector) error {
	if err := sel.Check(); err != nil {
		return err
	}
	if w, ok := sel.Chosen(); ok && sel.TwoPass() && cli.ProgressWanted(false, env.Stderr) {
		fmt.Fprintf(env.Stderr, "%s: --wave %s: %s, kernel %s, %d cycles\n", env.Name, f.Wave, w.Key, w.Kernel, w.Duration())
	}
	return nil
}
