// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

// Package rawfile reads small pseudo-files (cgroupfs, procfs) with raw
// syscalls and caller-owned buffers: no os.File (whose Open adds fcntl and
// poller calls and an allocation per file), no path string allocation. On a
// scrape that opens tens of thousands of files this is most of the
// difference between the receiver and the cost of the syscalls alone.
//
// The reads are Linux-only (rawfile_linux.go); on other systems every call
// fails with errors.ErrUnsupported, so the module still compiles where the
// collector does (the receiver refuses to start there).
package rawfile // import "github.com/containerstats/containerstatsreceiver/internal/rawfile"

// Path builds a NUL-terminated path in dst (reused): dir + "/" + name.
// String() of the result without its NUL is the path.
func Path(dst []byte, dir, name string) []byte {
	dst = append(dst[:0], dir...)
	if name != "" {
		if len(dst) == 0 || dst[len(dst)-1] != '/' {
			dst = append(dst, '/')
		}
		dst = append(dst, name...)
	}
	return append(dst, 0)
}

// String returns the path in p (built by Path) without its NUL.
func String(p []byte) string {
	if len(p) > 0 && p[len(p)-1] == 0 {
		p = p[:len(p)-1]
	}
	return string(p)
}
