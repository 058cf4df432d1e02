// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package calc

import "testing"

func TestAvailable(t *testing.T) {
	for _, c := range []struct{ limit, ws, want uint64 }{
		{1000, 750, 250},
		{1000, 1000, 0},
		{1000, 1200, 0}, // working set above the limit floors at 0, never wraps
	} {
		if got := Available(c.limit, c.ws); got != c.want {
			t.Errorf("Available(%d, %d) = %d, want %d", c.limit, c.ws, got, c.want)
		}
	}
}

func TestClampInt64(t *testing.T) {
	for _, c := range []struct {
		in   uint64
		want int64
	}{{0, 0}, {42, 42}, {1<<63 - 1, 1<<63 - 1}, {1 << 63, 1<<63 - 1}, {^uint64(0), 1<<63 - 1}} {
		if got := ClampInt64(c.in); got != c.want {
			t.Errorf("ClampInt64(%d) = %d, want %d", c.in, got, c.want)
		}
	}
}
