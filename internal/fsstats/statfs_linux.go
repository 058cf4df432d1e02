// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package fsstats // import "github.com/containerstats/containerstatsreceiver/internal/fsstats"

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"github.com/containerstats/containerstatsreceiver/internal/opt"
)

// Statfs returns the space of the filesystem holding path.
func Statfs(path string) (Space, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return Space{}, fmt.Errorf("statfs %s: %w", path, err)
	}
	sp := spaceOf(uint64(st.Frsize), uint64(st.Bsize), st.Blocks, st.Bfree, st.Bavail, st.Files, st.Ffree)
	sp.Type = uint32(st.Type) // f_type: a 32-bit magic number in a long
	return sp, nil
}

// Lstat returns what a walk needs of path's lstat(2): symbolic links are
// not followed.
func Lstat(path string) (FileStat, error) {
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		return FileStat{}, &fs.PathError{Op: "lstat", Path: path, Err: err}
	}
	return FileStat{
		// The field types differ between architectures.
		Dev: uint64(st.Dev), Ino: uint64(st.Ino), Nlink: uint64(st.Nlink), //nolint:unconvert // uint64 on amd64, narrower elsewhere
		Blocks: uint64(st.Blocks), Size: st.Size,
		Dir: st.Mode&syscall.S_IFMT == syscall.S_IFDIR, Regular: st.Mode&syscall.S_IFMT == syscall.S_IFREG,
	}, nil
}

// readDirNames lists a directory's entry names, unsorted, without
// following a symbolic link in place of the directory.
func readDirNames(path string) ([]string, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	return f.Readdirnames(-1)
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
