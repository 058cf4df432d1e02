// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package identity // import "github.com/containerstats/containerstatsreceiver/internal/identity"

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/containerstats/containerstatsreceiver/internal/cgroupfs"
)

// The kubelet's log directories are the last identity source when no
// runtime answers: /var/log/pods/<namespace>_<pod>_<uid>/<container>/ and
// the links /var/log/containers/<pod>_<namespace>_<container>-<id>.log.
// contrib's pkg/stanza container parser (which the logs signal uses) knows
// the file path layout, but it parses one log file's path per record and
// keeps its regular expression unexported; identity needs the directory
// names themselves, listed in bulk, so these two small parsers
// (fuzz-tested) are our own.

// LogPod is one pod directory of /var/log/pods.
type LogPod struct {
	Namespace  string
	Name       string
	UID        string
	Containers []string // container directory names, sorted
}

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
func (p *PodLogs) Scan() (pods map[string]LogPod, ctrNames map[string]string, links map[LogKey]string) {
	pods = map[string]LogPod{}
	ctrNames = map[string]string{}
	links = map[LogKey]string{}
	if entries, err := os.ReadDir(p.pods); err == nil {
		for _, e := range entries {
			if !e.IsDir() {
				continue
			}
			lp, err := parsePodLogDir(e.Name())
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
		l, err := parseContainerLogName(e.Name())
		if err != nil {
			continue
		}
		ctrNames[l.id] = l.container
		// <pod>_<namespace>_<container>-<id>.log -> /var/log/pods/.../<restart>.log
		target, err := os.Readlink(filepath.Join(p.containers, e.Name()))
		if err != nil {
			continue
		}
		if _, k, err := ParseLogPath(target); err == nil && k.Container == l.container {
			links[k] = l.id
		}
	}
	return pods, ctrNames, links
}

var errLogName = errors.New("not a kubelet log name")

// ParsePodLogDir parses a /var/log/pods directory name
// "<namespace>_<pod>_<uid>" (the filesystem stats' log sizes use it).
func ParsePodLogDir(name string) (LogPod, error) { return parsePodLogDir(name) }

// parsePodLogDir parses "<namespace>_<pod>_<uid>". Namespaces and pod names
// are DNS names and cannot hold "_"; the UID is whatever follows the second
// "_" (static pods use a hash, not a UUID).
func parsePodLogDir(name string) (LogPod, error) {
	parts := strings.Split(name, "_")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return LogPod{}, fmt.Errorf("/var/log/pods/%q: %w", name, errLogName)
	}
	return LogPod{Namespace: parts[0], Name: parts[1], UID: parts[2]}, nil
}

type containerLog struct {
	pod, namespace, container, id string
}

// parseContainerLogName parses "<pod>_<namespace>_<container>-<id>.log"
// with a 64-hex container ID.
func parseContainerLogName(name string) (containerLog, error) {
	base, ok := strings.CutSuffix(name, ".log")
	parts := strings.Split(base, "_")
	if !ok || len(parts) != 3 || len(parts[2]) < 66 || parts[2][len(parts[2])-65] != '-' {
		return containerLog{}, fmt.Errorf("/var/log/containers/%q: %w", name, errLogName)
	}
	l := containerLog{pod: parts[0], namespace: parts[1], container: parts[2][:len(parts[2])-65], id: parts[2][len(parts[2])-64:]}
	if l.pod == "" || l.namespace == "" || l.container == "" || !cgroupfs.IsHex64(l.id) {
		return containerLog{}, fmt.Errorf("/var/log/containers/%q: %w", name, errLogName)
	}
	return l, nil
}

// LogKey names one container log file of /var/log/pods: the pod UID, the
// container name and the restart count (<restart>.log).
type LogKey struct {
	PodUID    string
	Container string
	Restart   int64
}

// ParseLogPath parses a kubelet container log path
// ".../<namespace>_<pod>_<uid>/<container>/<restart>.log" (any prefix, so
// a path under a host root parses too; a rotated ".log.<date>" suffix is
// accepted). It reuses the /var/log/pods directory parser.
func ParseLogPath(p string) (LogPod, LogKey, error) {
	dir, file := filepath.Split(p)
	dir = filepath.Clean(dir)
	ctr := filepath.Base(dir)
	lp, err := parsePodLogDir(filepath.Base(filepath.Dir(dir)))
	if err != nil {
		return LogPod{}, LogKey{}, fmt.Errorf("log path %q: %w", p, err)
	}
	if i := strings.Index(file, ".log"); i > 0 {
		file = file[:i]
	} else {
		return LogPod{}, LogKey{}, fmt.Errorf("log path %q: %w", p, errLogName)
	}
	n, err := strconv.ParseInt(file, 10, 64)
	if err != nil || n < 0 || ctr == "" || ctr == "." || ctr == string(filepath.Separator) {
		return LogPod{}, LogKey{}, fmt.Errorf("log path %q: %w", p, errLogName)
	}
	lp.Containers = []string{ctr}
	return lp, LogKey{PodUID: lp.UID, Container: ctr, Restart: n}, nil
}
