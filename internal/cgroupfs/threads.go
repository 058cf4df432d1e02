// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package cgroupfs // import "github.com/containerstats/containerstatsreceiver/internal/cgroupfs"

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
)

// threadsDirV1 is the v1 hierarchy whose tasks files list a cgroup's
// threads: cpu first (the load average is about CPU), then cpuacct, pids.
func (l *Layout) threadsDirV1(rel string) (dir, file string) {
	for _, c := range []string{CtrlCPU, CtrlCPUAcct, CtrlPids} {
		if d := l.Dir(c, rel); d != "" {
			return d, "tasks"
		}
	}
	return "", ""
}

// Threads appends to dst the thread IDs of cgroup rel and of all its
// sub-cgroups (a container may create its own): cgroup.threads on v2, tasks
// on v1 (of the cpu, else cpuacct, else pids hierarchy). A missing cgroup is
// ErrVanished; a sub-cgroup that disappears during the walk is skipped.
// dst is reused by the caller between scrapes. ok is false when the cgroup
// has no thread list at all (no such hierarchy or file): no data, not zero
// threads.
func (r *Reader) Threads(rel string, dst []int) (tids []int, ok bool, err error) {
	dir, file := r.l.Dir("", rel), "cgroup.threads"
	if r.l.StatsV1() {
		dir, file = r.l.threadsDirV1(rel)
	}
	if dir == "" {
		return dst, false, nil
	}
	return r.threadsUnder(dir, file, dst, true)
}

// threadsUnder reads dir's thread list and recurses into its sub-cgroups.
// ok reports whether the top cgroup has a thread list.
func (r *Reader) threadsUnder(dir, file string, dst []int, top bool) (tids []int, ok bool, err error) {
	data, ok, err := r.read(dir, file)
	if err != nil {
		if !top && errors.Is(err, ErrVanished) {
			return dst, false, nil // a sub-cgroup removed while we walked
		}
		return dst, false, err
	}
	if !ok {
		return dst, false, nil // the cgroup exists but has no thread list
	}
	if dst, err = parseIDList(data, dst); err != nil {
		return dst, false, fmt.Errorf("%s: %w", filepath.Join(dir, file), err)
	}
	r.subs, err = r.l.subdirs(dir, r.subs[:0])
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if top {
				return dst, false, fmt.Errorf("%s: %w", dir, ErrVanished)
			}
			return dst, true, nil
		}
		return dst, false, err
	}
	if len(r.subs) == 0 {
		return dst, true, nil
	}
	// Copy: the recursion reuses r.subs. Sub-cgroups are rare.
	subs := append([]string(nil), r.subs...)
	for _, sub := range subs {
		if dst, _, err = r.threadsUnder(filepath.Join(dir, sub), file, dst, false); err != nil {
			return dst, false, err
		}
	}
	return dst, true, nil
}

// parseIDList parses a list of decimal IDs, one per line (tasks,
// cgroup.threads, cgroup.procs), appending them to dst.
func parseIDList(data []byte, dst []int) ([]int, error) {
	for len(data) > 0 {
		var line []byte
		line, data = cutLine(data)
		if len(line) == 0 {
			continue
		}
		v, err := parseUintBytes(line)
		if err != nil || v > 1<<31-1 {
			return dst, fmt.Errorf("%w id %q", errMalformed, line)
		}
		dst = append(dst, int(v))
	}
	return dst, nil
}
