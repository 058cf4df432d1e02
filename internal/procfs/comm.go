// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package procfs // import "github.com/containerstats/containerstatsreceiver/internal/procfs"

import (
	"errors"
	"fmt"
	"os"
	"strconv"
)

// maxComm bounds what parseComm accepts: the kernel prints at most
// TASK_COMM_LEN-1 (15) bytes for a process, and a kernel thread's full
// name (up to 63 bytes since Linux 6.x); anything longer is not a comm
// file.
const maxComm = 64

// Comm reads /proc/<pid>/comm, the process's command name as the kernel
// keeps it (truncated to 15 bytes: "containerd-shim-runc-v2" reads
// "containerd-shim"). A process that exited returns an error wrapping
// fs.ErrNotExist (or ESRCH), which callers treat as "gone".
func (f FS) Comm(pid int) (string, error) {
	data, p, err := f.readFile(strconv.Itoa(pid), "comm")
	if err != nil {
		return "", err
	}
	name, err := parseComm(data)
	if err != nil {
		return "", fmt.Errorf("%s: %w", p, err)
	}
	return name, nil
}

// parseComm returns the name of a comm file: its bytes without the one
// newline the kernel ends it with. The name itself may hold any byte
// (prctl(PR_SET_NAME) does not filter), a newline included.
func parseComm(data []byte) (string, error) {
	n := len(data)
	switch {
	case n == 0 || data[n-1] != '\n':
		return "", errors.New("comm does not end with a newline")
	case n-1 > maxComm:
		return "", fmt.Errorf("comm of %d bytes, want at most %d", n-1, maxComm)
	}
	return string(data[:n-1]), nil
}

// PIDs appends to dst the process IDs listed in /proc (its decimal
// entries; "self", "sys" and the rest are skipped), in directory order.
// Threads other than a process's main thread are not listed there.
func (f FS) PIDs(dst []int) ([]int, error) {
	d, err := os.Open(f.proc)
	if err != nil {
		return dst, fmt.Errorf("procfs: %w", err)
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return dst, fmt.Errorf("procfs: list %s: %w", f.proc, err)
	}
	if f.trace != nil {
		f.trace(f.proc + "/")
	}
	for _, name := range names {
		if pid, ok := parsePID([]byte(name)); ok {
			dst = append(dst, pid)
		}
	}
	return dst, nil
}

// parsePID parses a /proc entry name as a process ID: a positive decimal
// number in canonical form (no sign, no leading zero) that fits an int32,
// as the kernel's PIDs do (pid_max is at most 2^22).
func parsePID(name []byte) (int, bool) {
	if len(name) == 0 || len(name) > 10 || name[0] == '0' {
		return 0, false
	}
	v := 0
	for _, c := range name {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	if v > 1<<31-1 {
		return 0, false
	}
	return v, true
}
