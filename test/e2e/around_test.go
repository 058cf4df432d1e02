// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build realmachine

package e2e

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestAround: the side-by-side comparison of our samples (10 s apart)
// with the kubelet's figure read at a moment given to the millisecond or
// to the second.
func TestAround(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	// A counter growing 1/s and a gauge that rises then falls back.
	ps := []ourPoint{{at(0), 0}, {at(10), 10}, {at(20), 20}, {at(30), 30}}
	gauge := []ourPoint{{at(0), 100}, {at(10), 140}, {at(20), 100}, {at(30), 100}}

	// A moment to the millisecond: the two samples around it.
	a := aroundOf(ps, at(14), at(14))
	require.Equal(t, []ourPoint{{at(10), 10}, {at(20), 20}}, a.ps)
	lo, hi, _ := a.interpolated()
	require.InDelta(t, 14, lo, 1e-9)
	require.InDelta(t, 14, hi, 1e-9)
	text, ok := a.counter(14.04, 0.05, "s")
	require.True(t, ok, text)
	_, ok = a.counter(14.06, 0.05, "s")
	require.False(t, ok)

	// A moment named in whole seconds whose second holds one of our
	// samples: the window reaches the next sample, the counter a range.
	a = aroundOf(ps, at(19.5), at(20.5))
	require.Equal(t, []ourPoint{{at(10), 10}, {at(20), 20}, {at(30), 30}}, a.ps)
	lo, hi, _ = a.interpolated()
	require.InDelta(t, 19.5, lo, 1e-9)
	require.InDelta(t, 20.5, hi, 1e-9)
	_, ok = a.counter(20.45, 0, "s")
	require.True(t, ok)
	_, ok = a.counter(20.6, 0.05, "s")
	require.False(t, ok)

	// A gauge: within what our samples around the moment saw, the one
	// between included.
	g := aroundOf(gauge, at(9.5), at(10.5))
	require.True(t, g.within(140, 0))
	require.True(t, g.within(101, 2))
	require.False(t, g.within(143, 2))
	require.False(t, g.within(97, 2))
	require.Equal(t, "100 .. 140 (3 samples, 9.5 s before, 9.5 s after)", g.gauge(""))
	// Before our first sample: no sample before.
	g = aroundOf(gauge, at(-1), at(-1))
	require.False(t, g.hasBefore)
	require.Equal(t, []ourPoint{{at(0), 100}}, g.ps)
	require.Equal(t, "100 (1 samples, the first 1.0 s after)", g.gauge(""))
	_, _, how := g.interpolated()
	require.Equal(t, "first sample 1.0 s after", how)
}

// TestAroundBounded: where a CPU time counter can have been at the
// kubelet's moment, from our samples and the container's top speed.
func TestAroundBounded(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	// A burner at its 200m limit all along: a range of two quotas.
	burner := []ourPoint{{at(0), 0}, {at(10), 2}, {at(20), 4}}
	a := aroundOf(burner, at(14), at(14))
	lo, hi, how := a.bounded(0.2, 0.02)
	require.InDelta(t, 2.78, lo, 1e-9)
	require.InDelta(t, 2.82, hi, 1e-9)
	require.Equal(t, "samples 4.0 s before, 6.0 s after", how)
	_, ok := a.counterBounded(2.80, 0.2, 0.02, 0.02)
	require.True(t, ok)
	_, ok = a.counterBounded(2.85, 0.2, 0.02, 0.02)
	require.False(t, ok)
	_, ok = a.counterBounded(2.765, 0.2, 0.02, 0.02)
	require.True(t, ok)
	_, ok = a.counterBounded(2.765, 0.2, 0.02, 0.01)
	require.False(t, ok)
	// Starved to half its limit between two samples: the range widens by
	// what it was denied.
	a = aroundOf([]ourPoint{{at(10), 2}, {at(20), 3}}, at(14), at(14))
	lo, hi, _ = a.bounded(0.2, 0.02)
	require.InDelta(t, 2, lo, 1e-9)
	require.InDelta(t, 2.82, hi, 1e-9)
	// Idle: our two samples, whatever the rate.
	a = aroundOf([]ourPoint{{at(0), 2}, {at(10), 2.001}}, at(4), at(4))
	lo, hi, _ = a.bounded(2, 0)
	require.InDelta(t, 2, lo, 1e-9)
	require.InDelta(t, 2.001, hi, 1e-9)
	_, ok = a.counterBounded(2.015, 2, 0, 0.02)
	require.True(t, ok)
	_, ok = a.counterBounded(2.03, 2, 0, 0.02)
	require.False(t, ok)
	_, ok = a.counterBounded(0, 2, 0, 0.02) // CPU time lost (0) is no match
	require.False(t, ok)
	// Faster than the rate (our timestamps late): the range between.
	a = aroundOf([]ourPoint{{at(0), 0}, {at(10), 2.1}}, at(5), at(5))
	lo, hi, _ = a.bounded(0.2, 0)
	require.InDelta(t, 1, lo, 1e-9)
	require.InDelta(t, 1.1, hi, 1e-9)
	// A moment named in whole seconds.
	a = aroundOf(burner, at(13.5), at(14.5))
	lo, hi, _ = a.bounded(0.2, 0.02)
	require.InDelta(t, 2.68, lo, 1e-9)
	require.InDelta(t, 2.92, hi, 1e-9)
}
