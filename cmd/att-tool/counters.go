package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/attkit/attkit/internal/capture"
	"github.com/attkit/attkit/internal/rcv"
)

// rocprofv3 records the counters an ATT capture was made with (its
// --att-perfcounters option, configuration member att_param_perfcounters:
// a list of {counter_name, simd_mask}) in the configuration file it writes
// with --output-config, <prefix>_config.json beside the traces, where
// <prefix> is its output file name (the process id by default, the
// <pid> of the traces' <pid>_<agent>_ names):
//
//	{"rocprofiler-sdk-tool": [{"metadata": {"config": {
//	    "att_param_perfcounters": [{"counter_name": "SQ_WAVES", "simd_mask": 15}, …], …}, …}}]}
//
// rocprofv3's own viewer writer names the counters NAME, or NAME:<hex mask>
// when the SIMD mask is not 0xf; so does att-tool.
type rocprofConfig struct {
	Tool []struct {
		Metadata struct {
			Config struct {
				Counters *[]struct {
					Name     string  `json:"counter_name"`
					SIMDMask *uint32 `json:"simd_mask"`
				} `json:"att_param_perfcounters"`
			} `json:"config"`
		} `json:"metadata"`
	} `json:"rocprofiler-sdk-tool"`
}

// captureCounters returns the counters rocprofv3's configuration file for
// the group's process records, and the file; no file (or one without the
// member) gives none.
func captureCounters(g *capture.Group) ([]string, string, error) {
	if len(g.Traces) == 0 || g.Key == "" {
		return nil, "", nil
	}
	pid, _, _ := strings.Cut(g.Key, "_")
	path := filepath.Join(filepath.Dir(g.Traces[0].Path), pid+"_config.json")
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	var cfg rocprofConfig
	if err := json.Unmarshal(data, &cfg); err != nil {
		return nil, "", fmt.Errorf("%s: not a rocprofv3 configuration file: %v", path, err)
	}
	var names []string
	for _, t := range cfg.Tool {
		list := t.Metadata.Config.Counters
		if list == nil {
			continue
		}
		for _, c := range *list {
			n := c.Name
			if c.SIMDMask != nil && *c.SIMDMask != 0xf {
				n += ":" + strconv.FormatUint(uint64(*c.SIMDMask), 16)
			}
			names = append(names, n)
		}
		break
	}
	if names, err = rcv.ParseCounters(names); err != nil {
		return nil, "", fmt.Errorf("%s: %w", path, err)
	}
	return names, path, nil
}
