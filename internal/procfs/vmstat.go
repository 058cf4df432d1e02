// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package procfs // import "github.com/containerstats/containerstatsreceiver/internal/procfs"

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/containerstats/containerstatsreceiver/internal/opt"
)

// Vmstat holds the /proc/vmstat event counters the receiver uses: node-wide
// totals since boot. A counter the kernel did not print is absent (!OK), not zero.
type Vmstat struct {
	PgFault    opt.Value[uint64] // all page faults, major included
	PgMajFault opt.Value[uint64] // major page faults
	OOMKill    opt.Value[uint64] // processes killed by the OOM killer, global and cgroup OOM alike
}

// Vmstat reads /proc/vmstat.
func (f FS) Vmstat() (Vmstat, error) {
	data, p, err := f.readFile("vmstat")
	if err != nil {
		return Vmstat{}, err
	}
	v, err := parseVmstat(data)
	if err != nil {
		return Vmstat{}, fmt.Errorf("%s: %w", p, err)
	}
	return v, nil
}

// parseVmstat parses "name value" lines; only the fields it keeps must be
// well formed.
func parseVmstat(data []byte) (Vmstat, error) {
	var v Vmstat
	for _, line := range bytes.Split(data, []byte{'\n'}) {
		key, rest, found := bytes.Cut(line, []byte{' '})
		if !found {
			continue
		}
		var dst *opt.Value[uint64]
		switch string(key) {
		case "pgfault":
			dst = &v.PgFault
		case "pgmajfault":
			dst = &v.PgMajFault
		case "oom_kill":
			dst = &v.OOMKill
		default:
			continue
		}
		n, err := strconv.ParseUint(string(bytes.TrimSpace(rest)), 10, 64)
		if err != nil {
			return Vmstat{}, fmt.Errorf("malformed line %q: %w", line, err)
		}
		*dst = opt.Some(n)
	}
	return v, nil
}
