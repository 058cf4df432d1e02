// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package cgroupfs // import "github.com/containerstats/containerstatsreceiver/internal/cgroupfs"

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/containerstats/containerstatsreceiver/internal/rawfile"
)

// AnyPID returns one process of cgroup rel or of its sub-cgroups, depth
// first (a pod cgroup holds no process itself: its containers and sandbox
// do), from cgroup.procs of the hierarchy discovery walks. ok is false when
// the subtree holds no process. A missing cgroup is ErrVanished.
func (r *Reader) AnyPID(rel string) (pid int, ok bool, err error) {
	return r.anyPID(filepath.Join(r.l.WalkRoot(), rel), true)
}

func (r *Reader) anyPID(dir string, top bool) (int, bool, error) {
	data, ok, err := r.read(dir, "cgroup.procs")
	if err != nil {
		if !top && errors.Is(err, ErrVanished) {
			return 0, false, nil
		}
		return 0, false, err
	}
	if ok {
		var one [1]int
		ids, parseIDListErr := parseIDList(data, one[:0])
		if parseIDListErr != nil {
			return 0, false, fmt.Errorf("%s: %w", filepath.Join(dir, "cgroup.procs"), parseIDListErr)
		}
		if len(ids) > 0 {
			return ids[0], true, nil
		}
	}
	subs, err := r.l.subdirs(dir, nil)
	if err != nil {
		return 0, false, nil // gone while walking: no process
	}
	for _, sub := range subs {
		if pid, ok, err := r.anyPID(filepath.Join(dir, sub), false); err != nil || ok {
			return pid, ok, err
		}
	}
	return 0, false, nil
}

// Procs appends to dst the process IDs of cgroup rel and of all its
// sub-cgroups, from cgroup.procs of the hierarchy discovery walks. A
// missing cgroup is ErrVanished; a sub-cgroup that disappears during the
// walk is skipped. ok is false when the cgroup has no cgroup.procs.
func (r *Reader) Procs(rel string, dst []int) (pids []int, ok bool, err error) {
	return r.threadsUnder(filepath.Join(r.l.WalkRoot(), rel), "cgroup.procs", dst, true)
}

// Instance identifies the cgroup at rel as it exists now: its directory's
// inode in the hierarchy discovery walks. A cgroup removed and made again
// under the same path (docker and Podman keep a container's ID across a
// restart) is a new instance. A missing cgroup is ErrVanished.
func (r *Reader) Instance(rel string) (uint64, error) {
	dir := filepath.Join(r.l.WalkRoot(), rel)
	ino, err := rawfile.PathInode(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return 0, fmt.Errorf("%s: %w", dir, ErrVanished)
		}
		return 0, fmt.Errorf("%s: %w", dir, err)
	}
	return ino, nil
}
