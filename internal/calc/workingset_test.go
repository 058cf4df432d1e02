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
