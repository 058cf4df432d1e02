// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package cgroupfs // import "github.com/containerstats/containerstatsreceiver/internal/cgroupfs"

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrVanished is returned when a cgroup directory no longer exists: the
// container or pod went away between discovery and the read.
var ErrVanished = errors.New("cgroup vanished")

// Reader reads cgroup files of one Layout. It reuses one buffer across
// reads, so a Reader serves one goroutine at a time.
type Reader struct {
	l   *Layout
	buf []byte
}

// NewReader returns a Reader for l.
func NewReader(l *Layout) *Reader {
	return &Reader{l: l, buf: make([]byte, 0, 8192)}
}

// Layout returns the layout the reader reads.
func (r *Reader) Layout() *Layout { return r.l }

// read returns the contents of dir/name in the reader's buffer (valid until
// the next read). A missing file gives (nil, false, nil); a missing cgroup
// directory gives ErrVanished.
func (r *Reader) read(dir, name string) (data []byte, ok bool, err error) {
	p := filepath.Join(dir, name)
	f, err := os.Open(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if _, derr := os.Stat(dir); errors.Is(derr, fs.ErrNotExist) {
				return nil, false, ErrVanished
			}
			return nil, false, nil
		}
		return nil, false, err
	}
	defer f.Close()
	r.buf = r.buf[:0]
	for {
		if len(r.buf) == cap(r.buf) {
			r.buf = append(r.buf, 0)[:len(r.buf)]
		}
		n, rerr := f.Read(r.buf[len(r.buf):cap(r.buf)])
		r.buf = r.buf[:len(r.buf)+n]
		if rerr == io.EOF {
			return r.buf, true, nil
		}
		if rerr != nil {
			if errors.Is(rerr, fs.ErrNotExist) || errors.Is(rerr, errNoDevice) {
				// The cgroup was removed while its file was open.
				return nil, false, ErrVanished
			}
			return nil, false, fmt.Errorf("read %s: %w", p, rerr)
		}
	}
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

// readKeyed reads a flat keyed file, calling fn per key. ok is false when
// the file is absent.
func (r *Reader) readKeyed(dir, name string, fn func(key []byte, v uint64)) (bool, error) {
	data, ok, err := r.read(dir, name)
	if err != nil || !ok {
		return false, err
	}
	if err := parseFlatKeyed(data, fn); err != nil {
		return false, fmt.Errorf("%s: %w", filepath.Join(dir, name), err)
	}
	return true, nil
}
