// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package v2node

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFileKeys(t *testing.T) {
	for _, c := range []struct {
		name, content string
		want          []string
	}{
		{"memory.stat", "anon 5517312\nfile 5521408\nkernel 5525504\n", []string{"anon", "file", "kernel"}},
		{"cpu.stat", "usage_usec 1\nuser_usec 2\nsystem_usec 3\n", []string{"system_usec", "usage_usec", "user_usec"}},
		{"io.stat", "254:0 rbytes=1 wbytes=2 rios=3\n254:16 rbytes=4 wbytes=5 rios=6 dbytes=7\n", []string{"dbytes", "rbytes", "rios", "wbytes"}},
		{"cpu.pressure", "some avg10=0.00 avg60=0.00 avg300=0.00 total=1\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", []string{"full", "some"}},
		{"memory.current", "12345\n", nil},
		{"cpu.max", "max 100000\n", nil},
		{"cgroup.procs", "1\n2\n", nil},
		{"cgroup.controllers", "cpuset cpu io memory\n", nil},
		{"memory.max", "max\n", nil},
		{"io.stat", "", nil},
	} {
		assert.Equal(t, c.want, fileKeys(c.name, c.content), "%s %q", c.name, c.content)
	}
}

func FuzzFileKeys(f *testing.F) {
	f.Add("memory.stat", "anon 1\nfile 2\n")
	f.Add("io.stat", "254:0 rbytes=1 wbytes=2\n")
	f.Add("io.pressure", "some avg10=0.00 total=1\n")
	f.Add("cpu.max", "max 100000")
	f.Fuzz(func(t *testing.T, name, content string) {
		keys := fileKeys(name, content)
		for i, k := range keys {
			if k == "" || strings.ContainsAny(k, " \t\n") {
				t.Fatalf("key %q", k)
			}
			if i > 0 && keys[i-1] >= k {
				t.Fatalf("keys not sorted and unique: %q", keys)
			}
		}
	})
}

// fixtureDiff names invented files and keys (not on the real node, not
// explained) and lacking ones (read by the receiver on the real node, or
// keys of a file both have).
func TestFixtureDiff(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"memory.stat":    "anon 1\nfile 2\nsec_pagetables 3\n",
		"cpu.stat":       "usage_usec 1\ncore_sched.force_idle_usec 2\n",
		"memory.current": "4\n",
		"made.up":        "5\n",
	} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600))
	}
	observed := Inventory{
		Kind: "container",
		Files: map[string][]string{
			"memory.stat": {"anon", "file", "inactive_file"}, "cpu.stat": {"usage_usec"},
			"memory.current": nil, "memory.events": {"oom_kill"}, "cgroup.kill": nil,
		},
		Read: []string{"memory.stat", "memory.current", "memory.events"},
	}
	invented, lacking, err := fixtureDiff(dir, observed)
	require.NoError(t, err)
	assert.Equal(t, []string{"made.up", "memory.stat sec_pagetables"}, invented, "core_sched.force_idle_usec is explained in fixtureOnly")
	assert.Equal(t, []string{"memory.events", "memory.stat inactive_file"}, lacking, "cgroup.kill is not read: not lacking")
}
