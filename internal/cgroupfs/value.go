// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package cgroupfs // import "github.com/containerstats/containerstatsreceiver/internal/cgroupfs"

import "github.com/containerstats/containerstatsreceiver/internal/opt"

// U64 is a counter or gauge read from a cgroup file, with its presence:
// OK is false when the file or key does not exist on this kernel/cgroup.
type U64 = opt.Value[uint64]

// Some returns a present value.
func Some(v uint64) U64 { return opt.Some(v) }

// Limit is a cgroup limit: absent (no file), unlimited ("max" or v1's
// page-rounded huge value) or a finite number of units.
type Limit struct {
	V         uint64
	OK        bool // the file exists and parsed
	Unlimited bool
}

// Finite reports whether a finite limit is set.
func (l Limit) Finite() bool { return l.OK && !l.Unlimited }
