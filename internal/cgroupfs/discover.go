// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package cgroupfs // import "github.com/containerstats/containerstatsreceiver/internal/cgroupfs"

import (
	"errors"
	"io/fs"
	"path/filepath"
	"sort"
)

// standaloneMaxDepth bounds the walk for containers outside kubepods
// (/system.slice/docker.service/docker/<id> is depth 4).
const standaloneMaxDepth = 5

// Tree is the result of one discovery pass.
type Tree struct {
	Driver     Driver
	Pods       []Cgroup
	Containers []Cgroup // one per container ID, pod containers first
}

// Discover walks the hierarchy and classifies kubepods, QoS, pod and
// container cgroups. With standalone set it also reports container cgroups
// outside kubepods. A container ID seen under several paths is reported once
// (the kubepods path wins, then the shortest). Directories that vanish during
// the walk are skipped: the walk reads a live tree.
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
		return t, err
	}
	for _, name := range top {
		if name != "kubepods" && name != "kubepods.slice" {
			continue
		}
		kp, _ := ParsePath("/" + name)
		t.Driver = kp.Driver
		l.walkKubepods(root, kp, &t, add)
	}
	if standalone {
		l.walkStandalone(root, "", 1, add)
	}
	return t, nil
}

func (l *Layout) walkKubepods(root string, kp Cgroup, t *Tree, add func(Cgroup)) {
	children, _ := l.readDirNames(filepath.Join(root, kp.Path))
	for _, name := range children {
		c, ok := ParsePath(kp.Path + "/" + name)
		if !ok {
			continue
		}
		switch c.Kind {
		case KindQoS:
			pods, _ := l.readDirNames(filepath.Join(root, c.Path))
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
	names, _ := l.readDirNames(filepath.Join(root, pod.Path))
	for _, name := range names {
		if c, ok := ParsePath(pod.Path + "/" + name); ok && c.Kind == KindContainer {
			add(c)
		}
	}
}

func (l *Layout) walkStandalone(root, rel string, depth int, add func(Cgroup)) {
	names, _ := l.readDirNames(filepath.Join(root, rel))
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
			l.walkStandalone(root, p, depth+1, add)
		}
	}
}

// readDirNames lists the sub-directories of dir, sorted. A directory that
// does not exist (any more) has none.
func (l *Layout) readDirNames(dir string) ([]string, error) {
	names, err := l.subdirs(dir, nil)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	sort.Strings(names)
	return names, nil
}
