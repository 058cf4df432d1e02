// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

// Package podlogs parses the names of the kubelet's container log files:
// the pod directories /var/log/pods/<namespace>_<pod>_<uid>/<container>/,
// their files <restart>.log, and the links
// /var/log/containers/<pod>_<namespace>_<container>-<id>.log. The identity
// fallback, the filesystem collection's log sizes and the logs signal all
// read those names; contrib's pkg/stanza container parser knows the file
// path layout too, but parses one log file's path per record and keeps its
// regular expression unexported, so these small parsers (fuzz-tested) are
// our own.
package podlogs // import "github.com/containerstats/containerstatsreceiver/internal/podlogs"

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/containerstats/containerstatsreceiver/internal/cgroupfs"
)

// ErrName is wrapped by every parse error: the name is not one the
// kubelet writes.
var ErrName = errors.New("not a kubelet log name")

// Pod is one pod directory of /var/log/pods.
type Pod struct {
	Namespace  string
	Name       string
	UID        string
	Containers []string // container directory names, sorted
}

// Key names one container log file of /var/log/pods: the pod UID, the
// container name and the restart count (<restart>.log).
type Key struct {
	PodUID    string
	Container string
	Restart   int64
}

// Link is one /var/log/containers link name.
type Link struct {
	Pod, Namespace, Container, ID string
}

// ParsePodDir parses a /var/log/pods directory name
// "<namespace>_<pod>_<uid>". Namespaces and pod names are DNS names and
// cannot hold "_"; the UID is whatever follows the second "_" (static pods
// use a hash, not a UUID).
func ParsePodDir(name string) (Pod, error) {
	parts := strings.Split(name, "_")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return Pod{}, fmt.Errorf("/var/log/pods/%q: %w", name, ErrName)
	}
	return Pod{Namespace: parts[0], Name: parts[1], UID: parts[2]}, nil
}

// ParseLink parses a /var/log/containers name
// "<pod>_<namespace>_<container>-<id>.log" with a 64-hex container ID.
func ParseLink(name string) (Link, error) {
	base, ok := strings.CutSuffix(name, ".log")
	parts := strings.Split(base, "_")
	if !ok || len(parts) != 3 || len(parts[2]) < 66 || parts[2][len(parts[2])-65] != '-' {
		return Link{}, fmt.Errorf("/var/log/containers/%q: %w", name, ErrName)
	}
	l := Link{Pod: parts[0], Namespace: parts[1], Container: parts[2][:len(parts[2])-65], ID: parts[2][len(parts[2])-64:]}
	if l.Pod == "" || l.Namespace == "" || l.Container == "" || !cgroupfs.IsHex64(l.ID) {
		return Link{}, fmt.Errorf("/var/log/containers/%q: %w", name, ErrName)
	}
	return l, nil
}

// ParsePath parses a kubelet container log path
// ".../<namespace>_<pod>_<uid>/<container>/<restart>.log" (any prefix, so
// a path under a host root parses too; a rotated ".log.<date>" suffix is
// accepted). It reuses the pod directory parser.
func ParsePath(p string) (Pod, Key, error) {
	dir, file := filepath.Split(p)
	dir = filepath.Clean(dir)
	ctr := filepath.Base(dir)
	lp, err := ParsePodDir(filepath.Base(filepath.Dir(dir)))
	if err != nil {
		return Pod{}, Key{}, fmt.Errorf("log path %q: %w", p, err)
	}
	if i := strings.Index(file, ".log"); i > 0 {
		file = file[:i]
	} else {
		return Pod{}, Key{}, fmt.Errorf("log path %q: %w", p, ErrName)
	}
	n, err := strconv.ParseInt(file, 10, 64)
	if err != nil || n < 0 || ctr == "" || ctr == "." || ctr == string(filepath.Separator) {
		return Pod{}, Key{}, fmt.Errorf("log path %q: %w", p, ErrName)
	}
	lp.Containers = []string{ctr}
	return lp, Key{PodUID: lp.UID, Container: ctr, Restart: n}, nil
}
