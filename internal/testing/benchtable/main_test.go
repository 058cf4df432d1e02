// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTable(t *testing.T) {
	in := `goos: linux
BenchmarkScrape/layout=v2-systemd/N=100-2   20   27611875 ns/op   276119 ns/container   2640962 B/op   41500 allocs/op
BenchmarkFloor/layout=v2-systemd/N=100-2    20   21480046 ns/op   24.61 files/container   214800 ns/container   561051 B/op   2461 allocs/op
BenchmarkScrape/layout=v1-cgroupfs/N=10-2   20   3000000 ns/op   300000 ns/container   1000 B/op   500 allocs/op
BenchmarkDiscover/layout=v2-systemd/N=1000-2  3  14237161 ns/op  14237 ns/container  3273338 B/op  35229 allocs/op
BenchmarkTaskStates-2  100  5000 ns/op
PASS`
	var out strings.Builder
	require.NoError(t, run(strings.NewReader(in), &out))
	got := out.String()
	assert.Contains(t, got, "| v2-systemd | 100 | 276119 | 214800 | 1.29 | 415 | 26410 | 24.6 |")
	assert.Contains(t, got, "| v1-cgroupfs | 10 | 300000 | - | - | 50 | 100 | - |")
	assert.Less(t, strings.Index(got, "v2-systemd | 100"), strings.Index(got, "v1-cgroupfs"), "v2 first")
	assert.Contains(t, got, "BenchmarkDiscover/layout=v2-systemd/N=1000-2")
	assert.Contains(t, got, "BenchmarkTaskStates-2")

	require.Error(t, run(strings.NewReader("PASS\n"), &out))
}
