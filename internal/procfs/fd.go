// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package procfs // import "github.com/containerstats/containerstatsreceiver/internal/procfs"

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/containerstats/containerstatsreceiver/internal/rawfile"
)

// FDCounter counts the open file descriptors of processes from
// /proc/<pid>/fd, reusing its path and directory buffers across calls: one
// per goroutine.
type FDCounter struct {
	proc   string
	path   []byte
	buf    []byte
	trace  func(path string) // FS.WithTrace's hook; nil in production
	bySize bool              // stat's size of /proc/<pid>/fd is the count (procfs, Linux 6.2+)
}

// NewFDCounter returns a counter for this /proc. Where this /proc is a
// procfs of Linux 6.2 or later, the counter takes the count from the size
// stat(2) reports for /proc/<pid>/fd (the kernel's count of open
// descriptors, bitmap_weight of the fd table: no listing); elsewhere, and
// for a size of 0 (older kernels report 0), it lists the directory.
func (f FS) NewFDCounter() *FDCounter {
	return &FDCounter{proc: f.proc, trace: f.trace, buf: make([]byte, 16<<10), bySize: fdCountBySize(f.proc)}
}

// releaseAtLeast compares a kernel release string ("6.18.44-fc") with
// major.minor; a release it cannot read is not.
func releaseAtLeast(rel string, major, minor int) bool {
	maj, rest, ok := strings.Cut(rel, ".")
	if !ok {
		return false
	}
	mi := rest
	if i := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' }); i >= 0 {
		mi = rest[:i]
	}
	a, err1 := strconv.Atoi(maj)
	b, err2 := strconv.Atoi(mi)
	if err1 != nil || err2 != nil {
		return false
	}
	return a > major || a == major && b >= minor
}

// Count returns the number of entries of /proc/<pid>/fd: the process's
// open file descriptors. ok is false when the process no longer exists (it
// exited between the listing of its cgroup and this read), which is not an
// error. A permission error (no CAP_SYS_PTRACE over the process, or a
// /proc mounted with hidepid) is an error naming the directory.
func (c *FDCounter) Count(pid int) (n int, ok bool, err error) {
	c.path = append(c.path[:0], c.proc...)
	c.path = append(c.path, '/')
	c.path = strconv.AppendInt(c.path, int64(pid), 10)
	c.path = append(c.path, "/fd\x00"...)
	if c.bySize {
		p := c.pathString()
		var size int64
		if size, err = statSize(p); err == nil && size > 0 {
			if c.trace != nil {
				c.trace(p + "/")
			}
			return int(size), true, nil
		}
		if err != nil {
			if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ESRCH) {
				return 0, false, nil
			}
			return 0, false, fmt.Errorf("procfs: stat %s: %w", p, err)
		}
	}
	err = rawfile.ReadDir(c.path, c.buf, func([]byte, bool) { n++ })
	if err != nil {
		if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ESRCH) {
			return 0, false, nil
		}
		return 0, false, fmt.Errorf("procfs: list %s: %w", c.pathString(), err)
	}
	if c.trace != nil {
		c.trace(c.pathString() + "/")
	}
	return n, true, nil
}

// pathString is the current path without its NUL, for errors.
func (c *FDCounter) pathString() string { return string(c.path[:len(c.path)-1]) }

// NetNS identifies the network namespace of pid: two processes are in the
// same namespace when the identifiers (of the same method) are equal.
// byLink: the /proc/<pid>/ns/net link as the kernel names it
// ("net:[4026531840]"), which needs ptrace-read access to pid. Otherwise
// the inode of /proc/<pid>/net/dev ("net/dev:4026531874"): procfs gives
// each namespace its own net/dev entry, and reading it needs no more than
// reading the file does (a sandbox may refuse the link of PID 1 but not its
// net/dev). ok is false when the process no longer exists.
func (f FS) NetNS(pid int, byLink bool) (ns string, ok bool, err error) {
	if byLink {
		p := f.Path(strconv.Itoa(pid), "ns", "net")
		ns, err = os.Readlink(p)
		if err == nil && f.trace != nil {
			f.trace(p)
		}
	} else {
		p := f.Path(strconv.Itoa(pid), "net", "dev")
		var ino uint64
		if ino, err = inode(p); err != nil {
			err = &os.PathError{Op: "stat", Path: p, Err: err}
		} else {
			ns = "net/dev:" + strconv.FormatUint(ino, 10)
		}
	}
	if err != nil {
		if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ESRCH) {
			return "", false, nil
		}
		return "", false, fmt.Errorf("procfs: %w", err)
	}
	return ns, true, nil
}
