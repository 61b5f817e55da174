package main

import (
	"os"
	"path/filepath"

	"github.com/attkit/attkit/internal/cli"
	"github.com/attkit/attkit/internal/report"
)

// writeReport writes --formats html's page of one output (att-report's,
// internal/report) into its temporary in the pipeline's publish set, so
// that it is committed with the viewer folder and the stats CSV: all new
// or all old.
func (p *pipeline) writeReport(o *output, rep *report.Report) error {
	var inputs []string
	for _, i := range o.traces {
		inputs = append(inputs, filepath.Base(p.tasks[i].t.Path))
	}
	f, err := os.OpenFile(o.tmpHTML, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	err = rep.Write(f, report.Meta{Title: "attkit report: " + filepath.Base(o.dir), Producer: p.env.Name + " " + cli.Version(), Inputs: inputs})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Chmod(o.tmpHTML, 0o644)
}
