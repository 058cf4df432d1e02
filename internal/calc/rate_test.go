// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package calc

import (
	"testing"
	"time"
)

func TestCPUCores(t *testing.T) {
	t0 := time.Unix(1000, 0)
	cases := []struct {
		name   string
		prev   Sample
		cur    Sample
		want   float64
		wantOK bool
	}{
		{"one core over 2s", Sample{1e9, t0}, Sample{3e9, t0.Add(2 * time.Second)}, 1, true},
		{"quarter core over irregular 4s", Sample{0, t0}, Sample{1e9, t0.Add(4 * time.Second)}, 0.25, true},
		{"idle", Sample{5, t0}, Sample{5, t0.Add(time.Second)}, 0, true},
		{"counter reset", Sample{9e9, t0}, Sample{1e9, t0.Add(time.Second)}, 0, false},
		{"no elapsed time", Sample{1, t0}, Sample{2, t0}, 0, false},
		{"clock went back", Sample{1, t0}, Sample{2, t0.Add(-time.Second)}, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := CPUCores(c.prev, c.cur)
			if ok != c.wantOK || got != c.want {
				t.Fatalf("CPUCores = %v, %v; want %v, %v", got, ok, c.want, c.wantOK)
			}
		})
	}
}

func TestWorkingSet(t *testing.T) {
	cases := []struct{ usage, inactive, want uint64 }{
		{100, 30, 70},
		{100, 100, 0},
		{100, 250, 0}, // inactive_file > usage: floored, never wraps
		{0, 0, 0},
	}
	for _, c := range cases {
		if got := WorkingSet(c.usage, c.inactive); got != c.want {
			t.Errorf("WorkingSet(%d, %d) = %d, want %d", c.usage, c.inactive, got, c.want)
		}
	}
}
