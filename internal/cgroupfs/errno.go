// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package cgroupfs // import "github.com/containerstats/containerstatsreceiver/internal/cgroupfs"

import "syscall"

// errNoDevice is what reading a file of a removed cgroup returns.
const errNoDevice = syscall.ENODEV
