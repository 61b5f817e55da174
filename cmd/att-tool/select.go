package main

import "github.com/attkit/attkit/internal/waveselect"

// selectFlags choose the waves written (internal/waveselect); every other
// record is written as without them.
type selectFlags struct {
	Kernel   []string `help:"Write only the waves (viewer wave files, counters, stats CSV) of the kernels matching this glob (path.Match: * ? [..], where * spans / too; repeatable): the kernel whose code range holds a wave's first PC, else its dispatch's. Occupancy, events and the other records stay whole." placeholder:"GLOB" sep:"none"`
	Dispatch []string `help:"Write only the waves launched by dispatch N of each trace (0-based position of its DISPATCH record; repeatable)." placeholder:"N" sep:"none"`
}

func (f *selectFlags) selectOptions() waveselect.Options {
	return waveselect.Options{Kernels: f.Kernel, Dispatches: f.Dispatch}
}

// checkSelection fails (exit 1, nothing published) when a --kernel or
// --dispatch matched no wave of any output, naming what they hold.
func (p *pipeline) checkSelection() error {
	var sels []*waveselect.Selector
	for _, o := range p.outs {
		if o.sel != nil {
			sels = append(sels, o.sel)
		}
	}
	return waveselect.CheckAll(sels...)
}
