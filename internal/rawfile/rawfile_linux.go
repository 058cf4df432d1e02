// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build linux

package rawfile // import "github.com/containerstats/containerstatsreceiver/internal/rawfile"

import (
	"syscall"
	"unsafe"
)

// atFDCWD is AT_FDCWD: openat resolves an absolute path as open does.
const atFDCWD = -100

// Open opens the NUL-terminated path read-only without allocating.
func Open(path []byte) (int, error) {
	return openat(atFDCWD, path, syscall.O_RDONLY|syscall.O_CLOEXEC)
}

// oPath is O_PATH (the syscall package does not name it on every
// architecture): a descriptor that only anchors lookups, with no read access
// and no open-file cost on kernfs.
const oPath = 0x200000

// OpenDir opens the NUL-terminated directory path as an O_PATH descriptor,
// an anchor for OpenAt, without allocating.
func OpenDir(path []byte) (int, error) {
	return openat(atFDCWD, path, oPath|syscall.O_DIRECTORY|syscall.O_CLOEXEC)
}

// OpenAt opens the NUL-terminated name relative to the directory dirfd
// read-only without allocating: the kernel resolves name alone, not the
// directory's path again.
func OpenAt(dirfd int, name []byte) (int, error) {
	return openat(dirfd, name, syscall.O_RDONLY|syscall.O_CLOEXEC)
}

func openat(dirfd int, path []byte, flags int) (int, error) {
	if len(path) == 0 || path[len(path)-1] != 0 {
		return -1, syscall.EINVAL
	}
	for {
		fd, _, errno := syscall.Syscall6(syscall.SYS_OPENAT, uintptr(dirfd), uintptr(unsafe.Pointer(&path[0])),
			uintptr(flags), 0, 0, 0)
		if errno == syscall.EINTR {
			continue
		}
		if errno != 0 {
			return -1, errno
		}
		return int(fd), nil
	}
}

// ReadAll reads fd to EOF into buf (grown as needed, reused) and returns it.
func ReadAll(fd int, buf []byte) ([]byte, error) {
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return buf, err
		}
		if n == 0 {
			return buf, nil
		}
		buf = buf[:len(buf)+n]
	}
}

// Close closes fd.
func Close(fd int) { _ = syscall.Close(fd) }

// dirent64 layout (linux_dirent64): ino u64, off i64, reclen u16, type u8,
// name NUL-terminated.
const (
	direntReclenOff = 16
	direntTypeOff   = 18
	direntNameOff   = 19
	dtDir           = 4
	dtUnknown       = 0
)

// ReadDir lists the NUL-terminated directory path with getdents64 into buf
// (reused, 8 KiB or more), calling fn with each entry's name (valid only
// during the call; "." and ".." skipped) and whether it is a directory. It
// allocates nothing unless an entry's type is unknown to the filesystem.
func ReadDir(path []byte, buf []byte, fn func(name []byte, isDir bool)) error {
	fd, err := Open(path)
	if err != nil {
		return err
	}
	defer Close(fd)
	if cap(buf) < 8192 {
		buf = make([]byte, 8192)
	}
	buf = buf[:cap(buf)]
	for {
		n, err := syscall.Getdents(fd, buf)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		for off := 0; off+direntNameOff < n; {
			reclen := int(uint16(buf[off+direntReclenOff]) | uint16(buf[off+direntReclenOff+1])<<8)
			if reclen == 0 || off+reclen > n {
				return syscall.EIO
			}
			name := buf[off+direntNameOff : off+reclen]
			for i, c := range name {
				if c == 0 {
					name = name[:i]
					break
				}
			}
			typ := buf[off+direntTypeOff]
			off += reclen
			if string(name) == "." || string(name) == ".." {
				continue
			}
			isDir := typ == dtDir
			if typ == dtUnknown {
				var st syscall.Stat_t
				p := String(path) + "/" + string(name)
				if syscall.Lstat(p, &st) == nil {
					isDir = st.Mode&syscall.S_IFMT == syscall.S_IFDIR
				}
			}
			fn(name, isDir)
		}
	}
}

// Inode returns the inode number of the open file fd.
func Inode(fd int) (uint64, error) {
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return 0, err
	}
	return st.Ino, nil
}

// PathInode returns the inode number of path (symlinks followed).
func PathInode(path string) (uint64, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return 0, err
	}
	return st.Ino, nil
}

// FileLimit returns the process's soft limit of open descriptors.
func FileLimit() (uint64, bool) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0, false
	}
	return rl.Cur, true
}
