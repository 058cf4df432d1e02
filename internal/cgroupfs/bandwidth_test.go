// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package cgroupfs

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseCPUMax(t *testing.T) {
	q, p, err := parseCPUMax([]byte("50000 100000\n"))
	require.NoError(t, err)
	assert.Equal(t, Limit{V: 50000, OK: true}, q)
	assert.Equal(t, Some(100000), p)
	q, p, err = parseCPUMax([]byte("max 100000\n"))
	require.NoError(t, err)
	assert.Equal(t, Limit{OK: true, Unlimited: true}, q)
	assert.Equal(t, Some(100000), p)
	for _, bad := range []string{"", "\n", "1 2 3", "-1 100000", "max max", "1.5 100"} {
		_, _, err := parseCPUMax([]byte(bad))
		require.ErrorIs(t, err, errMalformed, "%q", bad)
	}
	b := CPUBandwidth{Quota: Limit{V: 150000, OK: true}, Period: Some(100000)}
	c, ok := b.CPULimitCores()
	assert.True(t, ok)
	assert.Equal(t, 1.5, c)
	for _, nb := range []CPUBandwidth{
		{Quota: Limit{OK: true, Unlimited: true}, Period: Some(100000)},
		{Quota: Limit{V: 1, OK: true}},
		{Quota: Limit{V: 1, OK: true}, Period: Some(0)},
		{},
	} {
		_, ok := nb.CPULimitCores()
		assert.False(t, ok, "%+v", nb)
	}
}

// FuzzParseCPUMax: no panic; a parsed value prints back to the same value.
func FuzzParseCPUMax(f *testing.F) {
	for _, s := range []string{"max 100000", "50000 100000", "1", "", "max"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		q, p, err := parseCPUMax(data)
		if err != nil {
			return
		}
		s := "max"
		if !q.Unlimited {
			s = fmt.Sprint(q.V)
		}
		if p.OK {
			s += fmt.Sprintf(" %d", p.V)
		}
		q2, p2, err := parseCPUMax([]byte(s + "\n"))
		require.NoError(t, err)
		require.Equal(t, q, q2)
		require.Equal(t, p, p2)
	})
}
