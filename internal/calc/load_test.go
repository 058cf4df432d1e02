// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package calc

import (
	"math"
	"testing"
	"time"
)

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Fatalf("%s = %.9f, want %.9f (±%g)", what, got, want, tol)
	}
}

func TestLoadAverageFirstSampleInitialises(t *testing.T) {
	var l LoadAverage
	if _, ok := l.Value(); ok {
		t.Fatal("zero value has a sample")
	}
	near(t, "first", l.Update(3, time.Unix(100, 0)), 3, 0)
	v, ok := l.Value()
	if !ok || v != 3 {
		t.Fatalf("Value = %v, %v", v, ok)
	}
}

// One step of 10 s keeps exp(-1) of the old value.
func TestLoadAverageOneStep(t *testing.T) {
	var l LoadAverage
	t0 := time.Unix(100, 0)
	l.Update(0, t0)
	near(t, "after 10s at 4", l.Update(4, t0.Add(10*time.Second)), 4*(1-math.Exp(-1)), 1e-12)
}

// From 0, a constant count of K converges to K: within 5% after 30 s
// (1-e^-3 = 95.0%) and within 0.01% after 100 s, whatever the step.
func TestLoadAverageConvergence(t *testing.T) {
	for _, step := range []time.Duration{time.Second, 5 * time.Second, 10 * time.Second} {
		var l LoadAverage
		t0 := time.Unix(0, 0)
		l.Update(0, t0)
		const k = 7.0
		var v float64
		for at := step; at <= 30*time.Second; at += step {
			v = l.Update(k, t0.Add(at))
		}
		near(t, "after 30s", v, k*(1-math.Exp(-3)), 1e-9)
		for at := 30*time.Second + step; at <= 100*time.Second; at += step {
			v = l.Update(k, t0.Add(at))
		}
		near(t, "after 100s", v, k, k*1e-4)
	}
}

// Irregular intervals: the decay follows the real elapsed time, so one 20 s
// step equals two 10 s steps and 3 s + 7 s equals one 10 s step for a
// constant count. A frozen interval (cAdvisor's) would not.
func TestLoadAverageIrregularIntervals(t *testing.T) {
	t0 := time.Unix(0, 0)
	var a, b, c LoadAverage
	a.Update(1, t0)
	b.Update(1, t0)
	c.Update(1, t0)
	a.Update(5, t0.Add(10*time.Second))
	va := a.Update(5, t0.Add(20*time.Second))
	vb := b.Update(5, t0.Add(20*time.Second))
	near(t, "20s vs 2x10s", vb, va, 1e-12)
	near(t, "20s", vb, 5+(1-5)*math.Exp(-2), 1e-12)

	c.Update(5, t0.Add(3*time.Second))
	vc := c.Update(5, t0.Add(10*time.Second))
	near(t, "3s+7s vs 10s", vc, 5+(1-5)*math.Exp(-1), 1e-12)

	// A long gap forgets the past almost entirely; a short one barely moves.
	var d LoadAverage
	d.Update(10, t0)
	near(t, "after 2 min gap", d.Update(0, t0.Add(2*time.Minute)), 10*math.Exp(-12), 1e-9)
	var e LoadAverage
	e.Update(10, t0)
	near(t, "after 100ms", e.Update(0, t0.Add(100*time.Millisecond)), 10*math.Exp(-0.01), 1e-9)
}

func TestLoadAverageClockBack(t *testing.T) {
	t0 := time.Unix(100, 0)
	var l LoadAverage
	l.Update(2, t0)
	near(t, "same time", l.Update(9, t0), 2, 0)
	near(t, "clock back", l.Update(9, t0.Add(-time.Second)), 2, 0)
	// The next real step measures from t0, not from the bogus sample.
	near(t, "after", l.Update(9, t0.Add(10*time.Second)), 9+(2-9)*math.Exp(-1), 1e-12)
}
