//go:build !cgo

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package gpu // import "github.com/containerstats/containerstatsreceiver/internal/gpu"

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Library is NVML; go-nvml needs cgo, so a build without cgo has none.
type Library interface{}

// DefaultLibrary returns nil: this binary was built without cgo.
func DefaultLibrary() Library { return nil }

// Options configure a Collector (see the cgo build).
type Options struct {
	Library      Library
	Procs        Procs
	PodResources AllocationLister
	PCIeInterval time.Duration
}

// Collector is inert without cgo.
type Collector struct{}

// New returns an inert collector.
func New(Options) *Collector { return &Collector{} }

// Open always reports ErrUnavailable: go-nvml needs cgo.
func (*Collector) Open() (int, error) {
	return 0, fmt.Errorf("%w: this collector was built without cgo (CGO_ENABLED=0); go-nvml needs cgo", ErrUnavailable)
}

// Close does nothing.
func (*Collector) Close() error { return nil }

// Collect is never reached: Open failed.
func (*Collector) Collect(context.Context) (*Snapshot, []error) {
	return nil, []error{errors.New("nvml not open")}
}
