package rcv

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Formats are the outputs a run writes (python-layer §6.2).
type Formats struct {
	JSON bool // the viewer's JSON files
	CSV  bool // stats_<dir>.csv next to the folder
}

// ParseFormats reads upstream's formats argument: every item is split at
// commas, parts are trimmed and lower-cased, empty parts ignored. Only
// "json" and "csv" are accepted, matched exactly.
func ParseFormats(items []string) (Formats, error) {
	var f Formats
	unknown := map[string]bool{}
	any := false
	for _, item := range items {
		for _, p := range strings.Split(item, ",") {
			p = strings.ToLower(strings.TrimSpace(p))
			switch p {
			case "":
				continue
			case "json":
				f.JSON = true
			case "csv":
				f.CSV = true
			default:
				unknown[p] = true
			}
			any = true
		}
	}
	if !any {
		//lint:ignore ST1005 upstream's exact message (python-layer §6.2)
		return f, errors.New("No output formats requested.")
	}
	if len(unknown) > 0 {
		names := make([]string, 0, len(unknown))
		for n := range unknown {
			names = append(names, n)
		}
		sort.Strings(names)
		//lint:ignore ST1005 upstream's exact message (python-layer §6.2)
		return f, fmt.Errorf("Unsupported output format(s): %s. Expected one or more of: csv, json",
			strings.Join(names, ", "))
	}
	return f, nil
}
