// Command release builds attkit's commands for every platform it ships on
// and writes one archive per target into a new folder, with a SHA256SUMS
// list (the format `sha256sum -c` checks):
//
//	go run ./scripts/release -o DIR [-targets linux/amd64,...]
//
// Each build is static (CGO_ENABLED=0, so the native decoder only: AMD's
// library is a Linux cgo binding), -trimpath, stamped with the checkout's
// version. An archive, attkit-<version>-<os>-<arch>.tar.gz (.zip for
// windows), holds one folder of that name with the commands (bin/, .exe on
// Windows), README.md and docs/. Archives are reproducible: their entries
// are sorted and dated at the last commit's time, owned by no one.
//
// DIR must not exist: the archives are made in a temporary sibling, which
// is renamed to DIR when all are written, and removed on failure. Exit
// status: 0 ok, 1 a build or write failed, 2 usage.
package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Targets are the platforms attkit ships on.
var Targets = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64", "windows/amd64"}

func main() {
	out := flag.String("o", "", "the folder to write (must not exist)")
	targets := flag.String("targets", strings.Join(Targets, ","), "comma-separated GOOS/GOARCH pairs")
	flag.Parse()
	if *out == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: go run ./scripts/release -o DIR [-targets linux/amd64,...]")
		os.Exit(2)
	}
	if err := release(*out, strings.Split(*targets, ",")); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

func release(out string, targets []string) error {
	for _, t := range targets {
		if !slices.Contains(Targets, t) {
			return fmt.Errorf("unknown target %q (known: %s)", t, strings.Join(Targets, ", "))
		}
	}
	if _, err := os.Lstat(out); err == nil {
		return fmt.Errorf("%s exists: give a new folder", out)
	}
	version, err := git("describe", "--tags", "--always", "--dirty")
	if err != nil {
		return err
	}
	secs, err := git("log", "-1", "--format=%ct")
	if err != nil {
		return err
	}
	n, err := strconv.ParseInt(secs, 10, 64)
	if err != nil {
		return fmt.Errorf("commit time %q: %v", secs, err)
	}
	mtime := time.Unix(n, 0).UTC()
	tmp, err := os.MkdirTemp(filepath.Dir(filepath.Clean(out)), "."+filepath.Base(out)+".tmp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	var sums bytes.Buffer
	for _, t := range targets {
		goos, goarch, _ := strings.Cut(t, "/")
		name := "attkit-" + version + "-" + goos + "-" + goarch
		files, err := build(tmp, goos, goarch)
		if err != nil {
			return fmt.Errorf("%s: %w", t, err)
		}
		for _, doc := range []string{"README.md", "docs"} {
			if err := filepath.WalkDir(doc, func(p string, d fs.DirEntry, err error) error {
				if err == nil && d.Type().IsRegular() {
					files = append(files, entry{name: filepath.ToSlash(p), path: p, mode: 0o644})
				}
				return err
			}); err != nil {
				return err
			}
		}
		archive := name + ".tar.gz"
		if goos == "windows" {
			archive = name + ".zip"
		}
		data, err := pack(archive, name, files, mtime)
		if err != nil {
			return fmt.Errorf("%s: %w", t, err)
		}
		if err := os.WriteFile(filepath.Join(tmp, archive), data, 0o666); err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		fmt.Fprintf(&sums, "%s  %s\n", hex.EncodeToString(sum[:]), archive)
		fmt.Fprintln(os.Stderr, "release:", archive)
	}
	if err := os.RemoveAll(filepath.Join(tmp, "bin")); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, "SHA256SUMS"), sums.Bytes(), 0o666); err != nil {
		return err
	}
	return os.Rename(tmp, out)
}

// An entry is one file of an archive: its name inside the archive's folder
// and where it is now.
type entry struct {
	name, path string
	mode       int64
}

// build builds every command for goos/goarch into tmp/bin/<goos>-<goarch>.
func build(tmp, goos, goarch string) ([]entry, error) {
	bin := filepath.Join(tmp, "bin", goos+"-"+goarch)
	if err := os.MkdirAll(bin, 0o777); err != nil {
		return nil, err
	}
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin+string(os.PathSeparator), "./cmd/...")
	cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build: %v\n%s", err, out)
	}
	ents, err := os.ReadDir(bin)
	if err != nil {
		return nil, err
	}
	var files []entry
	for _, e := range ents {
		files = append(files, entry{name: "bin/" + e.Name(), path: filepath.Join(bin, e.Name()), mode: 0o755})
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("go build wrote no command")
	}
	return files, nil
}

// pack writes the archive of files under the folder dir.
func pack(archive, dir string, files []entry, mtime time.Time) ([]byte, error) {
	slices.SortFunc(files, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	var buf bytes.Buffer
	if strings.HasSuffix(archive, ".zip") {
		zw := zip.NewWriter(&buf)
		for _, f := range files {
			h := &zip.FileHeader{Name: path.Join(dir, f.name), Method: zip.Deflate, Modified: mtime}
			h.SetMode(fs.FileMode(f.mode))
			w, err := zw.CreateHeader(h)
			if err != nil {
				return nil, err
			}
			if err := copyFile(w, f.path); err != nil {
				return nil, err
			}
		}
		if err := zw.Close(); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	}
	gz, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	gz.ModTime = mtime
	tw := tar.NewWriter(gz)
	for _, f := range files {
		st, err := os.Stat(f.path)
		if err != nil {
			return nil, err
		}
		h := &tar.Header{Name: path.Join(dir, f.name), Mode: f.mode, Size: st.Size(), ModTime: mtime,
			Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if err := copyFile(tw, f.path); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func copyFile(w io.Writer, p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}

func git(args ...string) (string, error) {
	out, err := exec.Command("git", args...).Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out)), nil
}
