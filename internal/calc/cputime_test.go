// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package calc

import (
	"math"
	"testing"
)

func TestAdjustCPUSplit(t *testing.T) {
	for _, tc := range []struct {
		name                string
		prev                CPUSplit
		total, user, system uint64
		want                CPUSplit
	}{
		{"first, ticks above the total", CPUSplit{}, 1000, 900, 300, CPUSplit{User: 750, System: 250}},
		{"first, ticks below the total", CPUSplit{}, 1000, 300, 100, CPUSplit{User: 750, System: 250}},
		{"already a split of the total (v2)", CPUSplit{}, 1000, 600, 400, CPUSplit{User: 600, System: 400}},
		{"no system time", CPUSplit{}, 1000, 20, 0, CPUSplit{User: 1000}},
		{"no user time", CPUSplit{}, 1000, 0, 20, CPUSplit{System: 1000}},
		{"no ticks yet", CPUSplit{}, 1000, 0, 0, CPUSplit{User: 1000}},
		{"total not above prev: prev", CPUSplit{User: 700, System: 300}, 1000, 1, 1000, CPUSplit{User: 700, System: 300}},
		{"total below prev (a reset): prev", CPUSplit{User: 700, System: 300}, 900, 5, 7, CPUSplit{User: 700, System: 300}},
		{"system would fall: held, user takes the rest", CPUSplit{User: 500, System: 500}, 1200, 900, 100, CPUSplit{User: 700, System: 500}},
		{"user would fall: held, system takes the rest", CPUSplit{User: 900, System: 100}, 1200, 100, 900, CPUSplit{User: 900, System: 300}},
		{"huge values", CPUSplit{}, math.MaxUint64, math.MaxUint64, math.MaxUint64, CPUSplit{User: math.MaxUint64/2 + 1, System: math.MaxUint64 / 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := AdjustCPUSplit(tc.prev, tc.total, tc.user, tc.system)
			if got != tc.want {
				t.Fatalf("AdjustCPUSplit(%+v, %d, %d, %d) = %+v, want %+v", tc.prev, tc.total, tc.user, tc.system, got, tc.want)
			}
		})
	}
}

// FuzzAdjustCPUSplit: whatever the inputs, each mode is monotonic and the
// split sums to the total whenever the total grew past the previous sum.
func FuzzAdjustCPUSplit(f *testing.F) {
	f.Add(uint64(100), uint64(50), uint64(1000), uint64(900), uint64(300))
	f.Add(uint64(0), uint64(0), uint64(math.MaxUint64), uint64(1), uint64(math.MaxUint64))
	f.Fuzz(func(t *testing.T, pu, ps, total, user, system uint64) {
		if pu+ps < pu { // a previous split is a split of some total
			return
		}
		prev := CPUSplit{User: pu, System: ps}
		got := AdjustCPUSplit(prev, total, user, system)
		if got.User < prev.User || got.System < prev.System {
			t.Fatalf("%+v -> %+v: a mode went back", prev, got)
		}
		if total > pu+ps && got.User+got.System != total {
			t.Fatalf("%+v, total %d -> %+v: sum %d", prev, total, got, got.User+got.System)
		}
	})
}
