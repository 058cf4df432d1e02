// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package cgroupfs // import "github.com/containerstats/containerstatsreceiver/internal/cgroupfs"

import (
	"errors"
)

// PidsStat is what the pids controller says about a cgroup: the tasks
// (processes and threads) charged to it, its sub-cgroups included, and the
// limit. Either is absent when its file is (no pids controller on the
// cgroup, or the root cgroup, which has neither file).
type PidsStat struct {
	Current U64
	Max     Limit
}

// pidsDir is where the pids files of rel live: the v1 pids hierarchy on v1
// and hybrid nodes that mount one, else the unified tree (v2, or a hybrid
// node whose pids controller is bound to the unified tree); "" when neither.
func (l *Layout) pidsDir(rel string) string {
	if l.StatsV1() {
		if d := l.V1[CtrlPids]; d != "" {
			return l.join(d, rel)
		}
	}
	if l.Unified == "" {
		return ""
	}
	return l.join(l.Unified, rel)
}

// Pids reads pids.current and pids.max of cgroup rel. A missing file is an
// absent value (a unified tree without the pids controller has neither);
// "max" is Unlimited. A cgroup missing from the pids hierarchy is absent
// too, not ErrVanished: the hierarchy discovery walked (memory or cpuacct
// on v1) decides whether a cgroup exists, and a pids hierarchy mounted
// after the cgroup was made does not hold it.
func (r *Reader) Pids(rel string) (PidsStat, error) {
	var p PidsStat
	dir := r.l.pidsDir(rel)
	if dir == "" {
		return p, nil
	}
	var err error
	if p.Current, err = r.readUint(dir, "pids.current"); err != nil {
		if errors.Is(err, ErrVanished) {
			return PidsStat{}, nil
		}
		return PidsStat{}, err
	}
	if p.Max, err = r.readLimit(dir, "pids.max"); err != nil {
		if errors.Is(err, ErrVanished) {
			return PidsStat{}, nil
		}
		return PidsStat{}, err
	}
	return p, nil
}
