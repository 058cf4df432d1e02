// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package v2node

import (
	"os"
	"path/filepath"
	"sort"
)

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
func fixtureDiff(dir string, observed Inventory) (invented, lacking []string, err error) {
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
		realKeys, ok := observed.Files[e.Name()]
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
	for _, f := range observed.Read {
		if _, exists := observed.Files[f]; exists && !have[f] {
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
