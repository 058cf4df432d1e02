// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build linux

package cgrouptest // import "github.com/containerstats/containerstatsreceiver/internal/testing/cgrouptest"

import (
	"os"

	"github.com/containerstats/containerstatsreceiver/internal/testing/workload"
)

const childEnv = "CGROUPTEST_CHILD"

// Child modes for Container.Start: what internal/testing/workload does.
const (
	ModeBurn        = workload.Burn
	ModeSleep       = workload.Sleep
	ModeSpin        = workload.Spin
	ModeCache       = workload.Cache
	ModeDirectWrite = workload.DirectWrite
	ModeHugetlb     = workload.Hugetlb
	// ModeFDs waits for Child.Poke before opening its descriptors.
	ModeFDs = workload.FDs
)

// MaybeRunChild runs a child's work and exits when this process was started
// by Container.Start; otherwise it returns at once. Call it first in
// TestMain.
func MaybeRunChild() {
	mode := os.Getenv(childEnv)
	if mode == "" {
		return
	}
	// Wait until the parent has moved us into the cgroup.
	var b [1]byte
	if _, err := os.Stdin.Read(b[:]); err != nil {
		os.Exit(3)
	}
	poke := func() error { _, err := os.Stdin.Read(b[:]); return err }
	os.Exit(workload.Run(mode, os.Args[1:], poke))
}
