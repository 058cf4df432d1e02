// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package v2node

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

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

// fixtureOnly are what the fixtures hold that the guest's kernel (Debian
// 12's 6.1) does not, or not in every run, each real elsewhere: the reason
// says where.
var fixtureOnly = map[string]string{
	"cpu.stat core_sched.force_idle_usec": "kernels built with CONFIG_SCHED_CORE (5.14+: Ubuntu's, Fedora's); Debian 12's 6.1 has none",
	// blk-iocost adds these to a device's io.stat line only where it is
	// enabled on that device; which devices the guest's pod did I/O on
	// varies by run (one CI run had them, the next did not: "the fixture
	// invents ... io.stat cost.usage, io.stat cost.wait").
	"io.stat cost.usage": "io.stat lines of devices with blk-iocost enabled (io.cost.qos), which the guest's pod does not always touch",
	"io.stat cost.wait":  "the same as cost.usage",
}

// fixtureDiff compares one fixture cgroup (its files and, for keyed
// files, their keys) with the real one, and names what the fixture invents
// (not on the real node, and not explained in fixtureOnly) and what it
// lacks (files the receiver read on the real node, keys of files both
// have).
func fixtureDiff(dir string, real Inventory) (invented, lacking []string, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	have := map[string]bool{}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		have[e.Name()] = true
		realKeys, ok := real.Files[e.Name()]
		if !ok {
			if _, explained := fixtureOnly[e.Name()]; !explained {
				invented = append(invented, e.Name())
			}
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, nil, err
		}
		fk := fileKeys(e.Name(), string(b))
		if realKeys == nil || fk == nil {
			continue
		}
		inReal, inFix := set(realKeys), set(fk)
		for _, k := range fk {
			if !inReal[k] {
				if _, explained := fixtureOnly[e.Name()+" "+k]; !explained {
					invented = append(invented, e.Name()+" "+k)
				}
			}
		}
		for _, k := range realKeys {
			if !inFix[k] {
				lacking = append(lacking, e.Name()+" "+k)
			}
		}
	}
	for _, f := range real.Read {
		if _, exists := real.Files[f]; exists && !have[f] {
			lacking = append(lacking, f)
		}
	}
	sort.Strings(invented)
	sort.Strings(lacking)
	return invented, lacking, nil
}

func set(s []string) map[string]bool {
	m := make(map[string]bool, len(s))
	for _, x := range s {
		m[x] = true
	}
	return m
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
	for _, real := range inv {
		dir := filepath.Join(base, fixtureDirs[real.Kind])
		invented, lacking, err := fixtureDiff(dir, real)
		require.NoError(t, err)
		if len(invented) > 0 {
			t.Errorf("%s (%s): the fixture invents what the real v2 node does not have: %s", real.Kind, fixtureDirs[real.Kind], strings.Join(invented, ", "))
		}
		if len(lacking) > 0 {
			t.Errorf("%s (%s): the fixture lacks what the real v2 node has: %s", real.Kind, fixtureDirs[real.Kind], strings.Join(lacking, ", "))
		}
		t.Logf("%s: real node %d files, the receiver read %d: %s", real.Kind, len(real.Files), len(real.Read), strings.Join(real.Read, " "))
	}
}
