// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package cgroupfs // import "github.com/containerstats/containerstatsreceiver/internal/cgroupfs"

import (
	"strings"
)

// Kind is what a cgroup stands for.
type Kind uint8

const (
	// KindOther is a cgroup that is none of the below.
	KindOther Kind = iota
	// KindNode is the root cgroup: everything on the node.
	KindNode
	// KindKubepods is the kubepods (or kubepods.slice) cgroup.
	KindKubepods
	// KindQoS is a burstable or besteffort QoS-class cgroup.
	KindQoS
	// KindPod is a pod cgroup.
	KindPod
	// KindContainer is a container cgroup (inside a pod, or standalone).
	KindContainer
)

func (k Kind) String() string {
	return [...]string{"other", "node", "kubepods", "qos", "pod", "container"}[k]
}

// QoS classes as reported in k8s.pod.qos_class.
const (
	QoSGuaranteed = "guaranteed"
	QoSBurstable  = "burstable"
	QoSBestEffort = "besteffort"
)

// Runtime names as reported in container.runtime.name.
const (
	RuntimeContainerd = "containerd"
	RuntimeCRIO       = "cri-o"
	RuntimeDocker     = "docker"
	RuntimePodman     = "podman"
)

// Driver is the cgroup driver that named the kubepods tree.
type Driver uint8

const (
	// DriverUnknown: no kubepods tree seen.
	DriverUnknown Driver = iota
	// DriverCgroupfs names cgroups kubepods/burstable/pod<uid>/<id>.
	DriverCgroupfs
	// DriverSystemd names them kubepods.slice/kubepods-burstable.slice/....
	DriverSystemd
)

func (d Driver) String() string {
	return [...]string{"unknown", "cgroupfs", "systemd"}[d]
}

// Cgroup is a classified cgroup path.
type Cgroup struct {
	// Path is the cgroup's path relative to the hierarchy root, starting
	// with "/" ("/" for the node). For a path below a container (a nested
	// sub-cgroup) it is the container's own path.
	Path        string
	Kind        Kind
	Driver      Driver
	QoS         string // pods and containers in kubepods
	PodUID      string // pods and containers in kubepods
	ContainerID string // containers: 64 lower-case hex characters
	Runtime     string // containers, when the name tells
}

// ParsePath classifies a cgroup path such as a line of /proc/<pid>/cgroup or
// a directory found by the tree walk. Kubernetes paths of both drivers are
// recognized; outside kubepods a segment naming a container (64-hex ID,
// <runtime>-<id>.scope, docker/<id>) makes a standalone container. ok is
// false for anything else, which is then KindOther (or KindNode for "/").
func ParsePath(p string) (c Cgroup, ok bool) {
	p = "/" + strings.Trim(p, "/")
	if p == "/" {
		return Cgroup{Path: "/", Kind: KindNode}, true
	}
	segs := strings.Split(p[1:], "/")
	for i, s := range segs {
		switch s {
		case "kubepods":
			return parseKubepods(segs, i, DriverCgroupfs)
		case "kubepods.slice":
			return parseKubepods(segs, i, DriverSystemd)
		}
	}
	for i, s := range segs {
		if id, rt, isCtr := parseContainerName(s); isCtr {
			if rt == "" && i > 0 && segs[i-1] == "docker" {
				rt = RuntimeDocker
			}
			return Cgroup{
				Path: "/" + strings.Join(segs[:i+1], "/"), Kind: KindContainer,
				ContainerID: id, Runtime: rt,
			}, true
		}
	}
	return Cgroup{Path: p, Kind: KindOther}, false
}

// parseKubepods classifies the segments after the kubepods segment at index k.
func parseKubepods(segs []string, k int, drv Driver) (Cgroup, bool) {
	c := Cgroup{Path: "/" + strings.Join(segs[:k+1], "/"), Kind: KindKubepods, Driver: drv}
	i := k + 1
	if i == len(segs) {
		return c, true
	}
	qos, uid, isPod, ok := parsePodLevel(segs[i], drv)
	if !ok {
		return Cgroup{Path: "/" + strings.Join(segs[:i+1], "/"), Kind: KindOther}, false
	}
	if !isPod {
		c.Path, c.Kind, c.QoS = c.Path+"/"+segs[i], KindQoS, qos
		i++
		if i == len(segs) {
			return c, true
		}
		var q2 string
		q2, uid, isPod, ok = parsePodLevel(segs[i], drv)
		if !ok || !isPod || (drv == DriverSystemd && q2 != qos) {
			return Cgroup{Path: c.Path + "/" + segs[i], Kind: KindOther}, false
		}
	} else {
		qos = QoSGuaranteed
		if drv == DriverSystemd && !strings.HasPrefix(segs[i], "kubepods-pod") {
			return Cgroup{Path: c.Path + "/" + segs[i], Kind: KindOther}, false
		}
	}
	c.Path, c.Kind, c.QoS, c.PodUID = c.Path+"/"+segs[i], KindPod, qos, uid
	i++
	if i == len(segs) {
		return c, true
	}
	id, rt, isCtr := parseContainerName(segs[i])
	if !isCtr {
		return Cgroup{Path: c.Path + "/" + segs[i], Kind: KindOther, QoS: qos, PodUID: uid, Driver: drv}, false
	}
	c.Path, c.Kind, c.ContainerID, c.Runtime = c.Path+"/"+segs[i], KindContainer, id, rt
	return c, true
}

// parsePodLevel classifies a segment directly below kubepods or a QoS
// cgroup: a QoS class (isPod false) or a pod (isPod true, with its UID).
func parsePodLevel(s string, drv Driver) (qos, uid string, isPod, ok bool) {
	if drv == DriverCgroupfs {
		switch s {
		case QoSBurstable, QoSBestEffort:
			return s, "", false, true
		}
		if u, found := strings.CutPrefix(s, "pod"); found && validUID(u) {
			return "", u, true, true
		}
		return "", "", false, false
	}
	name, found := strings.CutSuffix(s, ".slice")
	if !found {
		return "", "", false, false
	}
	rest, found := strings.CutPrefix(name, "kubepods-")
	if !found {
		return "", "", false, false
	}
	for _, q := range []string{QoSBurstable, QoSBestEffort} {
		if rest == q {
			return q, "", false, true
		}
		if r, f := strings.CutPrefix(rest, q+"-"); f {
			qos, rest = q, r
			break
		}
	}
	if u, f := strings.CutPrefix(rest, "pod"); f {
		// systemd escapes "-" in unit names; kubelet writes the UID's
		// dashes as underscores.
		u = strings.ReplaceAll(u, "_", "-")
		if validUID(u) {
			return qos, u, true, true
		}
	}
	return "", "", false, false
}

// containerPrefixes are the container cgroup names "<prefix><64hex>" with
// the runtime they name: as a systemd scope ("<prefix><id>.scope") and,
// where unscoped is set, as a plain directory too (the runtime's cgroupfs
// manager). Podman's are "libpod-<id>" (its cgroupfs manager, under
// /libpod_parent) and "libpod-<id>.scope" (systemd: machine.slice, a pod's
// machine-libpod_pod_<pod>.slice, a rootless user's user@<uid>.service),
// and a Quadlet unit's payload "<unit>.service/libpod-payload-<id>";
// nerdctl's (containerd) "nerdctl-<id>.scope". Conmon scopes
// ("crio-conmon-<id>", "libpod-conmon-<id>.scope") do not match: the rest
// is not a 64-hex ID.
var containerPrefixes = [...]struct {
	prefix, runtime string
	unscoped        bool
}{
	{"cri-containerd-", RuntimeContainerd, false},
	{"crio-", RuntimeCRIO, true},
	{"docker-", RuntimeDocker, false},
	{"libpod-payload-", RuntimePodman, true},
	{"libpod-", RuntimePodman, true},
	{"nerdctl-", RuntimeContainerd, false},
}

// parseContainerName recognizes a container cgroup's own name:
// "<64hex>" (cgroupfs driver: containerd, docker) and the runtimes'
// prefixed names (containerPrefixes). Everything else (*.mount,
// init.scope, conmon scopes) is not a container.
func parseContainerName(s string) (id, runtime string, ok bool) {
	name := strings.TrimSuffix(s, ".scope")
	scoped := len(name) != len(s)
	if !scoped && IsHex64(name) {
		return name, "", true
	}
	for _, p := range containerPrefixes {
		if rest, found := strings.CutPrefix(name, p.prefix); found && IsHex64(rest) {
			if !scoped && !p.unscoped {
				return "", "", false
			}
			return rest, p.runtime, true
		}
	}
	return "", "", false
}

// IsHex64 reports whether s is a 64-hex-digit (lower-case) container ID,
// the form docker, containerd and CRI-O use. The one check the receiver
// has: cgroup names, log file names and image references all use it.
func IsHex64(s string) bool { return len(s) == 64 && isHexRange(s) }

// validUID accepts the 36-character UUID form Kubernetes uses (and, for
// static pods, the 32-hex config hash), in lower case.
func validUID(u string) bool {
	switch len(u) {
	case 32:
		return isHexRange(u)
	case 36:
		for i := 0; i < 36; i++ {
			c := u[i]
			if i == 8 || i == 13 || i == 18 || i == 23 {
				if c != '-' {
					return false
				}
				continue
			}
			if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
				return false
			}
		}
		return true
	}
	return false
}

func isHexRange(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
