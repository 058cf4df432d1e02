// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package cgroupfs // import "github.com/containerstats/containerstatsreceiver/internal/cgroupfs"

import (
	"fmt"
	"path/filepath"
)

// userHZ is the tick rate of cpuacct.stat. The kernel exports USER_HZ, which
// is 100 on every Linux architecture.
const userHZ = 100

// CPUStat is a cgroup's CPU accounting, in nanoseconds.
type CPUStat struct {
	Usage  U64 // total: v1 cpuacct.usage, v2 cpu.stat usage_usec
	User   U64 // v1 cpuacct.usage_user (or cpuacct.stat user), v2 user_usec
	System U64 // v1 cpuacct.usage_sys (or cpuacct.stat system), v2 system_usec
}

// CPU reads the CPU accounting of cgroup rel.
func (r *Reader) CPU(rel string) (CPUStat, error) {
	if r.l.StatsV1() {
		return r.cpuV1(r.l.Dir(CtrlCPUAcct, rel))
	}
	return r.cpuV2(r.l.Dir("", rel))
}

func (r *Reader) cpuV1(dir string) (CPUStat, error) {
	var s CPUStat
	if dir == "" {
		return s, nil
	}
	var err error
	if s.Usage, err = r.readUint(dir, "cpuacct.usage"); err != nil {
		return s, err
	}
	if s.User, err = r.readUint(dir, "cpuacct.usage_user"); err != nil {
		return s, err
	}
	if s.System, err = r.readUint(dir, "cpuacct.usage_sys"); err != nil {
		return s, err
	}
	if s.User.OK && s.System.OK {
		return s, nil
	}
	// Kernels before 4.7 only have the tick-based cpuacct.stat.
	err = r.readKeyed(dir, "cpuacct.stat", func(k []byte, v uint64) {
		switch string(k) {
		case "user":
			s.User = Some(v * (1e9 / userHZ))
		case "system":
			s.System = Some(v * (1e9 / userHZ))
		}
	})
	return s, err
}

// cpuStatV2 parses dir's cpu.stat, which holds both CPU time (CPU) and the
// throttling counters (CPUBandwidth): one read serves both. CPU calls it
// with fresh set: it reads the file and, when it parses, keeps a copy;
// CPUBandwidth, called right after for the same cgroup, reuses that copy.
// Anything else (absent file, read or parse error, another cgroup) reads
// the file again, so errors are reported exactly as before.
func (r *Reader) cpuStatV2(dir string, fresh bool, fn func(key []byte, v uint64)) error {
	if !fresh && r.cpuStat.dir == dir {
		return parseFlatKeyed(r.cpuStat.data, fn)
	}
	r.cpuStat.dir = ""
	data, ok, err := r.read(dir, "cpu.stat")
	if err != nil || !ok {
		return err
	}
	if err := parseFlatKeyed(data, fn); err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(dir, "cpu.stat"), err)
	}
	if fresh {
		r.cpuStat.data = append(r.cpuStat.data[:0], data...)
		r.cpuStat.dir = dir
	}
	return nil
}

func (r *Reader) cpuV2(dir string) (CPUStat, error) {
	var s CPUStat
	err := r.cpuStatV2(dir, true, func(k []byte, v uint64) {
		switch string(k) {
		case "usage_usec":
			s.Usage = Some(v * 1000)
		case "user_usec":
			s.User = Some(v * 1000)
		case "system_usec":
			s.System = Some(v * 1000)
		}
	})
	return s, err
}
