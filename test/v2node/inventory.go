// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

// Package v2node tests the receiver on a real cgroup v2 node: a QEMU guest
// (internal/testing/vmnode) with systemd, containerd's CRI plugin on runc's
// systemd cgroup driver, cAdvisor and a kubelet. host_test.go (build tag
// vmnode, `make v2-test`) builds the guest side (build tag v2guest) and the
// binaries it needs, boots the guest, and reports each guest test as its
// own; fixtures_test.go checks our v2 fixtures against what the guest's
// kernel has. docs/v2-node.md describes the whole.
package v2node

import (
	"sort"
	"strings"
)

// Inventory is what one kind of cgroup holds on the real node.
type Inventory struct {
	Kind  string              `json:"kind"` // root, kubepods, qos, pod, container, system.slice, init.scope
	Path  string              `json:"path"` // relative to the v2 mount
	Files map[string][]string `json:"files"`
	// Read are the files a scrape with every metric on opened there.
	Read []string `json:"read"`
}

// fileKeys are the keys of a keyed cgroup file's contents: the first
// field of each "key value" line (memory.stat, cpu.stat, memory.events),
// the key of each "key=value" field of a nested-keyed file (io.stat, whose
// lines start with a device number) and the line names of a pressure file
// ("some", "full"); nil for a single value or a list, and for cpu.max
// ("$MAX $PERIOD", two values that look like a key and its value).
func fileKeys(name, content string) []string {
	lines := strings.Split(strings.TrimSpace(content), "\n")
	set := map[string]bool{}
	switch {
	case name == "cpu.max":
	case strings.HasSuffix(name, ".pressure"):
		for _, l := range lines {
			if f := strings.Fields(l); len(f) > 0 {
				set[f[0]] = true
			}
		}
	case name == "io.stat" || name == "io.max":
		for _, l := range lines {
			for _, f := range strings.Fields(l) {
				if k, _, ok := strings.Cut(f, "="); ok && k != "" {
					set[k] = true
				}
			}
		}
	default:
		for _, l := range lines {
			f := strings.Fields(l)
			if len(f) != 2 || !numeric(f[1]) || numeric(f[0]) {
				return nil
			}
			set[f[0]] = true
		}
	}
	if len(set) == 0 {
		return nil
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func numeric(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if (r < '0' || r > '9') && r != '-' {
			return false
		}
	}
	return true
}
