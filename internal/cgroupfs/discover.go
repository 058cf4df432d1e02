// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package cgroupfs // import "github.com/containerstats/containerstatsreceiver/internal/cgroupfs"

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
)

// standaloneMaxDepth bounds the walk for containers outside kubepods:
// /system.slice/docker.service/docker/<id> is depth 4, a rootless Podman
// pod's container (/user.slice/user-<uid>.slice/user@<uid>.service/
// user.slice/user-libpod_pod_<pod>.slice/libpod-<id>.scope) and a rootless
// Quadlet payload (.../user@<uid>.service/app.slice/<unit>.service/
// libpod-payload-<id>) are depth 6.
const standaloneMaxDepth = 6

// Tree is the result of one discovery pass.
type Tree struct {
	Driver Driver
	// Kubepods is the cgroup path of the pods' root ("/kubepods" or
	// "/kubepods.slice"; the kubelet's pod cgroup root), "" when the node
	// has none.
	Kubepods   string
	Pods       []Cgroup
	Containers []Cgroup // one per container ID, pod containers first
	// Unlisted are the directories that could not be listed (EACCES, EIO,
	// EMFILE...): what lies below them is missing from Pods and Containers
	// but is not gone. A directory that no longer exists is not one.
	Unlisted []ListError
}

// ListError is a cgroup directory discovery could not list.
type ListError struct {
	Rel string // cgroup path relative to the hierarchy root, e.g. "/kubepods/burstable"
	Dir string // the directory as listed (host root prefix included)
	Err error
}

func (e ListError) Error() string { return fmt.Sprintf("list cgroup directory %s: %v", e.Dir, e.Err) }
func (e ListError) Unwrap() error { return e.Err }

// UnlistedAbove returns the index in Unlisted of the directory that holds
// cgroup path rel, or -1: discovery could not see below it, so rel's
// absence from the tree says nothing.
func (t *Tree) UnlistedAbove(rel string) int {
	for i, u := range t.Unlisted {
		if rel == u.Rel || strings.HasPrefix(rel, strings.TrimSuffix(u.Rel, "/")+"/") {
			return i
		}
	}
	return -1
}

// Discover walks the hierarchy and classifies kubepods, QoS, pod and
// container cgroups. With standalone set it also reports container cgroups
// outside kubepods. A container ID seen under several paths is reported once
// (the kubepods path wins, then the shortest). Directories that vanish during
// the walk are skipped: the walk reads a live tree. A directory below the
// root that cannot be listed is recorded in Tree.Unlisted and the walk goes
// on; only failing to list the root itself is an error.
func (l *Layout) Discover(standalone bool) (Tree, error) {
	var t Tree
	root := l.WalkRoot()
	seen := map[string]int{} // container ID -> index in t.Containers
	add := func(c Cgroup) {
		if i, dup := seen[c.ContainerID]; dup {
			old := t.Containers[i]
			if old.PodUID == "" && c.PodUID != "" || old.PodUID == c.PodUID && len(c.Path) < len(old.Path) {
				t.Containers[i] = c
			}
			return
		}
		seen[c.ContainerID] = len(t.Containers)
		t.Containers = append(t.Containers, c)
	}
	top, err := l.readDirNames(root)
	if err != nil {
		return t, fmt.Errorf("list cgroup directory %s: %w", root, err)
	}
	for _, name := range top {
		if name != "kubepods" && name != "kubepods.slice" {
			continue
		}
		kp, _ := ParsePath("/" + name)
		t.Driver = kp.Driver
		if t.Kubepods == "" {
			t.Kubepods = kp.Path
		}
		l.walkKubepods(root, kp, &t, add)
	}
	if standalone {
		l.walkStandalone(root, "", 1, &t, add)
	}
	return t, nil
}

func (l *Layout) walkKubepods(root string, kp Cgroup, t *Tree, add func(Cgroup)) {
	children := l.list(root, kp.Path, t)
	for _, name := range children {
		c, ok := ParsePath(kp.Path + "/" + name)
		if !ok {
			continue
		}
		switch c.Kind {
		case KindQoS:
			pods := l.list(root, c.Path, t)
			for _, pn := range pods {
				if p, ok := ParsePath(c.Path + "/" + pn); ok && p.Kind == KindPod {
					l.walkPod(root, p, t, add)
				}
			}
		case KindPod:
			l.walkPod(root, c, t, add)
		}
	}
}

func (l *Layout) walkPod(root string, pod Cgroup, t *Tree, add func(Cgroup)) {
	t.Pods = append(t.Pods, pod)
	names := l.list(root, pod.Path, t)
	for _, name := range names {
		if c, ok := ParsePath(pod.Path + "/" + name); ok && c.Kind == KindContainer {
			add(c)
		}
	}
}

func (l *Layout) walkStandalone(root, rel string, depth int, t *Tree, add func(Cgroup)) {
	var names []string
	if rel == "" {
		names, _ = l.readDirNames(root) // listed by Discover a moment ago
	} else {
		names = l.list(root, rel, t)
	}
	for _, name := range names {
		if depth == 1 && (name == "kubepods" || name == "kubepods.slice") {
			continue
		}
		p := rel + "/" + name
		if _, _, isCtr := parseContainerName(name); isCtr {
			if c, ok := ParsePath(p); ok && c.Kind == KindContainer {
				add(c)
			}
			continue // a container's sub-cgroups are part of it
		}
		if depth < standaloneMaxDepth {
			l.walkStandalone(root, p, depth+1, t, add)
		}
	}
}

// list returns the sub-directories of cgroup rel; a listing error is
// recorded in t.Unlisted, naming the directory, and gives none.
func (l *Layout) list(root, rel string, t *Tree) []string {
	dir := filepath.Join(root, rel)
	names, err := l.readDirNames(dir)
	if err != nil {
		t.Unlisted = append(t.Unlisted, ListError{Rel: rel, Dir: dir, Err: err})
	}
	return names
}

// readDirNames lists the sub-directories of dir, sorted. A directory that
// does not exist (any more) has none.
func (l *Layout) readDirNames(dir string) ([]string, error) {
	var names []string
	var err error
	if l.listFault != nil {
		err = l.listFault(dir)
	}
	if err == nil {
		names, err = l.subdirs(dir, nil)
	}
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	sort.Strings(names)
	return names, nil
}
