// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build linux

package cgrouptest

import (
	"fmt"
	"os"
	"testing"

	"github.com/containerstats/containerstatsreceiver/internal/testing/machine"
)

// TestParallelContainersShareLevels: parallel subtests create and remove
// containers under the shared kubepods and QoS levels at once, as
// TestRuntimeOutages' do. One container's cleanup removes the shared levels
// it finds empty, so without a lock around creation another container's
// mkdir of the QoS level can find kubepods just removed (ENOENT: a CI
// run's flake). Each round's subtests start together and end together.
func TestParallelContainersShareLevels(t *testing.T) {
	machine.Lock(t)
	machine.Need(t, Available())
	for round := range 30 {
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			for i := range 6 {
				t.Run(fmt.Sprint(i), func(t *testing.T) {
					t.Parallel()
					c := NewContainer(t, []string{"burstable", "besteffort"}[i%2])
					for _, d := range c.dirs {
						if _, err := os.Stat(d); err != nil {
							t.Fatal(err)
						}
					}
				})
			}
		})
	}
}
