// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape

import (
	"os"
	"testing"

	"github.com/containerstats/containerstatsreceiver/internal/testing/cgrouptest"
)

func TestMain(m *testing.M) {
	cgrouptest.MaybeRunChild()
	code := m.Run()
	removeBenchTrees()
	os.Exit(code)
}
