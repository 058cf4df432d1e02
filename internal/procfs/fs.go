// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package procfs // import "github.com/containerstats/containerstatsreceiver/internal/procfs"

import (
	"fmt"
	"os"
	"path/filepath"
)

// FS is the /proc (and the few /sys files that describe what /proc
// names, blockdev.go) of a host seen under a root prefix.
type FS struct {
	proc  string
	sys   string
	trace func(path string) // called with every file opened; nil in production
}

// NewFS returns the /proc under root ("/" or "/hostfs").
func NewFS(root string) FS {
	return FS{proc: filepath.Join(root, "proc"), sys: filepath.Join(root, "sys")}
}

// Path joins elements under this /proc.
func (f FS) Path(elem ...string) string {
	return filepath.Join(append([]string{f.proc}, elem...)...)
}

// WithTrace returns a copy of f that calls fn with the path of every file it
// opens (benchmarks replay the set of files a scrape reads).
func (f FS) WithTrace(fn func(path string)) FS {
	f.trace = fn
	return f
}

func (f FS) readFile(elem ...string) ([]byte, string, error) {
	p := f.Path(elem...)
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, p, fmt.Errorf("procfs: %w", err)
	}
	if f.trace != nil {
		f.trace(p)
	}
	return data, p, nil
}
