// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package cgroupfs // import "github.com/containerstats/containerstatsreceiver/internal/cgroupfs"

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"syscall"
)

// PSI resources, named as in <resource>.pressure and /proc/pressure/<resource>.
const (
	PSICPU    = "cpu"
	PSIMemory = "memory"
	PSIIO     = "io"
)

// PSILine is one line (some or full) of a pressure file.
type PSILine struct {
	OK                   bool    // the line was present
	Avg10, Avg60, Avg300 float64 // percent, 0-100
	Total                uint64  // µs stalled since the cgroup was created
}

// PSI is one pressure file. OK is false when PSI is not available for it:
// no unified tree, the file is missing, or the kernel has PSI disabled
// (reads fail with EOPNOTSUPP). Callers emit nothing then, never zeros.
type PSI struct {
	OK   bool
	Some PSILine
	Full PSILine
}

// Pressure reads <resource>.pressure of cgroup rel from the unified tree
// (Layout.PSIDir: the v2 tree on hybrid nodes too). On hybrid nodes a cgroup
// the unified tree does not mirror has no PSI; on v2 a missing cgroup
// directory is ErrVanished.
func (r *Reader) Pressure(rel, resource string) (PSI, error) {
	dir := r.l.PSIDir(rel)
	if dir == "" {
		return PSI{}, nil
	}
	p, err := r.pressureFile(dir, resource+".pressure")
	if errors.Is(err, ErrVanished) && r.l.Mode == ModeHybrid {
		return PSI{}, nil
	}
	return p, err
}

// NodePressure reads the node's pressure for resource: the root cgroup's
// <resource>.pressure in the unified tree, else <root>/proc/pressure/<resource>
// (the same system-wide numbers, also present on pure v1 nodes).
func (r *Reader) NodePressure(resource string) (PSI, error) {
	if dir := r.l.PSIDir("/"); dir != "" {
		p, err := r.pressureFile(dir, resource+".pressure")
		if err != nil || p.OK {
			return p, err
		}
	}
	p, err := r.pressureFile(filepath.Join(r.l.Root, "proc", "pressure"), resource)
	if errors.Is(err, ErrVanished) { // no /proc/pressure directory
		return PSI{}, nil
	}
	return p, err
}

func (r *Reader) pressureFile(dir, name string) (PSI, error) {
	data, ok, err := r.read(dir, name)
	if err != nil {
		if psiUnsupported(err) {
			return PSI{}, nil
		}
		return PSI{}, err
	}
	if !ok {
		return PSI{}, nil
	}
	p, err := parsePressure(data)
	if err != nil {
		return PSI{}, fmt.Errorf("%s: %w", filepath.Join(dir, name), err)
	}
	return p, nil
}

// parsePressure parses a pressure file:
//
//	some avg10=0.12 avg60=0.34 avg300=0.56 total=789
//	full avg10=0.00 avg60=0.00 avg300=0.00 total=0
//
// Both lines are optional (old kernels print no full line for cpu), but a
// file with neither is malformed.
func parsePressure(data []byte) (PSI, error) {
	var p PSI
	for len(data) > 0 {
		var line []byte
		line, data = cutLine(data)
		if len(line) == 0 {
			continue
		}
		kind, rest, _ := bytes.Cut(line, []byte{' '})
		var dst *PSILine
		switch string(kind) {
		case "some":
			dst = &p.Some
		case "full":
			dst = &p.Full
		default:
			return PSI{}, fmt.Errorf("%w pressure line %q", errMalformed, line)
		}
		l, err := parsePSILine(rest)
		if err != nil {
			return PSI{}, fmt.Errorf("%w pressure line %q: %w", errMalformed, line, err)
		}
		*dst = l
	}
	if !p.Some.OK && !p.Full.OK {
		return PSI{}, fmt.Errorf("%w pressure: no some or full line", errMalformed)
	}
	p.OK = true
	return p, nil
}

func parsePSILine(rest []byte) (PSILine, error) {
	var l PSILine
	var seen uint8
	for len(rest) > 0 {
		var f []byte
		f, rest = nextField(rest)
		if len(f) == 0 {
			continue
		}
		k, v, found := bytes.Cut(f, []byte{'='})
		if !found {
			return l, fmt.Errorf("field %q: want key=value", f)
		}
		var avg *float64
		var bit uint8
		switch string(k) {
		case "avg10":
			avg, bit = &l.Avg10, 1
		case "avg60":
			avg, bit = &l.Avg60, 2
		case "avg300":
			avg, bit = &l.Avg300, 4
		case "total":
			t, err := parseUintBytes(v)
			if err != nil {
				return l, fmt.Errorf("total %q: %w", v, err)
			}
			l.Total, bit = t, 8
		default:
			continue // a key a future kernel adds
		}
		if seen&bit != 0 {
			return l, fmt.Errorf("duplicate %s", k)
		}
		seen |= bit
		if avg != nil {
			a, err := strconv.ParseFloat(string(v), 64)
			if err != nil || !(a >= 0 && a <= 100) {
				return l, fmt.Errorf("%s %q: want a percentage", k, v)
			}
			*avg = a
		}
	}
	if seen != 15 {
		return l, errors.New("want avg10, avg60, avg300 and total")
	}
	l.OK = true
	return l, nil
}

// psiUnsupported reports whether err is the kernel saying PSI is disabled
// (psi=0 on the command line, or cgroup.pressure set to 0 on the cgroup):
// reads of the pressure files then fail with EOPNOTSUPP (ENOTSUP).
func psiUnsupported(err error) bool {
	return errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.ENOTSUP)
}

// nextField splits the first field separated by ASCII white space off b,
// as bytes.Fields would (empty when b holds only white space), without
// allocating: a pressure line is parsed for every entity every scrape.
func nextField(b []byte) (field, rest []byte) {
	i := 0
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	j := i
	for j < len(b) && !isSpace(b[j]) {
		j++
	}
	return b[i:j], b[j:]
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}
