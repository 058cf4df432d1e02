// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package cgroupfs // import "github.com/containerstats/containerstatsreceiver/internal/cgroupfs"

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/containerstats/containerstatsreceiver/internal/rawfile"
)

// ErrVanished is returned (wrapped, naming the directory or file) when a
// cgroup directory no longer exists: the container or pod went away between
// discovery and the read.
var ErrVanished = errors.New("cgroup vanished")

// Reader reads cgroup files of one Layout. It reuses one buffer across
// reads, so a Reader serves one goroutine at a time.
type Reader struct {
	l    *Layout
	buf  []byte
	path []byte   // NUL-terminated path of the current read, reused
	subs []string // sub-cgroup names of the current walk, reused
	// cpuStat is the v2 cpu.stat the last CPU call parsed, for CPUBandwidth.
	cpuStat struct {
		dir  string
		data []byte
	}
	trace func(path string) // called with every file opened; nil in production
	dirs  *dirCache         // directory descriptors files open relative to (dirfd.go)
}

// NewReader returns a Reader for l.
func NewReader(l *Layout) *Reader {
	return &Reader{l: l, buf: make([]byte, 0, 8192), path: make([]byte, 0, 256), dirs: newDirCache()}
}

// SetTrace makes the reader call fn with the path of every file it opens,
// and its layout with every directory listed (benchmarks replay the set of
// files a scrape reads).
func (r *Reader) SetTrace(fn func(path string)) {
	r.trace = fn
	r.l.SetTrace(fn)
}

// Layout returns the layout the reader reads.
func (r *Reader) Layout() *Layout { return r.l }

// read returns the contents of dir/name in the reader's buffer (valid until
// the next read). A missing file gives (nil, false, nil); a missing cgroup
// directory gives ErrVanished. It allocates nothing on the success path.
func (r *Reader) read(dir, name string) (data []byte, ok bool, err error) {
	r.path = rawfile.Path(r.path, dir, name)
	fd, dirOK, err := r.open(dir, name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if dirOK {
				return nil, false, nil
			}
			if _, derr := os.Stat(dir); errors.Is(derr, fs.ErrNotExist) {
				return nil, false, fmt.Errorf("%s: %w", dir, ErrVanished)
			}
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("open %s: %w", rawfile.String(r.path), err)
	}
	defer rawfile.Close(fd)
	if r.trace != nil {
		r.trace(rawfile.String(r.path))
	}
	r.buf, err = rawfile.ReadAll(fd, r.buf)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, errNoDevice) {
			// The cgroup was removed while its file was open.
			return nil, false, fmt.Errorf("read %s: %w", rawfile.String(r.path), ErrVanished)
		}
		return nil, false, fmt.Errorf("read %s: %w", rawfile.String(r.path), err)
	}
	return r.buf, true, nil
}

// readUint reads a single-number file; absent files give a zero U64.
func (r *Reader) readUint(dir, name string) (U64, error) {
	data, ok, err := r.read(dir, name)
	if err != nil || !ok {
		return U64{}, err
	}
	v, err := parseSingleUint(data)
	if err != nil {
		return U64{}, fmt.Errorf("%s: %w", filepath.Join(dir, name), err)
	}
	return Some(v), nil
}

// readLimit reads a limit file ("max" or a number).
func (r *Reader) readLimit(dir, name string) (Limit, error) {
	data, ok, err := r.read(dir, name)
	if err != nil || !ok {
		return Limit{}, err
	}
	l, err := parseLimit(data)
	if err != nil {
		return Limit{}, fmt.Errorf("%s: %w", filepath.Join(dir, name), err)
	}
	return l, nil
}

// readKeyed reads a flat keyed file, calling fn per key; fn is never called
// when the file is absent.
func (r *Reader) readKeyed(dir, name string, fn func(key []byte, v uint64)) error {
	data, ok, err := r.read(dir, name)
	if err != nil || !ok {
		return err
	}
	if err := parseFlatKeyed(data, fn); err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(dir, name), err)
	}
	return nil
}
