//go:build cgo

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParseSMI: the nvidia-smi values seen on a real H100 (docs/gpu.md).
func TestParseSMI(t *testing.T) {
	for _, tc := range []struct {
		field, v string
		want     float64
	}{
		{"pstate", "P0", 0},
		{"pstate", "P8", 8},
		{"clocks_event_reasons.active", "0x0000000000000004", 4},
		{"power.limit", "700.00", 700},
		{"memory.used", "1011", 1011},
	} {
		got, err := parseSMI(tc.field, tc.v)
		require.NoError(t, err, tc.v)
		assert.Equal(t, tc.want, got, tc.v)
	}
	for _, bad := range []string{"[N/A]", "[Not Supported]", "", "N/A"} {
		_, err := parseSMI("fan.speed", bad)
		assert.Error(t, err, bad)
	}
	assert.Equal(t, "1491", sumSMI("memory.used,memory.reserved", "1011, 480"))
	assert.Equal(t, "[N/A], 480", sumSMI("memory.used,memory.reserved", "[N/A], 480"))
	assert.Equal(t, "35", sumSMI("temperature.gpu", " 35 "))
}
