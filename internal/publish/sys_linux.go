package publish

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// exchange swaps two paths atomically (renameat2 RENAME_EXCHANGE).
func exchange(a, b string) error {
	return unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
}

// holdDirs: a Set holds its folders open (syncTree syncs through them).
const holdDirs = true

// syncTree puts folder dir and all it holds on disk: one syncfs(2) of its
// file system rather than an fsync per file (syncfs), through held, the
// folder open since it was made, when there is one.
func syncTree(dir string, held *os.File) error {
	if held != nil {
		return syncfs(held)
	}
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return syncfs(f)
}

// syncfs flushes the file system of f. The syncfs(2) call is made by a
// helper process that inherits f (so that a write-back error since f was
// opened is reported, as by a syncfs of f here), and waited for unless the
// run is interrupted first (errInterrupted): a process cannot end while
// one of its threads is in syncfs, which takes seconds after a large tree
// was written; the helper finishes it alone. Where the helper cannot be
// started, the call is made here.
func syncfs(f *os.File) error {
	var out bytes.Buffer
	cmd, err := startSyncfs(f, &out)
	if err != nil {
		return os.NewSyscallError("syncfs", unix.Syncfs(int(f.Fd())))
	}
	if err = untilInterrupted(cmd.Wait); err == errInterrupted {
		return err
	}
	switch s := strings.TrimSpace(out.String()); {
	case s == "ok" && err == nil:
		return nil
	case strings.HasPrefix(s, "errno "):
		n, _ := strconv.Atoi(strings.TrimPrefix(s, "errno "))
		return &os.SyscallError{Syscall: "syncfs", Err: syscall.Errno(n)}
	case err == nil:
		err = fmt.Errorf("said %q", s)
	}
	return fmt.Errorf("syncfs helper: %w", err)
}

// runSyncfs is the syncfs helper's work: syncfs of its standard input,
// then "ok" or "errno N" on its standard output.
func runSyncfs() {
	if err := unix.Syncfs(0); err != nil {
		n, ok := err.(syscall.Errno)
		if !ok {
			n = syscall.EIO
		}
		fmt.Printf("errno %d\n", int(n))
		return
	}
	fmt.Println("ok")
}
