// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package procfs // import "github.com/containerstats/containerstatsreceiver/internal/procfs"

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
)

// Tasks is the number of tasks (processes and threads, every state) that
// exist on the node: the total of the fourth field of /proc/loadavg
// ("running/total"), the kernel's nr_threads. It is the number the
// kubelet's Summary API gives as NodeStats.Rlimit.NumOfRunningProcesses
// (sysinfo(2)'s procs, the same counter).
func (f FS) Tasks() (uint64, error) {
	data, p, err := f.readFile("loadavg")
	if err != nil {
		return 0, err
	}
	n, err := parseLoadavgTasks(data)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", p, err)
	}
	return n, nil
}

// parseLoadavgTasks returns the total of "running/total", the fourth field
// of /proc/loadavg ("0.20 0.18 0.12 1/80 11206").
func parseLoadavgTasks(data []byte) (uint64, error) {
	fields := bytes.Fields(data)
	if len(fields) < 4 {
		return 0, fmt.Errorf("malformed loadavg %q: fewer than 4 fields", data)
	}
	_, total, ok := bytes.Cut(fields[3], []byte{'/'})
	if !ok {
		return 0, fmt.Errorf("malformed loadavg field %q: no running/total", fields[3])
	}
	n, err := strconv.ParseUint(string(total), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("malformed loadavg field %q: %w", fields[3], err)
	}
	return n, nil
}

// TaskLimit is the most tasks the kernel allows on the node: the lower of
// kernel.pid_max and kernel.threads-max (/proc/sys/kernel/pid_max and
// threads-max), as the kubelet's Summary API computes
// NodeStats.Rlimit.MaxPID. A missing file leaves the other; both missing
// is an error wrapping fs.ErrNotExist.
func (f FS) TaskLimit() (uint64, error) {
	var (
		lim   uint64
		found bool
		errs  []error
	)
	for _, name := range [...]string{"pid_max", "threads-max"} {
		data, p, err := f.readFile("sys", "kernel", name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		v, err := parseSysctlUint(data)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", p, err)
		}
		if !found || v < lim {
			lim, found = v, true
		}
	}
	if !found {
		return 0, errors.Join(errs...)
	}
	return lim, nil
}

// parseSysctlUint parses a sysctl file holding one unsigned number.
func parseSysctlUint(data []byte) (uint64, error) {
	s := bytes.TrimSpace(data)
	v, err := strconv.ParseUint(string(s), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("malformed number %q: %w", s, err)
	}
	return v, nil
}
