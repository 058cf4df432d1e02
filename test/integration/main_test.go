//go:build realmachine

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

// Package integration holds the receiver's real-machine tests that drive
// the component as a whole or wire its signals from their packages: a real
// containerd (CRI and its own API), Docker and Podman engines, the
// filesystem collection and the logs signal on real pods, runtime outages
// and the soak (TestSoakChurn, make soak). Build tag realmachine;
// CONTRIBUTING.md, "Real-machine tests".
package integration

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks for leaked goroutines, as the component root's
// generated TestMain does for its own tests.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
