// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package cgroupfs

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParsePressure(t *testing.T) {
	p, err := parsePressure([]byte("some avg10=1.25 avg60=2.50 avg300=3.75 total=123456\nfull avg10=0.10 avg60=0.20 avg300=0.30 total=789\n"))
	require.NoError(t, err)
	assert.Equal(t, PSI{
		OK:   true,
		Some: PSILine{OK: true, Avg10: 1.25, Avg60: 2.5, Avg300: 3.75, Total: 123456},
		Full: PSILine{OK: true, Avg10: 0.1, Avg60: 0.2, Avg300: 0.3, Total: 789},
	}, p)
	// Kernels before 5.13 print no full line for cpu: full is absent, not zero.
	p, err = parsePressure([]byte("some avg10=0.00 avg60=0.00 avg300=0.00 total=5\n"))
	require.NoError(t, err)
	assert.True(t, p.Some.OK)
	assert.False(t, p.Full.OK)
	for _, bad := range []string{
		"", "\n", "most avg10=0 avg60=0 avg300=0 total=0", "some avg10=0 avg60=0 total=0",
		"some avg10=x avg60=0 avg300=0 total=0", "some avg10=0 avg60=0 avg300=0 total=-1",
		"some avg10=101 avg60=0 avg300=0 total=0", "some avg10=NaN avg60=0 avg300=0 total=0",
		"some avg10=0 avg10=0 avg60=0 avg300=0 total=0", "some avg10 avg60=0 avg300=0 total=0",
	} {
		_, err := parsePressure([]byte(bad))
		require.ErrorIs(t, err, errMalformed, "%q", bad)
	}
}

// Pressure: missing files and EOPNOTSUPP-less absence give PSI{} (no data);
// the node falls back to /proc/pressure.
func TestPressureAbsentAndNodeFallback(t *testing.T) {
	root := t.TempDir()
	base := filepath.Join(root, "sys/fs/cgroup")
	write(t, filepath.Join(base, "cpu,cpuacct/cgroup.procs"), "")
	write(t, filepath.Join(base, "cpu,cpuacct/cpuacct.usage"), "1\n")
	l, err := Detect(root)
	require.NoError(t, err)
	r := NewReader(l)
	p, err := r.Pressure("/kubepods", PSICPU)
	require.NoError(t, err)
	assert.False(t, p.OK, "pure v1 has no cgroup PSI")
	p, err = r.NodePressure(PSICPU)
	require.NoError(t, err)
	assert.False(t, p.OK, "no /proc/pressure either")
	write(t, filepath.Join(root, "proc/pressure/cpu"), "some avg10=1.00 avg60=2.00 avg300=3.00 total=4\n")
	p, err = r.NodePressure(PSICPU)
	require.NoError(t, err)
	assert.True(t, p.OK)
	assert.Equal(t, uint64(4), p.Some.Total)
	p, err = r.NodePressure(PSIIO)
	require.NoError(t, err)
	assert.False(t, p.OK)
}

// FuzzParsePressure: no panic; every parsed value is in range, and printing
// the parsed lines back gives the same PSI (averages within print rounding).
func FuzzParsePressure(f *testing.F) {
	f.Add([]byte("some avg10=1.25 avg60=2.50 avg300=3.75 total=123456\nfull avg10=0.10 avg60=0.20 avg300=0.30 total=789\n"))
	f.Add([]byte("some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := parsePressure(data)
		if err != nil {
			return
		}
		require.True(t, p.OK)
		var b strings.Builder
		for _, l := range []struct {
			name string
			l    PSILine
		}{{"some", p.Some}, {"full", p.Full}} {
			if !l.l.OK {
				continue
			}
			for _, a := range []float64{l.l.Avg10, l.l.Avg60, l.l.Avg300} {
				require.True(t, a >= 0 && a <= 100)
			}
			fmt.Fprintf(&b, "%s avg10=%g avg60=%g avg300=%g total=%d\n", l.name, l.l.Avg10, l.l.Avg60, l.l.Avg300, l.l.Total)
		}
		back, err := parsePressure([]byte(b.String()))
		require.NoError(t, err)
		require.Equal(t, p.Some.Total, back.Some.Total)
		require.Equal(t, p.Full.Total, back.Full.Total)
		require.Less(t, math.Abs(p.Some.Avg10-back.Some.Avg10), 1e-9)
	})
}

func TestPSIUnsupported(t *testing.T) {
	assert.True(t, psiUnsupported(fmt.Errorf("read x: %w", &os.PathError{Op: "read", Path: "/x/cpu.pressure", Err: syscall.EOPNOTSUPP})))
	assert.True(t, psiUnsupported(syscall.ENOTSUP))
	assert.False(t, psiUnsupported(syscall.EIO))
	assert.False(t, psiUnsupported(nil))
}

// FuzzNextField holds nextField to bytes.Fields on ASCII input: the same
// fields in the same order.
func FuzzNextField(f *testing.F) {
	for _, s := range []string{"", " ", "avg10=0.00 avg60=1.00", "\t a \r\nb\v\fc  ", "x"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, c := range b {
			if c >= 0x80 {
				return // bytes.Fields also splits on Unicode spaces; cgroup files are ASCII
			}
		}
		var got [][]byte
		for rest := b; len(rest) > 0; {
			var fld []byte
			fld, rest = nextField(rest)
			if len(fld) > 0 {
				got = append(got, fld)
			}
		}
		want := bytes.Fields(b)
		if len(got) != len(want) {
			t.Fatalf("%q: %q, bytes.Fields %q", b, got, want)
		}
		for i := range want {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("%q: %q, bytes.Fields %q", b, got, want)
			}
		}
	})
}
