// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build linux && v2guest

package v2node

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/containerstats/containerstatsreceiver/internal/testing/containerdtest"
)

// testInventory writes inventory.json for the host's fixture check
// (fixtures_test.go): for each kind of cgroup on this real v2 node (the
// root, kubepods.slice, a QoS slice, a pod slice, a container scope,
// system.slice, init.scope) the files it has, the keys of each keyed
// file, and the files one scrape with every metric on opened there.
func testInventory(t *testing.T, n *node) {
	c := n.run(t, "inventory", "burstable", containerdtest.ContainerSpec{Command: []string{"/bin/sleep", "3600"}}, false)
	var mu sync.Mutex
	read := map[string][]string{} // cgroup dir -> files opened
	s := newScraper(t, n.ids, allMetrics(), func(p string) {
		if !strings.HasPrefix(p, cgRoot+"/") {
			return
		}
		mu.Lock()
		read[filepath.Dir(p)] = append(read[filepath.Dir(p)], filepath.Base(p))
		mu.Unlock()
	})
	scrapeOwn(t, s, c.own()...)

	kinds := []struct{ kind, dir string }{
		{"root", cgRoot},
		{"kubepods", filepath.Join(cgRoot, "kubepods.slice")},
		{"qos", filepath.Join(cgRoot, "kubepods.slice", "kubepods-burstable.slice")},
		{"pod", c.PodDir()},
		{"container", c.Dir},
		{"system.slice", filepath.Join(cgRoot, "system.slice")},
		{"init.scope", filepath.Join(cgRoot, "init.scope")},
	}
	var inv []Inventory
	for _, k := range kinds {
		entries, err := os.ReadDir(k.dir)
		require.NoError(t, err)
		e := Inventory{Kind: k.kind, Path: strings.TrimPrefix(k.dir, cgRoot), Files: map[string][]string{}}
		for _, f := range entries {
			if f.IsDir() {
				continue
			}
			b, err := os.ReadFile(filepath.Join(k.dir, f.Name()))
			if err != nil {
				e.Files[f.Name()] = nil // write-only (cgroup.kill, ...) or not readable
				continue
			}
			e.Files[f.Name()] = fileKeys(f.Name(), string(b))
		}
		r := map[string]bool{}
		for _, f := range read[k.dir] {
			if _, isFile := e.Files[f]; isFile {
				r[f] = true // not the directories the scrape walked
			}
		}
		for f := range r {
			e.Read = append(e.Read, f)
		}
		sort.Strings(e.Read)
		inv = append(inv, e)
	}
	b, err := json.MarshalIndent(inv, "", "  ")
	require.NoError(t, err)
	writeResult(t, "inventory.json", b)
	t.Logf("inventory of %d kinds of cgroup written", len(inv))
}
