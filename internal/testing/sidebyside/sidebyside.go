// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

// Package sidebyside holds the rule every side-by-side comparison of the
// real-machine tests keeps (ours against the kubelet, cAdvisor, CRI stats or
// the kernel's files): a row proves the mapping only when another entity's
// reference figure would fail it. For each compared quantity it takes one
// Row per entity (the reference's figure, the tolerance and the row's own
// comparison) and checks
//
//   - that our figure passes against its own entity's reference (the row);
//   - that it fails against every other entity's reference figure of the
//     same quantity: a wrong mapping that would pass is a failure;
//   - that the reference figure exceeds Floor times the tolerance (4 by
//     default), so a collector that records 0 fails the row;
//   - optionally (Options.Apart) that every other entity's figure is more
//     than Apart times the tolerance away, so the workloads are distinct.
//
// Check returns the verdicts and a table with, per row, the nearest wrong
// mapping and its margin in tolerances; Require logs the table and fails the
// test on each violation.
package sidebyside

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// Row is one entity's figure of one quantity.
type Row struct {
	// Quantity groups the rows compared with each other ("container
	// working set (B)"); rows of other quantities are never compared.
	Quantity string
	// Entity names what the row is about ("work/client/wget").
	Entity string
	// Ref is the reference's figure for Entity.
	Ref float64
	// Tol is the row's tolerance, in Ref's unit.
	Tol float64
	// Pass reports whether our figure for Entity passes the row's
	// comparison against the reference figure v. Nil: |Ours − v| ≤ Tol.
	Pass func(v float64) bool
	// Ours is our figure, used when Pass is nil and shown in the table.
	Ours float64
	// Shown is our figure as the table shows it when Pass is given (our
	// two samples around the reference's moment, say); empty: Ours.
	Shown string
	// Unit formats the figures: "B" (whole bytes), "s" (ms), "" (as is).
	Unit string
	// NoFloor exempts the row from the Floor rule, with the reason the
	// table prints (a count that is exactly right at 0 and checked against
	// a workload that makes it non-zero elsewhere, say). Empty: the rule
	// applies.
	NoFloor string
	// Wrong marks a row that is no entity but a wrong mapping's figure
	// where a quantity has one entity only (the node: its working set were
	// it read from /proc/meminfo, or usage taken for it), with what it is.
	// Its Ref is tried against the quantity's other rows like another
	// entity's figure (a wrong mapping that would pass); it has no
	// comparison of its own, no floor and no Apart rule, and its table
	// line says what it is.
	Wrong string
}

func (r Row) pass(v float64) bool {
	if r.Pass != nil {
		return r.Pass(v)
	}
	return math.Abs(r.Ours-v) <= r.Tol
}

// Options tunes Check.
type Options struct {
	// Floor: the reference figure must exceed Floor × Tol. 0 means 4.
	Floor float64
	// Apart: when > 0, every other entity's reference figure must be more
	// than Apart × Tol from this row's (the workloads are distinct).
	Apart float64
	// MinRows: fewer rows than this is a failure (a view that lost its
	// rows compares nothing). 0: no minimum.
	MinRows int
}

// Result is what Check found.
type Result struct {
	// Table: one line per row (quantity, entity, ref, ours, tol, verdict,
	// nearest other entity's figure and its distance in tolerances).
	Table []string
	// Failures: each broken rule, one line each; empty when all hold.
	Failures []string
	// Wrong counts the wrong mappings that would pass; Compared counts
	// the (row, other entity) pairs tried.
	Wrong, Compared int
}

// Check applies the rules to rows.
func Check(rows []Row, o Options) Result {
	floor := o.Floor
	if floor == 0 {
		floor = 4
	}
	var res Result
	if len(rows) < o.MinRows {
		res.Failures = append(res.Failures, fmt.Sprintf("%d rows compared, want at least %d", len(rows), o.MinRows))
	}
	byQ := map[string][]int{}
	var qs []string
	for i, r := range rows {
		if _, ok := byQ[r.Quantity]; !ok {
			qs = append(qs, r.Quantity)
		}
		byQ[r.Quantity] = append(byQ[r.Quantity], i)
	}
	res.Table = append(res.Table, "quantity | entity | reference | ours | tolerance | verdict | nearest other entity: its figure, distance in tolerances, our row against it")
	for _, q := range qs {
		for _, i := range byQ[q] {
			r := rows[i]
			if r.Wrong != "" {
				res.Table = append(res.Table, strings.Join([]string{q, r.Entity, format(r.Ref, r.Unit), "-", "-", "wrong mapping's figure: " + r.Wrong, "-"}, " | "))
				continue
			}
			verdict := "ok"
			if !r.pass(r.Ref) {
				verdict = "FAIL"
				res.Failures = append(res.Failures, fmt.Sprintf("%s %s: ours %s against %s (tolerance %s)", q, r.Entity, r.ours(), format(r.Ref, r.Unit), format(r.Tol, r.Unit)))
			}
			switch {
			case r.NoFloor != "":
				verdict += " (no floor: " + r.NoFloor + ")"
			case !(math.Abs(r.Ref) > floor*r.Tol):
				verdict += fmt.Sprintf(" (BELOW %gx tolerance)", floor)
				res.Failures = append(res.Failures, fmt.Sprintf("%s %s: reference %s is not above %g× the tolerance %s: a collector recording 0 would pass", q, r.Entity, format(r.Ref, r.Unit), floor, format(r.Tol, r.Unit)))
			}
			nearest := "no other entity"
			best := math.Inf(1)
			for _, j := range byQ[q] {
				if j == i {
					continue
				}
				other := rows[j]
				res.Compared++
				d := math.Abs(other.Ref - r.Ref)
				passes := r.pass(other.Ref)
				if passes {
					res.Wrong++
					res.Failures = append(res.Failures, fmt.Sprintf("%s %s: a wrong mapping would pass: ours %s against %s's %s (tolerance %s)", q, r.Entity, r.ours(), other.Entity, format(other.Ref, r.Unit), format(r.Tol, r.Unit)))
				}
				if o.Apart > 0 && other.Wrong == "" && !(d > o.Apart*r.Tol) {
					res.Failures = append(res.Failures, fmt.Sprintf("%s %s: %s's figure %s is %s away, not more than %g× the tolerance %s: the workloads are not distinct", q, r.Entity, other.Entity, format(other.Ref, r.Unit), format(d, r.Unit), o.Apart, format(r.Tol, r.Unit)))
				}
				if d < best {
					best = d
					v := "fails"
					if passes {
						v = "PASSES"
					}
					nearest = fmt.Sprintf("%s: %s, %s tolerances, %s", other.Entity, format(other.Ref, r.Unit), margin(d, r.Tol), v)
				}
			}
			res.Table = append(res.Table, strings.Join([]string{q, r.Entity, format(r.Ref, r.Unit), r.ours(), format(r.Tol, r.Unit), verdict, nearest}, " | "))
		}
	}
	sort.Strings(res.Failures)
	return res
}

// Require logs Check's table under the title and the count of wrong
// mappings that would pass, and fails t on each broken rule.
func Require(tb testing.TB, title string, rows []Row, o Options) Result {
	tb.Helper()
	res := Check(rows, o)
	tb.Logf("%s: %d rows, wrong mappings that would pass: %d of %d tried\n%s", title, len(rows), res.Wrong, res.Compared, strings.Join(res.Table, "\n"))
	for _, f := range res.Failures {
		tb.Errorf("%s: %s", title, f)
	}
	return res
}

func (r Row) ours() string {
	if r.Shown != "" {
		return r.Shown
	}
	return format(r.Ours, r.Unit)
}

func margin(d, tol float64) string {
	if tol == 0 {
		if d == 0 {
			return "0"
		}
		return "∞"
	}
	return strconv.FormatFloat(d/tol, 'f', 1, 64)
}

func format(v float64, unit string) string {
	switch unit {
	case "B":
		return fmt.Sprintf("%.0f B", v)
	case "s":
		return fmt.Sprintf("%.3f s", v)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}
