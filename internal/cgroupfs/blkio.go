// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package cgroupfs // import "github.com/containerstats/containerstatsreceiver/internal/cgroupfs"

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
)

// CtrlBlkio is the v1 block I/O controller.
const CtrlBlkio = "blkio"

// IODevice is one block device's I/O charged to a cgroup, its sub-cgroups
// included, cumulative. A value is absent when the kernel's file has no
// such column (v1 before 4.x has no Discard; v2 io.stat prints dbytes and
// dios only on kernels that count discards).
type IODevice struct {
	Major, Minor                     uint32
	ReadBytes, WriteBytes, DiscBytes U64
	ReadOps, WriteOps, DiscOps       U64
}

// IOSource says which files an IOStat came from.
type IOSource uint8

const (
	// IONone: no block I/O file for this cgroup (no io controller on the
	// unified tree, no blkio hierarchy).
	IONone IOSource = iota
	// IOStatV2 is the unified tree's io.stat.
	IOStatV2
	// IOThrottleV1 is v1's blkio.throttle.io_service{_bytes,d}_recursive.
	IOThrottleV1
	// IOBFQV1 is v1's blkio.bfq.io_service{_bytes,d}_recursive.
	IOBFQV1
	// IOUnaccountedV1: the v1 files exist but list no device, the kernel's
	// "Total 0" for a cgroup it accounts nothing for (see IO).
	IOUnaccountedV1
)

func (s IOSource) String() string {
	switch s {
	case IOStatV2:
		return "io.stat"
	case IOThrottleV1:
		return "blkio.throttle"
	case IOBFQV1:
		return "blkio.bfq"
	case IOUnaccountedV1:
		return "blkio (unaccounted)"
	}
	return "none"
}

// IOStat is a cgroup's block I/O per device.
type IOStat struct {
	Devices []IODevice
	Source  IOSource
}

// blkioDir is where the block I/O files of rel live: the v1 blkio
// hierarchy on v1 and hybrid nodes that mount one, else the unified tree;
// "" when neither.
func (l *Layout) blkioDir(rel string) (dir string, v1 bool) {
	if l.StatsV1() {
		if d := l.V1[CtrlBlkio]; d != "" {
			return l.join(d, rel), true
		}
	}
	if l.Unified == "" {
		return "", false
	}
	return l.join(l.Unified, rel), false
}

// IO reads the block I/O of cgroup rel per device, appending to dst[:0].
//
// v2: io.stat, which lists the devices the cgroup did I/O on.
//
// v1: blkio.throttle.io_service_bytes_recursive and io_serviced_recursive;
// when those list no device, the BFQ scheduler's files of the same names.
// The kernel (blk-throttle) counts a cgroup's I/O there only on devices
// where throttling is active: since the first blkio.throttle.*_device rule
// set on the device by anyone since boot (6.x initializes blk-throttle on a
// queue lazily, at its first rule). Elsewhere the files say "Total 0" and
// list no device: that is not a zero, it is "not accounted", and IO
// returns no devices with Source IOUnaccountedV1. Where throttling is
// active the files list a line per device even for 0 bytes, so a listed
// device is a real count (from activation on).
//
// A missing file or cgroup in the block I/O hierarchy is absent (IONone),
// not ErrVanished, as for pids.
func (r *Reader) IO(rel string, dst []IODevice) (IOStat, error) {
	st := IOStat{Devices: dst[:0]}
	dir, v1 := r.l.blkioDir(rel)
	if dir == "" {
		return st, nil
	}
	absent := func(err error) (IOStat, error) {
		if errors.Is(err, ErrVanished) {
			return IOStat{Devices: dst[:0]}, nil
		}
		return IOStat{Devices: dst[:0]}, err
	}
	if !v1 {
		data, ok, err := r.read(dir, "io.stat")
		if err != nil || !ok {
			return absent(err)
		}
		if st.Devices, err = parseIOStat(data, st.Devices); err != nil {
			return IOStat{Devices: dst[:0]}, fmt.Errorf("%s: %w", filepath.Join(dir, "io.stat"), err)
		}
		st.Source = IOStatV2
		return st, nil
	}
	found := false
	for _, f := range [...]struct {
		bytes, ops string
		src        IOSource
	}{
		{"blkio.throttle.io_service_bytes_recursive", "blkio.throttle.io_serviced_recursive", IOThrottleV1},
		{"blkio.bfq.io_service_bytes_recursive", "blkio.bfq.io_serviced_recursive", IOBFQV1},
	} {
		devs, ok, err := r.readRwstat(dir, f.bytes, st.Devices[:0], true)
		if err != nil {
			return absent(err)
		}
		found = found || ok
		if len(devs) == 0 {
			continue
		}
		if devs, _, err = r.readRwstat(dir, f.ops, devs, false); err != nil {
			return absent(err)
		}
		st.Devices, st.Source = devs, f.src
		return st, nil
	}
	if found {
		st.Source = IOUnaccountedV1
	}
	return st, nil
}

// readRwstat reads one v1 blkio rwstat file into devs: bytes (or
// operations when !isBytes) of the devices listed; devices already in devs
// are matched by number. ok is false when the file is absent.
func (r *Reader) readRwstat(dir, name string, devs []IODevice, isBytes bool) ([]IODevice, bool, error) {
	data, ok, err := r.read(dir, name)
	if err != nil || !ok {
		return devs, false, err
	}
	devs, err = parseBlkioRwstat(data, devs, isBytes)
	if err != nil {
		return devs, true, fmt.Errorf("%s: %w", filepath.Join(dir, name), err)
	}
	return devs, true, nil
}

// device returns the entry of devs for maj:min, appending one if needed.
func device(devs []IODevice, maj, minor uint32) ([]IODevice, *IODevice) {
	for i := range devs {
		if devs[i].Major == maj && devs[i].Minor == minor {
			return devs, &devs[i]
		}
	}
	devs = append(devs, IODevice{Major: maj, Minor: minor})
	return devs, &devs[len(devs)-1]
}

// parseDevNum parses "MAJ:MIN".
func parseDevNum(b []byte) (maj, minor uint32, err error) {
	c := bytes.IndexByte(b, ':')
	if c <= 0 {
		return 0, 0, fmt.Errorf("%w device %q: want MAJ:MIN", errMalformed, b)
	}
	ma, err1 := parseUintBytes(b[:c])
	mi, err2 := parseUintBytes(b[c+1:])
	if err1 != nil || err2 != nil || ma > 1<<32-1 || mi > 1<<32-1 {
		return 0, 0, fmt.Errorf("%w device %q: want MAJ:MIN", errMalformed, b)
	}
	return uint32(ma), uint32(mi), nil
}

// parseIOStat parses v2 io.stat: one line per device, "MAJ:MIN key=value
// ...". rbytes, wbytes, dbytes, rios, wios, dios are kept, other keys (the
// io.cost and latency controllers add some) ignored.
func parseIOStat(data []byte, devs []IODevice) ([]IODevice, error) {
	for len(data) > 0 {
		var line []byte
		line, data = cutLine(data)
		f := bytes.Fields(line)
		if len(f) == 0 {
			continue
		}
		maj, minor, err := parseDevNum(f[0])
		if err != nil {
			return devs, err
		}
		var d *IODevice
		devs, d = device(devs, maj, minor)
		for _, kv := range f[1:] {
			eq := bytes.IndexByte(kv, '=')
			if eq <= 0 {
				return devs, fmt.Errorf("%w field %q: want key=value", errMalformed, kv)
			}
			var dst *U64
			switch string(kv[:eq]) {
			case "rbytes":
				dst = &d.ReadBytes
			case "wbytes":
				dst = &d.WriteBytes
			case "dbytes":
				dst = &d.DiscBytes
			case "rios":
				dst = &d.ReadOps
			case "wios":
				dst = &d.WriteOps
			case "dios":
				dst = &d.DiscOps
			default:
				continue
			}
			v, err := parseUintBytes(kv[eq+1:])
			if err != nil {
				return devs, fmt.Errorf("%w field %q: %w", errMalformed, kv, err)
			}
			*dst = Some(v)
		}
	}
	return devs, nil
}

// parseBlkioRwstat parses a v1 blkio rwstat file: "MAJ:MIN Op value" lines
// (Op: Read, Write, Sync, Async, Discard, Total; others ignored) and a last "Total value"
// line. Read, Write and Discard go to the bytes (isBytes) or operations
// fields of their device; Sync, Async and the totals are sums of those.
func parseBlkioRwstat(data []byte, devs []IODevice, isBytes bool) ([]IODevice, error) {
	for len(data) > 0 {
		var line []byte
		line, data = cutLine(data)
		f := bytes.Fields(line)
		switch {
		case len(f) == 0:
			continue
		case len(f) == 2 && string(f[0]) == "Total":
			if _, err := parseUintBytes(f[1]); err != nil {
				return devs, fmt.Errorf("%w line %q: %w", errMalformed, line, err)
			}
			continue
		case len(f) != 3:
			return devs, fmt.Errorf("%w line %q: want \"MAJ:MIN Op value\"", errMalformed, line)
		}
		maj, minor, err := parseDevNum(f[0])
		if err != nil {
			return devs, err
		}
		v, err := parseUintBytes(f[2])
		if err != nil {
			return devs, fmt.Errorf("%w line %q: %w", errMalformed, line, err)
		}
		var d *IODevice
		devs, d = device(devs, maj, minor)
		var dst *U64
		switch string(f[1]) {
		case "Read":
			dst = pick(isBytes, &d.ReadBytes, &d.ReadOps)
		case "Write":
			dst = pick(isBytes, &d.WriteBytes, &d.WriteOps)
		case "Discard":
			dst = pick(isBytes, &d.DiscBytes, &d.DiscOps)
		default: // Sync, Async, Total are sums; newer kernels may add more
			continue
		}
		*dst = Some(v)
	}
	return devs, nil
}

func pick(first bool, a, b *U64) *U64 {
	if first {
		return a
	}
	return b
}
