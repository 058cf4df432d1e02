// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package cgroupfs // import "github.com/containerstats/containerstatsreceiver/internal/cgroupfs"

import "sync"

// Host is the cgroup layout of one host root, found once for every reader
// of that root in one receiver configuration (the metrics scraper and the
// logs signal's cgroup index): the platform check and the layout
// detection each run once, whichever reader asks first. A Layout serves
// one goroutine (Discover reuses its buffers), so each caller of Layout
// gets one of its own, copied from the one detection. A failed detection
// is not kept: the next call detects again.
type Host struct {
	root string

	mu          sync.Mutex
	checked     bool
	platformErr error
	detected    *Layout
	detections  int
}

// NewHost returns the host under root; nothing is read until Layout.
func NewHost(root string) *Host { return &Host{root: root} }

// Root is the host root prefix.
func (h *Host) Root() string { return h.root }

// CheckPlatform is CheckPlatform(root), run once.
func (h *Host) CheckPlatform() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.checked {
		h.checked, h.platformErr = true, CheckPlatform(h.root)
	}
	return h.platformErr
}

// Layout returns a Layout of the caller's own, from the host's one
// successful Detect.
func (h *Host) Layout() (*Layout, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.detected == nil {
		l, err := Detect(h.root)
		h.detections++
		if err != nil {
			return nil, err
		}
		h.detected = l
	}
	d := h.detected
	// The V1 map is never written after Detect: the copies share it.
	return &Layout{Root: d.Root, Base: d.Base, Mode: d.Mode, Unified: d.Unified, V1: d.V1}, nil
}

// Detections is how many times Layout ran Detect: 1 once a detection
// succeeded, however many readers share the host.
func (h *Host) Detections() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.detections
}
