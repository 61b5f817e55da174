package publish

import (
	"os"
	"path/filepath"
	"sync"
)

// discardAtOnce is the most entries (files and folders, at any depth) a
// work folder may hold to be removed before discard returns; a larger one
// (a viewer folder of hundreds of thousands of files takes seconds to
// remove) is renamed aside and removed by the remover (discard).
var discardAtOnce = 1024

// discard removes the work file or folder p of this process, or what a
// dead run left (Sweep), so that the caller never waits for a large tree:
// a file or a folder of at most discardAtOnce entries is removed at once
// (a folder after being renamed aside); a larger folder is renamed aside
// to a name the remover owns, .attkit.del-<pid>-<random> (attkit-attkit.del-…
// in the system's temporary directory), and removed by the remover, a
// detached process that starts on the first such folder and removes them
// once this process has exited (Unix; elsewhere the folder is removed at
// once). Where the remover cannot be started the folder keeps a name of
// this process, which the next run's Sweep removes. p that is gone is no
// error: an interrupt and the run may discard the same path.
func discard(p string) {
	st, err := os.Lstat(p)
	if err != nil {
		return
	}
	if !st.IsDir() {
		for range 3 {
			if err := os.Remove(p); err == nil || os.IsNotExist(err) {
				return
			}
		}
		return
	}
	if !small(p, discardAtOnce) && handOff(p) {
		return
	}
	// Renamed first, so that a writer still creating files by path cannot
	// add to it while it is removed.
	if del := delName(filepath.Dir(p), os.Getpid()); os.Rename(p, del) == nil {
		p = del
	}
	for range 3 {
		if os.RemoveAll(p) == nil {
			return
		}
	}
}

// delName is a name in dir for a folder being removed by process pid.
func delName(dir string, pid int) string {
	return workNameOf(dir, "attkit", kindDel, pid)
}

// small reports whether folder p holds at most n entries, at any depth. It
// reads no more than n+1 names.
func small(p string, n int) bool {
	left := n
	var walk func(d string) bool
	walk = func(d string) bool {
		f, err := os.Open(d)
		if err != nil {
			return true // what cannot be read cannot be counted: removed at once
		}
		defer f.Close()
		for {
			ents, err := f.ReadDir(256)
			for _, e := range ents {
				if left--; left < 0 {
					return false
				}
				if e.IsDir() && !walk(filepath.Join(d, e.Name())) {
					return false
				}
			}
			if err != nil {
				return true
			}
		}
	}
	return walk(p)
}

// openFiles holds the Files whose folder is held open, so that an
// interrupt closes them before it removes the folders: a file created
// relative to a held folder would land in it even after its rename.
var openFiles = struct {
	sync.Mutex
	m map[*Files]bool
}{m: map[*Files]bool{}}

// closeOpenFiles closes every Files still holding its folder open: the
// file being created finishes first, later ones fail.
func closeOpenFiles() {
	openFiles.Lock()
	var fs []*Files
	for d := range openFiles.m {
		fs = append(fs, d)
	}
	openFiles.Unlock()
	for _, d := range fs {
		d.Close()
	}
}
