// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package hosttree

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/containerstats/containerstatsreceiver/internal/cgroupfs"
)

// The generated trees are discovered exactly as generated, for all four
// layouts, and survive container removal.
func TestGenerateDiscover(t *testing.T) {
	for _, spec := range []Spec{
		{V2: true, Systemd: true, Containers: 9, ThreadsPerContainer: 3, PSI: true},
		{V2: true, Containers: 9, ThreadsPerContainer: 1},
		{Systemd: true, Containers: 9, ThreadsPerContainer: 2, PSI: true},
		{Containers: 9},
	} {
		t.Run(spec.Name(), func(t *testing.T) {
			tree, err := Generate(t.TempDir(), spec)
			require.NoError(t, err)
			l, err := cgroupfs.Detect(tree.Root)
			require.NoError(t, err)
			assert.Equal(t, spec.V2, l.Mode == cgroupfs.ModeV2)
			got, err := l.Discover(false)
			require.NoError(t, err)
			require.Len(t, got.Containers, 9)
			assert.Len(t, got.Pods, 5)
			byID := map[string]cgroupfs.Cgroup{}
			for _, c := range got.Containers {
				byID[c.ContainerID] = c
			}
			for _, c := range tree.Containers {
				d, ok := byID[c.ID]
				require.True(t, ok, c.Rel)
				assert.Equal(t, c.PodUID, d.PodUID)
				assert.Equal(t, c.QoS, d.QoS)
				cpu, cpuErr := cgroupfs.NewReader(l).CPU(c.Rel)
				require.NoError(t, cpuErr)
				assert.True(t, cpu.Usage.OK)
			}
			require.NoError(t, tree.RemoveContainer(0))
			got, err = l.Discover(false)
			require.NoError(t, err)
			assert.Len(t, got.Containers, 8)
		})
	}
}
