// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package identity // import "github.com/containerstats/containerstatsreceiver/internal/identity"

import (
	"os"
	"path/filepath"

	"github.com/containerstats/containerstatsreceiver/internal/podlogs"
)

// The kubelet's log directories are the last identity source when no
// runtime answers: /var/log/pods/<namespace>_<pod>_<uid>/<container>/ and
// the links /var/log/containers/<pod>_<namespace>_<container>-<id>.log,
// listed in bulk here and parsed by internal/podlogs.

// PodLogs reads the kubelet's log directories under a host root.
type PodLogs struct {
	pods       string
	containers string
}

// NewPodLogs returns a reader of <root>/var/log/pods and
// <root>/var/log/containers.
func NewPodLogs(root string) *PodLogs {
	return &PodLogs{
		pods:       filepath.Join(root, "var/log/pods"),
		containers: filepath.Join(root, "var/log/containers"),
	}
}

// Scan lists both directories, each once: the pod directories, the
// container ID -> container name of every /var/log/containers link, and
// the container ID of each log file those links point to (how a log file
// gets its container ID when no runtime answers). Unreadable directories
// and names that do not parse are skipped: the fallback gives what it can.
func (p *PodLogs) Scan() (pods map[string]podlogs.Pod, ctrNames map[string]string, links map[podlogs.Key]string) {
	pods = map[string]podlogs.Pod{}
	ctrNames = map[string]string{}
	links = map[podlogs.Key]string{}
	if entries, err := os.ReadDir(p.pods); err == nil {
		for _, e := range entries {
			if !e.IsDir() {
				continue
			}
			lp, err := podlogs.ParsePodDir(e.Name())
			if err != nil {
				continue
			}
			if sub, err := os.ReadDir(filepath.Join(p.pods, e.Name())); err == nil {
				for _, s := range sub {
					if s.IsDir() {
						lp.Containers = append(lp.Containers, s.Name())
					}
				}
			}
			pods[lp.UID] = lp
		}
	}
	entries, err := os.ReadDir(p.containers)
	if err != nil {
		return pods, ctrNames, links
	}
	for _, e := range entries {
		l, err := podlogs.ParseLink(e.Name())
		if err != nil {
			continue
		}
		ctrNames[l.ID] = l.Container
		// <pod>_<namespace>_<container>-<id>.log -> /var/log/pods/.../<restart>.log
		target, err := os.Readlink(filepath.Join(p.containers, e.Name()))
		if err != nil {
			continue
		}
		if _, k, err := podlogs.ParsePath(target); err == nil && k.Container == l.Container {
			links[k] = l.ID
		}
	}
	return pods, ctrNames, links
}
