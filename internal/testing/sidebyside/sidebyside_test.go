// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package sidebyside

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// three workloads whose working sets are 8, 16 and 24 MiB, tolerance 256 KiB.
func rows(ours ...float64) []Row {
	refs := []float64{8 << 20, 16 << 20, 24 << 20}
	var rs []Row
	for i, e := range []string{"a", "b", "c"} {
		rs = append(rs, Row{Quantity: "working set (B)", Entity: e, Ref: refs[i], Ours: ours[i], Tol: 256 << 10, Unit: "B"})
	}
	return rs
}

func TestCheck(t *testing.T) {
	t.Run("right mapping", func(t *testing.T) {
		res := Check(rows(8<<20+1000, 16<<20-2000, 24<<20), Options{Apart: 4, MinRows: 3})
		assert.Empty(t, res.Failures)
		assert.Equal(t, 0, res.Wrong)
		assert.Equal(t, 6, res.Compared)
		require.Len(t, res.Table, 4)
		assert.Equal(t, "working set (B) | a | 8388608 B | 8389608 B | 262144 B | ok | b: 16777216 B, 32.0 tolerances, fails", res.Table[1])
	})
	t.Run("swapped identities fail", func(t *testing.T) {
		res := Check(rows(16<<20, 8<<20, 24<<20), Options{})
		assert.Equal(t, 2, res.Wrong)
		assert.Len(t, res.Failures, 4) // two rows wrong, and each passes another's figure
		assert.Contains(t, strings.Join(res.Failures, "\n"), "working set (B) a: a wrong mapping would pass: ours 16777216 B against b's 16777216 B")
	})
	t.Run("a collector recording 0 fails each row", func(t *testing.T) {
		res := Check(rows(0, 0, 0), Options{})
		assert.Len(t, res.Failures, 3)
	})
	t.Run("a reference below 4x the tolerance fails", func(t *testing.T) {
		rs := rows(1<<20, 16<<20, 24<<20)
		rs[0].Ref = 1 << 20
		res := Check(rs, Options{})
		require.Len(t, res.Failures, 1)
		assert.Contains(t, res.Failures[0], "not above 4× the tolerance")
		rs[0].NoFloor = "a count exact at any value"
		assert.Empty(t, Check(rs, Options{}).Failures)
	})
	t.Run("one entity against wrong mappings' figures", func(t *testing.T) {
		rs := []Row{
			{Quantity: "node working set (B)", Entity: "node", Ref: 18 << 30, Ours: 18<<30 + 1<<20, Tol: 64 << 20, Unit: "B"},
			{Quantity: "node working set (B)", Entity: "meminfo", Ref: 20 << 30, Unit: "B", Wrong: "MemTotal − MemFree − Inactive(file)"},
			{Quantity: "node working set (B)", Entity: "usage", Ref: 18<<30 + 100<<20, Unit: "B", Wrong: "usage for working set"},
		}
		res := Check(rs, Options{Apart: 4, MinRows: 3})
		assert.Equal(t, 2, res.Compared)
		assert.Equal(t, 0, res.Wrong)
		assert.Empty(t, res.Failures, "no Apart rule against a wrong mapping's figure, no row of its own")
		require.Len(t, res.Table, 4)
		assert.Equal(t, "node working set (B) | node | 19327352832 B | 19328401408 B | 67108864 B | ok | usage: 19432210432 B, 1.6 tolerances, fails", res.Table[1])
		assert.Equal(t, "node working set (B) | meminfo | 21474836480 B | - | - | wrong mapping's figure: MemTotal − MemFree − Inactive(file) | -", res.Table[2])
		rs[2].Ref = 18<<30 + 32<<20
		res = Check(rs, Options{})
		assert.Equal(t, 1, res.Wrong)
		require.Len(t, res.Failures, 1)
		assert.Contains(t, res.Failures[0], "a wrong mapping would pass: ours 19328401408 B against usage's")
	})
	t.Run("workloads closer than Apart fail", func(t *testing.T) {
		rs := rows(8<<20, 8<<20+512<<10, 24<<20)
		rs[1].Ref = 8<<20 + 512<<10
		res := Check(rs, Options{Apart: 4})
		assert.Equal(t, 0, res.Wrong)
		assert.Len(t, res.Failures, 2) // a from b and b from a
		assert.Empty(t, Check(rs, Options{}).Failures)
	})
	t.Run("a row's own comparison", func(t *testing.T) {
		rs := rows(0, 16<<20, 24<<20)
		rs[0].Pass = func(v float64) bool { return v > 7<<20 && v < 9<<20 }
		rs[0].Shown = "8 MiB ± 1 MiB"
		res := Check(rs, Options{})
		assert.Empty(t, res.Failures)
		assert.Contains(t, res.Table[1], "| 8 MiB ± 1 MiB |")
	})
	t.Run("quantities are compared apart", func(t *testing.T) {
		rs := append(rows(8<<20, 16<<20, 24<<20), Row{Quantity: "CPU time (s)", Entity: "a", Ref: 8 << 20, Ours: 8 << 20, Tol: 0.02, Unit: "s"})
		res := Check(rs, Options{})
		assert.Empty(t, res.Failures)
		assert.Equal(t, 6, res.Compared)
	})
	t.Run("too few rows", func(t *testing.T) {
		res := Check(rows(8<<20, 16<<20, 24<<20), Options{MinRows: 4})
		require.Len(t, res.Failures, 1)
		assert.Contains(t, res.Failures[0], "3 rows compared, want at least 4")
	})
}

func TestRequireFailsTheTest(t *testing.T) {
	ft := &fakeT{TB: t}
	Require(ft, "swap", rows(16<<20, 8<<20, 24<<20), Options{})
	assert.Len(t, ft.errors, 4)
	assert.Contains(t, ft.logs[0], "wrong mappings that would pass: 2 of 6 tried")
}

type fakeT struct {
	testing.TB
	errors, logs []string
}

func (f *fakeT) Helper() {}
func (f *fakeT) Errorf(format string, args ...any) {
	f.errors = append(f.errors, fmt.Sprintf(format, args...))
}

func (f *fakeT) Logf(format string, args ...any) {
	f.logs = append(f.logs, strings.TrimSpace(fmt.Sprintf(format, args...)))
}
