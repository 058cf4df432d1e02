// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package procfs // import "github.com/containerstats/containerstatsreceiver/internal/procfs"

import "syscall"

// procSuperMagic is PROC_SUPER_MAGIC, statfs's f_type of a procfs.
const procSuperMagic = 0x9fa0

// fdCountBySize reports whether proc is a procfs of Linux 6.2 or later,
// whose /proc/<pid>/fd reports the count of open descriptors as its size.
func fdCountBySize(proc string) bool {
	var st syscall.Statfs_t
	return syscall.Statfs(proc, &st) == nil && st.Type == procSuperMagic && kernelAtLeast(6, 2)
}

// kernelAtLeast reports whether the running kernel's release is at least
// major.minor (a container shares the node's kernel).
func kernelAtLeast(major, minor int) bool {
	var u syscall.Utsname
	if syscall.Uname(&u) != nil {
		return false
	}
	var rel []byte
	for _, c := range u.Release {
		if c == 0 {
			break
		}
		rel = append(rel, byte(c))
	}
	return releaseAtLeast(string(rel), major, minor)
}

// statSize is stat(2)'s st_size of path.
func statSize(path string) (int64, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return 0, err
	}
	return st.Size, nil
}

// inode is stat(2)'s st_ino of path.
func inode(path string) (uint64, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return 0, err
	}
	return st.Ino, nil
}
