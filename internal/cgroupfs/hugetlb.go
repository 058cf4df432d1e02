// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package cgroupfs // import "github.com/containerstats/containerstatsreceiver/internal/cgroupfs"

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// CtrlHugetlb is the v1 hugetlb controller.
const CtrlHugetlb = "hugetlb"

// HugePageSize is one huge page size the kernel supports: Name as the
// hugetlb controller names it in its files ("2MB", "1GB", "64KB") and the
// size in bytes.
type HugePageSize struct {
	Name  string
	Bytes uint64
}

// HugePageSizes lists the huge page sizes of the node under root, from the
// directories of <root>/sys/kernel/mm/hugepages (hugepages-<N>kB), sorted
// by size. A node without the directory (no hugetlbfs support) has none:
// an empty list, no error.
func HugePageSizes(root string) ([]HugePageSize, error) {
	dir := filepath.Join(root, "sys", "kernel", "mm", "hugepages")
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	var out []HugePageSize
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), "hugepages-") {
			continue
		}
		s, err := parseHugePageDir(e.Name())
		if err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, e.Name()), err)
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Bytes < out[j].Bytes })
	return out, nil
}

// parseHugePageDir turns a sysfs directory name "hugepages-<N>kB" into the
// size and the name the hugetlb controller's files carry: the kernel's
// mem_fmt (mm/hugetlb_cgroup.c), GB from 1 GiB on, MB from 1 MiB on, else
// KB, each an integer division.
func parseHugePageDir(name string) (HugePageSize, error) {
	num, ok := strings.CutPrefix(name, "hugepages-")
	if ok {
		num, ok = strings.CutSuffix(num, "kB")
	}
	if !ok || num == "" {
		return HugePageSize{}, fmt.Errorf("%w huge page directory %q", errMalformed, name)
	}
	kb, err := parseUintBytes([]byte(num))
	if err != nil || kb == 0 || kb > (1<<64-1)>>10 {
		return HugePageSize{}, fmt.Errorf("%w huge page directory %q", errMalformed, name)
	}
	b := kb << 10
	var s string
	switch {
	case b >= 1<<30:
		s = strconv.FormatUint(b>>30, 10) + "GB"
	case b >= 1<<20:
		s = strconv.FormatUint(b>>20, 10) + "MB"
	default:
		s = strconv.FormatUint(kb, 10) + "KB"
	}
	return HugePageSize{Name: s, Bytes: b}, nil
}

// Hugetlb is one page size's hugetlb accounting of a cgroup.
type Hugetlb struct {
	Size  string // the page size's name, e.g. "2MB"
	Usage U64    // bytes of huge pages of this size charged to the cgroup
	Limit Limit  // its limit; Unlimited for "max" or v1's huge default
}

// hugetlbDir is where the hugetlb files of rel live: the v1 hugetlb
// hierarchy where one is mounted, else the unified tree (v2, or a hybrid
// node whose hugetlb controller is bound to it); "" when neither. v1 names
// the files hugetlb.<size>.usage_in_bytes / .limit_in_bytes, v2
// hugetlb.<size>.current / .max.
func (l *Layout) hugetlbDir(rel string) (dir string, v1 bool) {
	if d := l.V1[CtrlHugetlb]; d != "" && l.Mode != ModeV2 {
		return l.join(d, rel), true
	}
	if l.Unified == "" {
		return "", false
	}
	return l.join(l.Unified, rel), false
}

// Hugetlb reads, for each page size, the huge page usage of cgroup rel
// and, when limit is set, its limit, appending to dst (reused by the
// caller). A missing file is an absent value: a cgroup where the hugetlb
// controller is not enabled has none, and neither has the v2 root. A
// cgroup missing from the hugetlb hierarchy is absent too, not
// ErrVanished (the hierarchy discovery walked decides that).
func (r *Reader) Hugetlb(rel string, sizes []HugePageSize, limit bool, dst []Hugetlb) ([]Hugetlb, error) {
	dst = dst[:0]
	dir, v1 := r.l.hugetlbDir(rel)
	if dir == "" {
		return dst, nil
	}
	usage, limitFile := ".current", ".max"
	if v1 {
		usage, limitFile = ".usage_in_bytes", ".limit_in_bytes"
	}
	for _, sz := range sizes {
		h := Hugetlb{Size: sz.Name}
		var err error
		if h.Usage, err = r.readUint(dir, "hugetlb."+sz.Name+usage); err != nil {
			if errors.Is(err, ErrVanished) {
				return dst[:0], nil
			}
			return dst[:0], err
		}
		if limit && h.Usage.OK {
			if h.Limit, err = r.readLimit(dir, "hugetlb."+sz.Name+limitFile); err != nil {
				if errors.Is(err, ErrVanished) {
					return dst[:0], nil
				}
				return dst[:0], err
			}
		}
		if h.Usage.OK || h.Limit.OK {
			dst = append(dst, h)
		}
	}
	return dst, nil
}
