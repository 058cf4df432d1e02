// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package procfs // import "github.com/containerstats/containerstatsreceiver/internal/procfs"

import (
	"bytes"
	"fmt"
)

// sectorSize is the unit of /proc/diskstats' sector columns, whatever the
// device's own sector size (the kernel counts in 512-byte units).
const sectorSize = 512

// DiskStat is one block device's line of /proc/diskstats, cumulative since
// boot. Discard columns are absent (HasDiscard false) before kernel 4.18.
type DiskStat struct {
	Major, Minor             uint32
	Name                     string
	ReadOps, ReadBytes       uint64
	WriteOps, WriteBytes     uint64
	DiscardOps, DiscardBytes uint64
	HasDiscard               bool
}

// DiskStats reads <root>/proc/diskstats: every block device the kernel
// knows, partitions and virtual devices included (the caller picks).
func (f FS) DiskStats(dst []DiskStat) ([]DiskStat, error) {
	data, p, err := f.readFile("diskstats")
	if err != nil {
		return dst, err
	}
	ds, err := parseDiskStats(data, dst)
	if err != nil {
		return dst, fmt.Errorf("%s: %w", p, err)
	}
	return ds, nil
}

// parseDiskStats parses /proc/diskstats: "major minor name" and then 11
// (before 4.18), 15 (4.18+: discards) or 17 (5.5+: flushes) numbers:
// reads completed, merged, sectors read, ms reading, writes completed,
// merged, sectors written, ms writing, I/Os in progress, ms doing I/O,
// weighted ms, then discards completed, merged, sectors discarded, ms
// discarding, then flushes. Names are reused from dst when unchanged.
func parseDiskStats(data []byte, dst []DiskStat) ([]DiskStat, error) {
	n := 0
	var nums [17]uint64
	for len(data) > 0 {
		var line []byte
		line, data = nextLine(data)
		f := bytes.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) < 14 {
			return dst[:n], fmt.Errorf("diskstats: malformed line %q: %d fields, want at least 14", line, len(f))
		}
		cols := len(f) - 3
		if cols > len(nums) {
			cols = len(nums)
		}
		maj, err1 := parseDecimal(f[0])
		minor, err2 := parseDecimal(f[1])
		if err1 != nil || err2 != nil || maj > 1<<32-1 || minor > 1<<32-1 {
			return dst[:n], fmt.Errorf("diskstats: malformed device number in %q", line)
		}
		for i := 0; i < cols; i++ {
			v, err := parseDecimal(f[3+i])
			if err != nil {
				return dst[:n], fmt.Errorf("diskstats: malformed line %q: %w", line, err)
			}
			nums[i] = v
		}
		if n == len(dst) {
			dst = append(dst, DiskStat{})
		}
		d := &dst[n]
		name := d.Name
		if name != string(f[2]) { // no allocation when unchanged
			name = string(f[2])
		}
		*d = DiskStat{
			Major: uint32(maj), Minor: uint32(minor), Name: name,
			ReadOps: nums[0], ReadBytes: nums[2] * sectorSize,
			WriteOps: nums[4], WriteBytes: nums[6] * sectorSize,
		}
		if cols >= 15 {
			d.HasDiscard = true
			d.DiscardOps, d.DiscardBytes = nums[11], nums[13]*sectorSize
		}
		n++
	}
	return dst[:n], nil
}
