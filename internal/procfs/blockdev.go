// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package procfs // import "github.com/containerstats/containerstatsreceiver/internal/procfs"

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// BlockDevice is what <root>/sys/dev/block/<maj>:<min>/uevent says about a
// block device.
type BlockDevice struct {
	Name      string // DEVNAME, e.g. "vda", "nvme0n1", "dm-0"
	Partition bool   // DEVTYPE=partition
}

// BlockDevice reads the uevent of block device maj:min under the root's
// /sys. A device the kernel does not know gives an error wrapping
// fs.ErrNotExist.
func (f FS) BlockDevice(maj, minor uint32) (BlockDevice, error) {
	p := f.sys + "/dev/block/" + strconv.FormatUint(uint64(maj), 10) + ":" + strconv.FormatUint(uint64(minor), 10) + "/uevent"
	data, err := os.ReadFile(p)
	if err != nil {
		return BlockDevice{}, fmt.Errorf("procfs: %w", err)
	}
	if f.trace != nil {
		f.trace(p)
	}
	d, err := parseUevent(data)
	if err != nil {
		return BlockDevice{}, fmt.Errorf("%s: %w", p, err)
	}
	return d, nil
}

// parseUevent parses a block device's uevent: KEY=value lines, of which
// DEVNAME (required) and DEVTYPE are kept.
func parseUevent(data []byte) (BlockDevice, error) {
	var d BlockDevice
	for len(data) > 0 {
		var line []byte
		line, data = nextLine(data)
		k, v, ok := bytes.Cut(line, []byte{'='})
		if !ok {
			continue
		}
		switch string(k) {
		case "DEVNAME":
			d.Name = string(v)
		case "DEVTYPE":
			d.Partition = string(v) == "partition"
		}
	}
	if d.Name == "" {
		return BlockDevice{}, fmt.Errorf("uevent: no DEVNAME")
	}
	return d, nil
}
