// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build linux && vmnode

package v2node

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// What the host's driver (host_test.go) checks after the guest's run.

// fixtureDirs are the cgroups of testdata/fixtures/v2-systemd that stand
// for each kind of cgroup of the real node's inventory.
var fixtureDirs = map[string]string{
	"root":         ".",
	"kubepods":     "kubepods.slice",
	"qos":          "kubepods.slice/kubepods-burstable.slice",
	"pod":          "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1a2b3c4d_0000_4000_8000_00000000000a.slice",
	"container":    "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1a2b3c4d_0000_4000_8000_00000000000a.slice/cri-containerd-a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1.scope",
	"system.slice": "system.slice",
	"init.scope":   "init.scope",
}

// checkFixtures: every kind of cgroup in the real node's inventory against
// its fixture.
func checkFixtures(t *testing.T, inventory string) {
	b, err := os.ReadFile(inventory)
	require.NoError(t, err, "the guest wrote no inventory")
	var inv []Inventory
	require.NoError(t, json.Unmarshal(b, &inv))
	require.Len(t, inv, len(fixtureDirs))
	base := filepath.Join("..", "..", "testdata", "fixtures", "v2-systemd", "sys", "fs", "cgroup")
	for _, observed := range inv {
		dir := filepath.Join(base, fixtureDirs[observed.Kind])
		invented, lacking, err := fixtureDiff(dir, observed)
		require.NoError(t, err)
		if len(invented) > 0 {
			t.Errorf("%s (%s): the fixture invents what the real v2 node does not have: %s", observed.Kind, fixtureDirs[observed.Kind], strings.Join(invented, ", "))
		}
		if len(lacking) > 0 {
			t.Errorf("%s (%s): the fixture lacks what the real v2 node has: %s", observed.Kind, fixtureDirs[observed.Kind], strings.Join(lacking, ", "))
		}
		t.Logf("%s: real node %d files, the receiver read %d: %s", observed.Kind, len(observed.Files), len(observed.Read), strings.Join(observed.Read, " "))
	}
}

// replay reports the guest test n as a subtest of t.
func (n *testNode) replay(t *testing.T) {
	t.Run(n.name, func(t *testing.T) {
		if out := strings.TrimRight(n.output.String(), "\n"); out != "" {
			t.Logf("in the guest (%.1f s):\n%s", n.elapsed, out)
		}
		for _, c := range n.children {
			c.replay(t)
		}
		switch n.action {
		case "fail":
			t.Error("failed in the guest")
		case "skip":
			t.Skip("skipped in the guest")
		case "pass":
		default:
			t.Error("never ended in the guest (the test binary died or timed out)")
		}
	})
}
