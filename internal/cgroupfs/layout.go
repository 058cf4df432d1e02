// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package cgroupfs // import "github.com/containerstats/containerstatsreceiver/internal/cgroupfs"

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/containerstats/containerstatsreceiver/internal/rawfile"
)

// Mode is how cgroups are mounted on the node.
type Mode uint8

const (
	// ModeV1 has only per-controller v1 hierarchies.
	ModeV1 Mode = iota + 1
	// ModeV2 has the single unified hierarchy at the cgroup root.
	ModeV2
	// ModeHybrid has v1 controller hierarchies plus a v2 tree, usually at
	// /sys/fs/cgroup/unified, which carries PSI but few or no controllers.
	ModeHybrid
)

func (m Mode) String() string {
	switch m {
	case ModeV1:
		return "v1"
	case ModeV2:
		return "v2"
	case ModeHybrid:
		return "hybrid"
	}
	return "unknown"
}

// Controllers the receiver reads on v1.
const (
	CtrlCPU     = "cpu"
	CtrlCPUAcct = "cpuacct"
	CtrlMemory  = "memory"
	CtrlPids    = "pids"
)

// Layout says where each hierarchy of the node lives, as paths that already
// include the host root prefix.
type Layout struct {
	Root    string            // host root prefix, e.g. "/" or "/hostfs"
	Base    string            // <root>/sys/fs/cgroup
	Mode    Mode              // v1, v2 or hybrid
	Unified string            // v2 hierarchy mount, "" on pure v1
	V1      map[string]string // v1 controller -> hierarchy mount

	trace     func(path string)      // called with every directory listed; nil in production
	listFault func(dir string) error // fault injection for discovery's listings; nil in production
	dirPath   []byte                 // reused by subdirs: Discover and a Reader of one Layout run on one goroutine
	dirBuf    []byte
	joined    joinMemo // the directories of the cgroup path read last (l.join)
}

// SetTrace makes discovery call fn with every directory it lists, with a
// trailing "/" (benchmarks replay the set of files a scrape reads).
func (l *Layout) SetTrace(fn func(path string)) { l.trace = fn }

// SetListFault makes discovery call fn before listing each directory; a
// non-nil error stands for the listing's error. Tests inject EACCES, EIO or
// EMFILE with it (root ignores permission bits); nil in production.
func (l *Layout) SetListFault(fn func(dir string) error) { l.listFault = fn }

// subdirs appends the names of dir's sub-directories (hidden ones skipped)
// to dst, in no particular order. It allocates only the names it returns.
func (l *Layout) subdirs(dir string, dst []string) ([]string, error) {
	if l.dirBuf == nil {
		l.dirBuf = make([]byte, 32<<10)
	}
	l.dirPath = rawfile.Path(l.dirPath, dir, "")
	err := rawfile.ReadDir(l.dirPath, l.dirBuf, func(name []byte, isDir bool) {
		if isDir && name[0] != '.' {
			dst = append(dst, string(name))
		}
	})
	if err == nil && l.trace != nil {
		l.trace(dir + "/")
	}
	return dst, err
}

// ErrNoCgroupFS is returned by Detect when nothing under the root looks like a
// cgroup filesystem.
var ErrNoCgroupFS = errors.New("no cgroup filesystem found")

// Detect finds the cgroup hierarchies under root/sys/fs/cgroup from the files
// themselves: a directory holding cgroup.controllers is a v2 hierarchy; one
// holding cgroup.procs but no cgroup.controllers is a v1 hierarchy whose
// controllers are named by the directory (cpu,cpuacct mounts included, and
// their cpu and cpuacct symlinks).
func Detect(root string) (*Layout, error) {
	base := filepath.Join(root, "sys", "fs", "cgroup")
	l := &Layout{Root: root, Base: base, V1: map[string]string{}}
	if exists(filepath.Join(base, "cgroup.controllers")) {
		l.Mode, l.Unified = ModeV2, base
		return l, nil
	}
	entries, err := os.ReadDir(base)
	if err != nil {
		return nil, fmt.Errorf("%w under %s: %w", ErrNoCgroupFS, root, err)
	}
	// Sort for determinism when two names map to one controller.
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	for _, e := range entries {
		dir := filepath.Join(base, e.Name())
		fi, err := os.Stat(dir) // follows the cpu -> cpu,cpuacct symlinks
		if err != nil || !fi.IsDir() {
			continue
		}
		switch {
		case exists(filepath.Join(dir, "cgroup.controllers")):
			if l.Unified == "" {
				l.Unified = dir
			}
		case exists(filepath.Join(dir, "cgroup.procs")):
			for _, c := range strings.Split(e.Name(), ",") {
				c = strings.TrimPrefix(c, "name=")
				if _, dup := l.V1[c]; !dup {
					l.V1[c] = dir
				}
			}
		}
	}
	switch {
	case len(l.V1) > 0 && l.Unified != "":
		l.Mode = ModeHybrid
	case len(l.V1) > 0:
		l.Mode = ModeV1
	case l.Unified != "":
		l.Mode = ModeV2
	default:
		return nil, fmt.Errorf("%w under %s", ErrNoCgroupFS, base)
	}
	if l.Mode != ModeV2 && l.V1[CtrlCPUAcct] == "" && l.V1[CtrlMemory] == "" {
		return nil, fmt.Errorf("%w under %s: v1 hierarchies without cpuacct or memory", ErrNoCgroupFS, base)
	}
	return l, nil
}

// StatsV1 reports whether CPU and memory statistics come from v1 hierarchies
// (v1 and hybrid nodes) rather than the unified tree.
func (l *Layout) StatsV1() bool { return l.Mode != ModeV2 }

// WalkRoot is the hierarchy whose directory tree discovery walks: the unified
// tree on v2, else the memory (or cpuacct, or cpu) hierarchy.
func (l *Layout) WalkRoot() string {
	if !l.StatsV1() {
		return l.Unified
	}
	for _, c := range []string{CtrlMemory, CtrlCPUAcct, CtrlCPU, CtrlPids} {
		if d := l.V1[c]; d != "" {
			return d
		}
	}
	return ""
}

// Dir returns the directory of cgroup path rel (e.g. "/kubepods/pod1/abc")
// in the hierarchy that holds controller ctrl; "" when the node has none.
func (l *Layout) Dir(ctrl, rel string) string {
	if !l.StatsV1() {
		return l.join(l.Unified, rel)
	}
	d := l.V1[ctrl]
	if d == "" {
		return ""
	}
	return l.join(d, rel)
}

// join is filepath.Join(dir, rel) for a cgroup directory: dir is a clean
// mount point and rel, from discovery, a clean path from the hierarchy
// root ("/kubepods/..."), so most joins are a concatenation; anything
// else goes through filepath.Join. Every file of every entity is opened
// below such a join: the scrape's hot path.
func join(dir, rel string) string {
	if len(rel) > 1 && rel[0] == '/' && len(dir) > 1 && dir[0] == '/' && isClean(rel) && isClean(dir) {
		return dir + rel
	}
	return filepath.Join(dir, rel)
}

// joinMemo holds the directories joined for one cgroup path: a scrape
// reads one entity at a time, every family asking for the same path in
// the same few hierarchies.
type joinMemo struct {
	rel  string
	n    int
	base [8]string
	dir  [8]string
}

// join is join(base, rel), remembered for the last rel asked for: the
// families of one entity share one allocation per hierarchy.
func (l *Layout) join(base, rel string) string {
	m := &l.joined
	if m.rel != rel {
		m.rel, m.n = rel, 0
	} else {
		for i := range m.n {
			if m.base[i] == base {
				return m.dir[i]
			}
		}
	}
	d := join(base, rel)
	if m.n < len(m.base) {
		m.base[m.n], m.dir[m.n] = base, d
		m.n++
	}
	return d
}

// isClean reports whether p (starting with "/") has no empty, "." or ".."
// element and no trailing slash.
func isClean(p string) bool {
	for i := 0; i < len(p); i++ {
		if p[i] != '/' {
			continue
		}
		next := p[i+1:]
		if next == "" || next[0] == '/' ||
			next[0] == '.' && (len(next) == 1 || next[1] == '/' || next[1] == '.' && (len(next) == 2 || next[2] == '/')) {
			return false
		}
	}
	return true
}

// PSIDir returns where the pressure files of rel live: the unified tree on
// v2 and hybrid nodes (PSI is a v2 feature), "" on pure v1.
func (l *Layout) PSIDir(rel string) string {
	if l.Unified == "" {
		return ""
	}
	return l.join(l.Unified, rel)
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
