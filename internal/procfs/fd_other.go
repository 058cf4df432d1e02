// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build !linux

package procfs // import "github.com/containerstats/containerstatsreceiver/internal/procfs"

import (
	"errors"
	"runtime"
)

// errNotLinux: /proc of a Linux node is read on Linux only; other systems
// build (for development) but have no procfs to count from.
func errNotLinux() error { return errors.New("procfs: not supported on " + runtime.GOOS) }

func fdCountBySize(string) bool { return false }

func statSize(string) (int64, error) { return 0, errNotLinux() }

func inode(string) (uint64, error) { return 0, errNotLinux() }
