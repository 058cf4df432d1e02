// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build realmachine

// Package e2e runs the built collector (bin/otelcol-containerstats) against
// real workloads on this machine and checks what arrives at its backends:
// a real Prometheus (remote write, queried back over its HTTP API) and a
// second collector instance that writes what it receives over OTLP/gRPC to
// a file. Run it with `make e2e` (root, Debian's prometheus package); see
// docs/e2e.md.
package e2e

import (
	"os"
	"testing"

	"github.com/containerstats/containerstatsreceiver/internal/testing/cgrouptest"
)

func TestMain(m *testing.M) {
	cgrouptest.MaybeRunChild()
	os.Exit(m.Run())
}
