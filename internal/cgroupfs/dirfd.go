// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package cgroupfs // import "github.com/containerstats/containerstatsreceiver/internal/cgroupfs"

import (
	"errors"
	"syscall"

	"github.com/containerstats/containerstatsreceiver/internal/rawfile"
)

// dirCache keeps an O_PATH descriptor of every cgroup directory the reader
// reads files in, so each file opens relative to it: openat(dirfd,
// "memory.stat") resolves one path component instead of the directory's
// whole path (eight or nine components below /sys/fs/cgroup for a
// container, each a kernfs lookup with a permission check). On this
// project's peer benchmark the path walk was half of the collector's
// openat time; a relative open of a cgroup file costs ~0.65x a full-path one
// (BENCHMARKS.md).
//
// A directory not read in a scrape is closed at the scrape's end (Sweep), so
// the cache holds the current tree only. A cached descriptor of a removed
// cgroup makes every open fail with ENOENT, as the path would; the reader
// tells a removed directory from an absent file by the directory's inode
// (a cgroup re-created under the same path is a new inode), see Reader.open.
// O_PATH descriptors do not keep a cgroup from being removed.
type dirCache struct {
	fds  map[string]cachedDir
	gen  uint64
	max  int    // most descriptors held: a share of RLIMIT_NOFILE
	name []byte // NUL-terminated file name of the current open, reused
}

type cachedDir struct {
	fd  int
	ino uint64
	gen uint64 // last scrape that used it
}

// maxCachedDirs bounds the cache whatever the descriptor limit: 5000
// containers with their pods in four hierarchies.
const maxCachedDirs = 40000

func newDirCache() *dirCache {
	limit := maxCachedDirs
	if cur, ok := rawfile.FileLimit(); ok && cur/2 < uint64(limit) {
		limit = int(cur / 2) // leave half for sockets, logs, exporters
	}
	return &dirCache{fds: map[string]cachedDir{}, max: limit, name: make([]byte, 0, 64)}
}

// lookup returns dir's descriptor, opening and caching it when the cache
// has room. ok is false when dir cannot be opened or the cache is full: the
// caller opens the file by its full path.
func (c *dirCache) lookup(dir string, path []byte) (fd int, ok bool) {
	if d, hit := c.fds[dir]; hit {
		if d.gen != c.gen {
			d.gen = c.gen
			c.fds[dir] = d
		}
		return d.fd, true
	}
	if len(c.fds) >= c.max {
		return -1, false
	}
	fd, err := rawfile.OpenDir(path)
	if err != nil {
		return -1, false
	}
	ino, err := rawfile.Inode(fd)
	if err != nil {
		rawfile.Close(fd)
		return -1, false
	}
	c.fds[dir] = cachedDir{fd: fd, ino: ino, gen: c.gen}
	return fd, true
}

// drop closes and forgets dir's descriptor.
func (c *dirCache) drop(dir string) {
	if d, ok := c.fds[dir]; ok {
		rawfile.Close(d.fd)
		delete(c.fds, dir)
	}
}

// sweep closes the descriptors of directories not used since the last
// sweep and starts a new generation.
func (c *dirCache) sweep() {
	for dir, d := range c.fds {
		if d.gen != c.gen {
			rawfile.Close(d.fd)
			delete(c.fds, dir)
		}
	}
	c.gen++
}

// close closes every descriptor.
func (c *dirCache) close() {
	for dir, d := range c.fds {
		rawfile.Close(d.fd)
		delete(c.fds, dir)
	}
}

// Sweep closes the directory descriptors of cgroups the reader did not read
// since the previous Sweep: call it once per scrape, after the reads.
func (r *Reader) Sweep() {
	if r.dirs != nil {
		r.dirs.sweep()
	}
}

// Close releases the reader's directory descriptors; the reader stays
// usable (it reopens them as needed).
func (r *Reader) Close() {
	if r.dirs != nil {
		r.dirs.close()
	}
}

// open opens dir/name (r.path holds the full path, NUL-terminated): relative
// to dir's cached descriptor when there is one, else by the full path.
// dirOK reports that a failed open found dir itself present (the file alone
// is absent), so the caller need not look at dir again.
func (r *Reader) open(dir, name string) (fd int, dirOK bool, err error) {
	if r.dirs == nil || name == "" || len(r.path) < len(dir)+2 || r.path[len(dir)] != '/' {
		fd, err = rawfile.Open(r.path)
		return fd, false, err
	}
	dirPath := r.path[:len(dir)+1]
	saved := dirPath[len(dir)]
	dirPath[len(dir)] = 0 // dir alone, NUL-terminated, in place
	dfd, ok := r.dirs.lookup(dir, dirPath)
	dirPath[len(dir)] = saved
	if !ok {
		fd, err = rawfile.Open(r.path)
		return fd, false, err
	}
	r.dirs.name = append(append(r.dirs.name[:0], r.path[len(dir)+1:len(r.path)-1]...), 0)
	fd, err = rawfile.OpenAt(dfd, r.dirs.name)
	if errors.Is(err, syscall.ENOENT) {
		// An absent file, or the directory was removed (then re-created
		// under the same path, or not). The path decides: a removed
		// directory's descriptor is dropped and the path opened again.
		if ino, serr := rawfile.PathInode(dir); serr != nil || ino != r.dirs.fds[dir].ino {
			r.dirs.drop(dir)
			fd, err = rawfile.Open(r.path)
			return fd, false, err
		}
		return -1, true, err
	}
	return fd, false, err
}
