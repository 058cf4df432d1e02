// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package cgroupfs

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseFlatKeyed(t *testing.T) {
	got := map[string]uint64{}
	err := parseFlatKeyed([]byte("usage_usec 11\nuser_usec 7\n\nsystem_usec 18446744073709551615\n"), func(k []byte, v uint64) {
		got[string(k)] = v
	})
	require.NoError(t, err)
	assert.Equal(t, map[string]uint64{"usage_usec": 11, "user_usec": 7, "system_usec": 1<<64 - 1}, got)

	for _, bad := range []string{"novalue\n", "k -1\n", "k 1.5\n", " 5\n", "k 18446744073709551616\n", "k \n", "k -\n", "k +\n"} {
		err := parseFlatKeyed([]byte(bad), func([]byte, uint64) {})
		require.ErrorIs(t, err, errMalformed, "%q", bad)
	}
}

func TestParseLimit(t *testing.T) {
	cases := []struct {
		in   string
		want Limit
	}{
		{"max\n", Limit{OK: true, Unlimited: true}},
		{"9223372036854771712\n", Limit{V: 9223372036854771712, OK: true, Unlimited: true}}, // v1 "unlimited"
		{"-1\n", Limit{OK: true, Unlimited: true}},
		{"4611686018427387904\n", Limit{V: 1 << 62, OK: true, Unlimited: true}}, // the threshold itself
		{"4611686018427387903\n", Limit{V: 1<<62 - 1, OK: true}},
		{"268435456\n", Limit{V: 268435456, OK: true}},
		{"0\n", Limit{V: 0, OK: true}},
	}
	for _, c := range cases {
		got, err := parseLimit([]byte(c.in))
		require.NoError(t, err, c.in)
		assert.Equal(t, c.want, got, c.in)
	}
	_, err := parseLimit([]byte("lots\n"))
	require.ErrorIs(t, err, errMalformed)
}

func TestParseSingleUint(t *testing.T) {
	v, err := parseSingleUint([]byte("  42\n"))
	require.NoError(t, err)
	assert.Equal(t, uint64(42), v)
	_, err = parseSingleUint([]byte(""))
	require.ErrorIs(t, err, errMalformed)
}

// FuzzParseFlatKeyed: no panic, and every pair it reports round-trips: the
// printed "key value" line parses back to the same pair.
func FuzzParseFlatKeyed(f *testing.F) {
	f.Add([]byte("cache 1\nrss 2\ntotal_inactive_file 3\n"))
	f.Add([]byte("usage_usec 11\nuser_usec 7\nsystem_usec 4\nnr_periods 0\n"))
	f.Add([]byte("user 5\nsystem 6\n"))
	f.Add([]byte("k 18446744073709551615"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_ = parseFlatKeyed(data, func(k []byte, v uint64) {
			line := fmt.Sprintf("%s %d", k, v)
			var k2 string
			var v2 uint64
			require.NoError(t, parseFlatKeyed([]byte(line), func(kk []byte, vv uint64) { k2, v2 = string(kk), vv }))
			require.Equal(t, string(k), k2)
			require.Equal(t, v, v2)
		})
	})
}

// FuzzParseLimit: no panic; a finite limit prints back to the same number.
func FuzzParseLimit(f *testing.F) {
	for _, s := range []string{"max", "9223372036854771712", "-1", "1024", "", "0x10"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := parseLimit(data)
		if err != nil || l.Unlimited {
			return
		}
		back, err := parseLimit([]byte(strconv.FormatUint(l.V, 10)))
		require.NoError(t, err)
		require.Equal(t, l, back)
	})
}

func FuzzParseSingleUint(f *testing.F) {
	for _, s := range []string{"0\n", "42", " 7 ", "18446744073709551615", "x"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := parseSingleUint(data)
		if err != nil {
			return
		}
		back, err := parseSingleUint([]byte(strconv.FormatUint(v, 10)))
		require.NoError(t, err)
		require.Equal(t, v, back)
	})
}
