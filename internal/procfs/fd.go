// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package procfs // import "github.com/containerstats/containerstatsreceiver/internal/procfs"

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"

	"github.com/containerstats/containerstatsreceiver/internal/rawfile"
)

// FDCounter counts the open file descriptors of processes from
// /proc/<pid>/fd, reusing its path and directory buffers across calls: one
// per goroutine.
type FDCounter struct {
	proc  string
	path  []byte
	buf   []byte
	trace func(path string) // FS.WithTrace's hook; nil in production
}

// NewFDCounter returns a counter for this /proc.
func (f FS) NewFDCounter() *FDCounter {
	return &FDCounter{proc: f.proc, trace: f.trace, buf: make([]byte, 16<<10)}
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

// NetNS returns the network namespace of pid as the kernel names it in
// the /proc/<pid>/ns/net link ("net:[4026531840]"): two processes are in
// the same namespace when the names are equal. ok is false when the
// process no longer exists.
func (f FS) NetNS(pid int) (ns string, ok bool, err error) {
	p := f.Path(strconv.Itoa(pid), "ns", "net")
	ns, err = os.Readlink(p)
	if err != nil {
		if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ESRCH) {
			return "", false, nil
		}
		return "", false, fmt.Errorf("procfs: %w", err)
	}
	if f.trace != nil {
		f.trace(p)
	}
	return ns, true, nil
}
