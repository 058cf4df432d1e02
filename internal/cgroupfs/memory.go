// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package cgroupfs // import "github.com/containerstats/containerstatsreceiver/internal/cgroupfs"

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
)

// MemoryStat is a cgroup's memory accounting in bytes (faults and OOM kills
// in events), with v1 and v2 keys mapped to one meaning each. v1 values are
// the hierarchical total_* keys so a pod or the node includes its children,
// as v2 does. A field whose file or key is absent stays !OK: no data point.
type MemoryStat struct {
	Usage        U64   // v1 memory.usage_in_bytes, v2 memory.current (absent at the v2 root)
	InactiveFile U64   // v1 total_inactive_file, v2 inactive_file
	Anon         U64   // v1 total_rss, v2 anon
	File         U64   // v1 total_cache, v2 file
	MappedFile   U64   // v1 total_mapped_file, v2 file_mapped
	Shmem        U64   // tmpfs and shared memory, part of File: v1 total_shmem, v2 shmem
	Swap         U64   // v1 memory.memsw.usage_in_bytes - usage (floored at 0), v2 memory.swap.current
	Limit        Limit // v1 memory.limit_in_bytes, v2 memory.max
	OOMKills     U64   // v1 memory.oom_control oom_kill (this cgroup only, see OOMKillsTreeV1), v2 memory.events oom_kill (hierarchical)
	PgFault      U64   // all page faults: v1 total_pgfault, v2 pgfault (major included)
	PgMajFault   U64   // major page faults: v1 total_pgmajfault, v2 pgmajfault
	RefaultAnon  U64   // refaults of anonymous pages: v1 total_workingset_refault_anon, v2 workingset_refault_anon
	RefaultFile  U64   // refaults of page cache: v1 total_workingset_refault_file, v2 workingset_refault_file
}

// MemoryWant says which memory files to read, so a scrape reads only the
// files its enabled metrics need. Fields of MemoryStat whose file is not
// wanted stay !OK.
type MemoryWant struct {
	Usage bool // v1 memory.usage_in_bytes, v2 memory.current
	Stat  bool // memory.stat: every key of memoryStatKeys
	Swap  bool // v1 memory.memsw.usage_in_bytes (with usage), v2 memory.swap.current
	Limit bool // v1 memory.limit_in_bytes, v2 memory.max
	OOM   bool // v1 memory.oom_control, v2 memory.events
}

// Any reports whether anything is wanted.
func (w MemoryWant) Any() bool { return w.Usage || w.Stat || w.Swap || w.Limit || w.OOM }

// MemoryAll wants every memory file.
var MemoryAll = MemoryWant{Usage: true, Stat: true, Swap: true, Limit: true, OOM: true}

// Memory reads what want asks of the memory accounting of cgroup rel.
func (r *Reader) Memory(rel string, want MemoryWant) (MemoryStat, error) {
	if r.l.StatsV1() {
		return r.memoryV1(r.l.Dir(CtrlMemory, rel), want)
	}
	return r.memoryV2(r.l.Dir("", rel), want)
}

func (r *Reader) memoryV1(dir string, want MemoryWant) (MemoryStat, error) {
	var s MemoryStat
	if dir == "" {
		return s, nil
	}
	var err error
	var usage U64 // swap needs it too
	if want.Usage || want.Swap {
		if usage, err = r.readUint(dir, "memory.usage_in_bytes"); err != nil {
			return s, err
		}
	}
	if want.Usage {
		s.Usage = usage
	}
	if want.Stat {
		if err = r.memoryStat(dir, true, &s); err != nil {
			return s, err
		}
	}
	if want.Swap {
		// memsw exists only with swap accounting (swapaccount=1); it counts
		// memory + swap, so swap alone is the difference.
		memsw, readUintErr := r.readUint(dir, "memory.memsw.usage_in_bytes")
		if readUintErr != nil {
			return s, readUintErr
		}
		if memsw.OK && usage.OK {
			s.Swap = Some(0)
			if memsw.V > usage.V { // the two files are read at different instants
				s.Swap = Some(memsw.V - usage.V)
			}
		}
	}
	if want.Limit {
		if s.Limit, err = r.readLimit(dir, "memory.limit_in_bytes"); err != nil {
			return s, err
		}
	}
	if want.OOM {
		// oom_kill appeared in memory.oom_control with Linux 4.13.
		err = r.readKeyed(dir, "memory.oom_control", func(k []byte, v uint64) {
			if string(k) == "oom_kill" {
				s.OOMKills = Some(v)
			}
		})
	}
	return s, err
}

// memoryStatKeys are the memory.stat keys read, v1's hierarchical
// total_* key and v2's of each, and the MemoryStat field each sets: a new
// key is a field and a row.
var memoryStatKeys = [...]struct {
	v1, v2 string
	field  func(*MemoryStat) *U64
}{
	{"total_inactive_file", "inactive_file", func(s *MemoryStat) *U64 { return &s.InactiveFile }},
	{"total_rss", "anon", func(s *MemoryStat) *U64 { return &s.Anon }},
	{"total_cache", "file", func(s *MemoryStat) *U64 { return &s.File }},
	{"total_mapped_file", "file_mapped", func(s *MemoryStat) *U64 { return &s.MappedFile }},
	{"total_shmem", "shmem", func(s *MemoryStat) *U64 { return &s.Shmem }},
	{"total_pgfault", "pgfault", func(s *MemoryStat) *U64 { return &s.PgFault }},
	{"total_pgmajfault", "pgmajfault", func(s *MemoryStat) *U64 { return &s.PgMajFault }},
	{"total_workingset_refault_anon", "workingset_refault_anon", func(s *MemoryStat) *U64 { return &s.RefaultAnon }},
	{"total_workingset_refault_file", "workingset_refault_file", func(s *MemoryStat) *U64 { return &s.RefaultFile }},
}

// memoryStat reads memory.stat in dir into s: the v1 keys of
// memoryStatKeys, or the v2 ones.
func (r *Reader) memoryStat(dir string, v1 bool, s *MemoryStat) error {
	err := r.readKeyed(dir, "memory.stat", func(k []byte, v uint64) {
		for i := range memoryStatKeys {
			key := &memoryStatKeys[i]
			name := key.v2
			if v1 {
				name = key.v1
			}
			if string(k) == name {
				*key.field(s) = Some(v)
				return
			}
		}
	})
	return err
}

func (r *Reader) memoryV2(dir string, want MemoryWant) (MemoryStat, error) {
	var s MemoryStat
	var err error
	if want.Usage {
		if s.Usage, err = r.readUint(dir, "memory.current"); err != nil {
			return s, err
		}
	}
	if want.Stat {
		if err = r.memoryStat(dir, false, &s); err != nil {
			return s, err
		}
	}
	if want.Swap {
		if s.Swap, err = r.readUint(dir, "memory.swap.current"); err != nil {
			return s, err
		}
	}
	if want.Limit {
		if s.Limit, err = r.readLimit(dir, "memory.max"); err != nil {
			return s, err
		}
	}
	if want.OOM {
		err = r.readKeyed(dir, "memory.events", func(k []byte, v uint64) {
			if string(k) == "oom_kill" {
				s.OOMKills = Some(v)
			}
		})
	}
	return s, err
}

// MemoryPeak reads memory.peak of cgroup rel: the highest memory usage
// since the cgroup was created (v2, Linux 5.19 and later). It is absent on
// v1 and hybrid nodes (whose memory controller is v1: nothing is read) and
// where the kernel has no such file.
func (r *Reader) MemoryPeak(rel string) (U64, error) {
	if r.l.StatsV1() {
		return U64{}, nil
	}
	return r.readUint(r.l.Dir("", rel), "memory.peak")
}

// OOMKillsTreeV1 calls fn with the memory.oom_control oom_kill counter of
// cgroup rel and of every cgroup below it (paths relative to the hierarchy
// root). On v1 the kernel counts a kill only in the victim's own cgroup, so
// a pod's kills are the sum over its subtree. Cgroups without the counter
// are skipped; a sub-cgroup that vanishes during the walk is skipped too,
// rel itself vanishing gives ErrVanished. known, when not nil, holds
// counters the caller read a moment ago (the pod's own, its containers'
// in the same scrape), by the same relative path: those files are not
// read again. It does nothing on v2, whose memory.events counter is
// already hierarchical.
func (r *Reader) OOMKillsTreeV1(rel string, known map[string]uint64, fn func(rel string, kills uint64)) error {
	if !r.l.StatsV1() {
		return nil
	}
	root := r.l.Dir(CtrlMemory, "/")
	dir := r.l.Dir(CtrlMemory, rel)
	if dir == "" {
		return nil
	}
	return r.oomKillsTree(root, dir, true, known, fn)
}

func (r *Reader) oomKillsTree(root, dir string, top bool, known map[string]uint64, fn func(string, uint64)) error {
	rel, err := filepath.Rel(root, dir)
	if err != nil {
		return err
	}
	rel = filepath.Join("/", filepath.ToSlash(rel))
	if v, ok := known[rel]; ok {
		fn(rel, v)
	} else {
		var kills U64
		readKeyedErr := r.readKeyed(dir, "memory.oom_control", func(k []byte, v uint64) {
			if string(k) == "oom_kill" {
				kills = Some(v)
			}
		})
		if readKeyedErr != nil {
			if !top && errors.Is(readKeyedErr, ErrVanished) {
				return nil
			}
			return readKeyedErr
		}
		if kills.OK {
			fn(rel, kills.V)
		}
	}
	subs, err := r.l.subdirs(dir, nil)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if top {
				return fmt.Errorf("%s: %w", dir, ErrVanished)
			}
			return nil
		}
		return fmt.Errorf("read dir %s: %w", dir, err)
	}
	for _, sub := range subs {
		if err := r.oomKillsTree(root, filepath.Join(dir, sub), false, known, fn); err != nil {
			return err
		}
	}
	return nil
}
