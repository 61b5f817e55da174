package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRelease writes the archives of two targets twice: each holds the
// commands and the README under one folder, SHA256SUMS lists each
// archive's digest, and the second release is byte-identical to the first.
func TestRelease(t *testing.T) {
	t.Chdir("../..")
	dir := t.TempDir()
	targets := []string{"linux/amd64", "windows/amd64"}
	first, second := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if err := release(first, targets); err != nil {
		t.Fatal(err)
	}
	if err := release(second, targets); err != nil {
		t.Fatal(err)
	}
	if err := release(first, targets); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("a release into an existing folder: %v, want a refusal", err)
	}
	sums, err := os.ReadFile(filepath.Join(first, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(sums), "\n"), "\n")
	if len(lines) != len(targets) {
		t.Fatalf("SHA256SUMS has %d lines, want %d:\n%s", len(lines), len(targets), sums)
	}
	ents, _ := os.ReadDir(first)
	if len(ents) != len(targets)+1 {
		t.Errorf("the folder holds %d entries, want the %d archives and SHA256SUMS", len(ents), len(targets))
	}
	for _, l := range lines {
		sum, name, ok := strings.Cut(l, "  ")
		if !ok {
			t.Fatalf("bad SHA256SUMS line %q", l)
		}
		data, err := os.ReadFile(filepath.Join(first, name))
		if err != nil {
			t.Fatal(err)
		}
		if d := sha256.Sum256(data); hex.EncodeToString(d[:]) != sum {
			t.Errorf("%s: digest %x, SHA256SUMS says %s", name, d, sum)
		}
		again, err := os.ReadFile(filepath.Join(second, name))
		if err != nil || !bytes.Equal(again, data) {
			t.Errorf("%s: the second release differs (%v)", name, err)
		}
		folder := strings.TrimSuffix(strings.TrimSuffix(name, ".zip"), ".tar.gz")
		exe := ""
		if strings.Contains(name, "-windows-") {
			exe = ".exe"
		}
		names := archiveNames(t, name, data)
		for _, want := range []string{"bin/att-tool" + exe, "bin/att-decode" + exe, "bin/co-index" + exe, "README.md", "docs/wire.md"} {
			if !slices.Contains(names, folder+"/"+want) {
				t.Errorf("%s lacks %s/%s; it holds %v", name, folder, want, names)
			}
		}
	}
}

// archiveNames lists the entries of a .tar.gz or .zip archive, checking that
// every one can be read whole.
func archiveNames(t *testing.T, name string, data []byte) []string {
	t.Helper()
	var names []string
	if strings.HasSuffix(name, ".zip") {
		zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range zr.File {
			rc, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(io.Discard, rc); err != nil {
				t.Fatalf("%s: %s: %v", name, f.Name, err)
			}
			rc.Close()
			names = append(names, f.Name)
		}
		return names
	}
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, tr); err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
	}
	return names
}
