//go:build !cgo

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package gpu

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestWithoutCgo: a build without cgo has no NVML. Open reports
// ErrUnavailable (which the scrape logs once, at info, and then leaves GPU
// metrics off, as for a node without the NVIDIA library:
// TestScrapeGPUAbsentRealNVML), naming cgo; the rest is inert.
func TestWithoutCgo(t *testing.T) {
	if DefaultLibrary() != nil {
		t.Error("DefaultLibrary() is not nil without cgo")
	}
	c := New(Options{Library: DefaultLibrary()})
	n, err := c.Open()
	if n != 0 || !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Open() = %d, %v; want 0 and ErrUnavailable", n, err)
	}
	if !strings.Contains(err.Error(), "built without cgo (CGO_ENABLED=0)") {
		t.Errorf("Open() error %q does not name cgo", err)
	}
	if s, errs := c.Collect(context.Background()); s != nil || len(errs) != 1 {
		t.Errorf("Collect() = %v, %v; want no snapshot and one error", s, errs)
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close() = %v", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close() = %v", err)
	}
}
