// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package fsstats // import "github.com/containerstats/containerstatsreceiver/internal/fsstats"

import (
	"fmt"
	"syscall"

	"github.com/containerstats/containerstatsreceiver/internal/opt"
)

// Statfs returns the space of the filesystem holding path.
func Statfs(path string) (Space, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return Space{}, fmt.Errorf("statfs %s: %w", path, err)
	}
	return spaceOf(uint64(st.Frsize), uint64(st.Bsize), st.Blocks, st.Bfree, st.Bavail, st.Files, st.Ffree), nil
}

// spaceOf turns statfs fields into bytes. Block counts are in fragment
// size units (f_frsize); kernels that leave it 0 count in f_bsize.
func spaceOf(frsize, bsize, blocks, bfree, bavail, files, ffree uint64) Space {
	unit := frsize
	if unit == 0 {
		unit = bsize
	}
	s := Space{Capacity: blocks * unit, Available: bavail * unit}
	if blocks >= bfree {
		s.Used = (blocks - bfree) * unit
	}
	if files > 0 {
		s.Inodes, s.InodesFree = opt.Some(files), opt.Some(ffree)
	}
	return s
}
