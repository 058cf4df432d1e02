// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package node // import "github.com/containerstats/containerstatsreceiver/internal/node"

import (
	"fmt"
	"sync"

	"go.uber.org/zap"

	"github.com/containerstats/containerstatsreceiver/internal/cgroupfs"
	"github.com/containerstats/containerstatsreceiver/internal/cri"
	"github.com/containerstats/containerstatsreceiver/internal/identity/containerd"
	"github.com/containerstats/containerstatsreceiver/internal/identity/docker"
	"github.com/containerstats/containerstatsreceiver/internal/procfs"
)

// HostConfig is what a Host is made from.
type HostConfig struct {
	// Root is the host root (root_path); errors name it.
	Root string
	// Runtimes are the runtime sockets to use or detect under Root.
	Runtimes Runtimes
	// Standalone: the cgroup index also knows containers outside the
	// kubepods tree (standalone_containers).
	Standalone bool
	// IndexCgroups: a logs receiver looks containers up in the cgroup
	// index (logs.enabled), so every tree a scrape discovers updates it.
	IndexCgroups bool
}

// Runtimes is the runtime section's sockets: each runtime on or off, and
// its configured socket ("" or nil: detected under the root).
type Runtimes struct {
	CRI                bool
	CRIEndpoint        string
	Containerd         bool
	ContainerdEndpoint string
	Docker             bool
	DockerEndpoints    []string
}

// Endpoints are the runtime sockets a Host found (or was given): "" or
// nil for a runtime that is off or has no socket.
type Endpoints struct {
	CRI        string
	Containerd string
	Docker     []string
}

// Host is the host handle of one receiver configuration: everything the
// receiver reads under root_path, made once by New and shared by the
// scrape, the log files and the events. It holds the cgroup layout
// (detected once, whichever reader asks first), /proc, the runtime
// sockets (detected once, when first asked: at Start, not when the config
// is loaded) and the log records' container -> cgroup index, which the
// scrapes' discoveries update through Discovered. Its errors name
// root_path.
type Host struct {
	root    string
	rt      Runtimes
	cgroups *cgroupfs.Host
	proc    procfs.FS
	index   *CgroupIndex
	feed    bool // Discovered updates index

	epOnce sync.Once
	ep     Endpoints
}

// NewHost returns the handle of c.Root; nothing is read before a method
// asks. A nil logger logs nothing.
func NewHost(c HostConfig, logger *zap.Logger) *Host {
	cg := cgroupfs.NewHost(c.Root)
	return &Host{
		root: c.Root, rt: c.Runtimes, cgroups: cg, proc: procfs.NewFS(c.Root),
		index: NewCgroupIndex(cg, c.Standalone, nil, logger), feed: c.IndexCgroups,
	}
}

// Root is the host root prefix (root_path): the readers made from the
// handle (the background filesystem collection, /var/log/pods) join
// their paths to it.
func (h *Host) Root() string { return h.root }

// CheckPlatform fails, naming root_path, where the receiver cannot run
// (not Linux); checked once.
func (h *Host) CheckPlatform() error { return h.cgroups.CheckPlatform() }

// Layout checks the platform and returns a cgroup layout of the caller's
// own (a Layout serves one goroutine), from the handle's one detection.
// It fails, naming root_path, when nothing under the root is a cgroup
// filesystem.
func (h *Host) Layout() (*cgroupfs.Layout, error) {
	if err := h.cgroups.CheckPlatform(); err != nil {
		return nil, err
	}
	l, err := h.cgroups.Layout()
	if err != nil {
		return nil, fmt.Errorf("root_path %q: %w", h.root, err)
	}
	return l, nil
}

// Detections is how many cgroup layout detections ran: 1 once one
// succeeded, however many readers share the handle.
func (h *Host) Detections() int { return h.cgroups.Detections() }

// Proc is /proc under the root.
func (h *Host) Proc() procfs.FS { return h.proc }

// Endpoints are the runtime sockets: the configured ones, else the first
// known socket of each runtime that exists under the root; detected on the
// first call, the same answer after.
func (h *Host) Endpoints() Endpoints {
	h.epOnce.Do(func() {
		if h.rt.CRI {
			h.ep.CRI = cri.Endpoint(h.root, h.rt.CRIEndpoint)
		}
		if h.rt.Containerd {
			h.ep.Containerd = containerd.Endpoint(h.root, h.rt.ContainerdEndpoint)
		}
		if h.rt.Docker {
			h.ep.Docker = docker.Endpoints(h.root, h.rt.DockerEndpoints)
		}
	})
	return h.ep
}

// Cgroups is the log records' container -> cgroup index.
func (h *Host) Cgroups() *CgroupIndex { return h.index }

// Discovered takes a tree a scrape discovered: the cgroup index reuses it
// (when a logs receiver uses the index) instead of walking the tree again.
func (h *Host) Discovered(t *cgroupfs.Tree) {
	if h.feed {
		h.index.Update(t)
	}
}
