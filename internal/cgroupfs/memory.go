// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package cgroupfs // import "github.com/containerstats/containerstatsreceiver/internal/cgroupfs"

// MemoryStat is a cgroup's memory accounting in bytes, with v1 and v2 keys
// mapped to one meaning each. v1 values are the hierarchical total_* keys so
// a pod or the node includes its children, as v2 does.
type MemoryStat struct {
	Usage        U64 // v1 memory.usage_in_bytes, v2 memory.current (absent at the v2 root)
	InactiveFile U64 // v1 total_inactive_file, v2 inactive_file
	Anon         U64 // v1 total_rss, v2 anon
	File         U64 // v1 total_cache, v2 file
}

// Memory reads the memory accounting of cgroup rel.
func (r *Reader) Memory(rel string) (MemoryStat, error) {
	if r.l.StatsV1() {
		return r.memoryV1(r.l.Dir(CtrlMemory, rel))
	}
	return r.memoryV2(r.l.Dir("", rel))
}

func (r *Reader) memoryV1(dir string) (MemoryStat, error) {
	var s MemoryStat
	if dir == "" {
		return s, nil
	}
	var err error
	if s.Usage, err = r.readUint(dir, "memory.usage_in_bytes"); err != nil {
		return s, err
	}
	_, err = r.readKeyed(dir, "memory.stat", func(k []byte, v uint64) {
		switch string(k) {
		case "total_inactive_file":
			s.InactiveFile = Some(v)
		case "total_rss":
			s.Anon = Some(v)
		case "total_cache":
			s.File = Some(v)
		}
	})
	return s, err
}

func (r *Reader) memoryV2(dir string) (MemoryStat, error) {
	var s MemoryStat
	var err error
	if s.Usage, err = r.readUint(dir, "memory.current"); err != nil {
		return s, err
	}
	_, err = r.readKeyed(dir, "memory.stat", func(k []byte, v uint64) {
		switch string(k) {
		case "inactive_file":
			s.InactiveFile = Some(v)
		case "anon":
			s.Anon = Some(v)
		case "file":
			s.File = Some(v)
		}
	})
	return s, err
}
