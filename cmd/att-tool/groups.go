package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/attkit/attkit/internal/cli"
	"github.com/attkit/attkit/internal/tracename"
)

// rocprofv3 names a process's files <pid>_<agent>_shader_engine_<SE>_<run>.att
// and <pid>_<agent>_code_object_id_<N>.<ext> (python-layer §6.4).
var (
	traceGroupRE  = regexp.MustCompile(`(?i)^(.+)_shader_engine_[0-9]+_[0-9]+\.att$`)
	objectGroupRE = regexp.MustCompile(`(?i)^(.+?)_code_object_id_[0-9]+`)
)

// A group is what one process and agent of a capture left: its traces and
// the code objects named after it. Code objects named after no group
// belong to every group.
type group struct {
	key     string // "<pid>_<agent>", "" for traces not named by rocprofv3
	traces  []tracename.Trace
	objects []string
}

// label names the group in messages.
func (g *group) label() string {
	if g.key == "" {
		return "traces without a <pid>_<agent>_ prefix"
	}
	if pid, agent, ok := strings.Cut(g.key, "_"); ok {
		return fmt.Sprintf("%s (process %s, agent %s)", g.key, pid, agent)
	}
	return g.key
}

func groupKey(re *regexp.Regexp, path string) string {
	if m := re.FindStringSubmatch(filepath.Base(path)); m != nil {
		return m[1]
	}
	return ""
}

// groupInputs splits the traces and code objects by the process and agent
// of their names. pick (--group) keeps one group.
func groupInputs(fd *found, pick string) ([]*group, error) {
	var groups []*group
	byKey := map[string]*group{}
	for _, t := range fd.traces {
		k := groupKey(traceGroupRE, t)
		g := byKey[k]
		if g == nil {
			g = &group{key: k}
			byKey[k] = g
			groups = append(groups, g)
		}
		g.traces = append(g.traces, tracename.Trace{Path: t})
	}
	var shared []string
	for _, o := range fd.objects {
		if g := byKey[groupKey(objectGroupRE, o)]; g != nil && g.key != "" {
			g.objects = append(g.objects, o)
		} else {
			shared = append(shared, o)
		}
	}
	for _, g := range groups {
		g.objects = append(g.objects, shared...)
		paths := make([]string, len(g.traces))
		for i, t := range g.traces {
			paths[i] = t.Path
		}
		g.traces = tracename.Assign(paths)
	}
	if pick != "" {
		g := byKey[pick]
		if g == nil || pick == "" {
			var keys []string
			for _, g := range groups {
				keys = append(keys, g.key)
			}
			return nil, cli.Errorf(cli.ExitUsage, "--group %s: no traces named %s_…; the inputs hold %s", pick, pick, strings.Join(quoted(keys), ", "))
		}
		groups = []*group{g}
	}
	return groups, nil
}

func quoted(keys []string) []string {
	out := slices.Clone(keys)
	for i, k := range out {
		if k == "" {
			out[i] = "traces without a prefix"
		}
	}
	return out
}
