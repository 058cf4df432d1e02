// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

// Command modproxy publishes the module in ROOT at one
// version into a module proxy directory (GOPROXY=file://DIR): make
// release builds the distribution from it, so that the binary's build
// information, and so the SBOM, names the receiver module by its path and
// the release's version, not by ocb's replace path.
//
//	git ls-files -co --exclude-standard | modproxy -root ROOT -dir DIR -module PATH -version vX.Y.Z
//
// The files, one path a line on standard input relative to ROOT, go into DIR/PATH/@v/vX.Y.Z.zip as golang.org/x/mod/zip
// lays a module out (files of nested modules and vendor directories left
// out, as the go command does; test data whose paths a zip cannot hold
// too), with the .mod, .info and list beside it.
// It prints the zip's h1: hash.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/mod/module"
	"golang.org/x/mod/sumdb/dirhash"
	"golang.org/x/mod/zip"
)

type file struct{ path string }

func (f file) Path() string                 { return filepath.ToSlash(f.path) }
func (f file) Lstat() (fs.FileInfo, error)  { return os.Lstat(f.path) }
func (f file) Open() (io.ReadCloser, error) { return os.Open(f.path) }

func main() {
	dir := flag.String("dir", "", "the proxy directory")
	mod := flag.String("module", "", "the module path")
	version := flag.String("version", "", "the version, vX.Y.Z")
	root := flag.String("root", ".", "the module's directory, which the paths are relative to")
	flag.Parse()
	if err := os.Chdir(*root); err != nil {
		fmt.Fprintln(os.Stderr, "modproxy:", err)
		os.Exit(1)
	}
	if err := run(*dir, module.Version{Path: *mod, Version: *version}); err != nil {
		fmt.Fprintln(os.Stderr, "modproxy:", err)
		os.Exit(1)
	}
}

func run(dir string, m module.Version) error {
	if dir == "" {
		return errors.New("-dir is required")
	}
	if err := module.Check(m.Path, m.Version); err != nil {
		return err
	}
	var files []zip.File
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		p := strings.TrimSpace(sc.Text())
		if p == "" {
			continue
		}
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			continue // listed by git, deleted in the work tree
		}
		files = append(files, file{p})
	}
	if err := sc.Err(); err != nil {
		return err
	}
	files, err := dropInvalid(files)
	if err != nil {
		return err
	}
	gomod, err := os.ReadFile("go.mod")
	if err != nil {
		return err
	}
	esc, err := module.EscapePath(m.Path)
	if err != nil {
		return err
	}
	at := filepath.Join(dir, esc, "@v")
	if err := os.MkdirAll(at, 0o755); err != nil {
		return err
	}
	base := filepath.Join(at, m.Version)
	z, err := os.Create(base + ".zip")
	if err != nil {
		return err
	}
	if err := zip.Create(z, m, files); err != nil {
		z.Close()
		return err
	}
	if err := z.Close(); err != nil {
		return err
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{m.Version, time.Now().UTC().Truncate(time.Second)})
	if err != nil {
		return err
	}
	for name, b := range map[string][]byte{base + ".mod": gomod, base + ".info": info, filepath.Join(at, "list"): []byte(m.Version + "\n")} {
		if err := os.WriteFile(name, b, 0o644); err != nil {
			return err
		}
	}
	h, err := dirhash.HashZip(base+".zip", dirhash.Hash1)
	if err != nil {
		return err
	}
	fmt.Println(m.Path, m.Version, h)
	return nil
}

// dropInvalid leaves out the files whose paths a module zip cannot hold
// (testdata's fixtures of /sys/dev/block are named MAJOR:MINOR, and ':' is
// not allowed): only test data may be left out, which no build reads.
func dropInvalid(files []zip.File) ([]zip.File, error) {
	cf, _ := zip.CheckFiles(files)
	if cf.SizeError != nil {
		return nil, cf.SizeError
	}
	bad := map[string]bool{}
	for _, e := range cf.Invalid {
		if !strings.HasPrefix(e.Path, "testdata/") && !strings.Contains(e.Path, "/testdata/") {
			return nil, fmt.Errorf("%s: %w", e.Path, e.Err)
		}
		bad[e.Path] = true
	}
	kept := files[:0]
	for _, f := range files {
		if !bad[f.Path()] {
			kept = append(kept, f)
		}
	}
	if len(bad) > 0 {
		fmt.Fprintf(os.Stderr, "modproxy: left out %d test data files whose paths a module zip cannot hold (e.g. %s)\n", len(bad), cf.Invalid[0].Path)
	}
	return kept, nil
}
