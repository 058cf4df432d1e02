// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package cgroupfs // import "github.com/containerstats/containerstatsreceiver/internal/cgroupfs"

import (
	"bytes"
	"fmt"
	"path/filepath"
)

// CPUWant says which parts of CPUBandwidth to read, so a scrape reads only
// the files its enabled metrics need.
type CPUWant struct {
	Throttling bool // cpu.stat nr_periods, nr_throttled, throttled time
	Limit      bool // cpu.max, or cpu.cfs_quota_us + cpu.cfs_period_us
	Shares     bool // cpu.weight, or cpu.shares
}

// Any reports whether anything is wanted.
func (w CPUWant) Any() bool { return w.Throttling || w.Limit || w.Shares }

// CPUBandwidth is a cgroup's CFS bandwidth control and its effect.
type CPUBandwidth struct {
	Periods          U64   // nr_periods
	ThrottledPeriods U64   // nr_throttled
	ThrottledTime    U64   // ns: v1 throttled_time (ns), v2 throttled_usec (µs) * 1000
	Quota            Limit // µs of CPU per period; Unlimited for v1 -1 or v2 "max"
	Period           U64   // µs
	Shares           U64   // v1 cpu.shares
	Weight           U64   // v2 cpu.weight
}

// CPULimitCores returns the CPU limit in cores, ok only for a finite quota
// with a non-zero period.
func (b CPUBandwidth) CPULimitCores() (float64, bool) {
	if !b.Quota.Finite() || !b.Period.OK || b.Period.V == 0 {
		return 0, false
	}
	return float64(b.Quota.V) / float64(b.Period.V), true
}

// CPUBandwidth reads what want asks of cgroup rel's CPU controller: the cpu
// hierarchy on v1 and hybrid nodes, the unified tree on v2. On v2 the
// throttling keys come from the cpu.stat that CPU just read (cpuStatV2).
func (r *Reader) CPUBandwidth(rel string, want CPUWant) (CPUBandwidth, error) {
	var b CPUBandwidth
	if r.l.StatsV1() {
		dir := r.l.Dir(CtrlCPU, rel)
		if dir == "" {
			return b, nil
		}
		return b, r.cpuBandwidthV1(dir, want, &b)
	}
	return b, r.cpuBandwidthV2(r.l.Dir("", rel), want, &b)
}

func (r *Reader) cpuBandwidthV1(dir string, want CPUWant, b *CPUBandwidth) error {
	if want.Throttling {
		if err := r.readKeyed(dir, "cpu.stat", func(k []byte, v uint64) {
			switch string(k) {
			case "nr_periods":
				b.Periods = Some(v)
			case "nr_throttled":
				b.ThrottledPeriods = Some(v)
			case "throttled_time":
				b.ThrottledTime = Some(v)
			}
		}); err != nil {
			return err
		}
	}
	if want.Limit {
		var err error
		if b.Quota, err = r.readLimit(dir, "cpu.cfs_quota_us"); err != nil {
			return err
		}
		if b.Period, err = r.readUint(dir, "cpu.cfs_period_us"); err != nil {
			return err
		}
	}
	if want.Shares {
		var err error
		if b.Shares, err = r.readUint(dir, "cpu.shares"); err != nil {
			return err
		}
	}
	return nil
}

func (r *Reader) cpuBandwidthV2(dir string, want CPUWant, b *CPUBandwidth) error {
	if want.Throttling {
		if err := r.cpuStatV2(dir, false, func(k []byte, v uint64) {
			switch string(k) {
			case "nr_periods":
				b.Periods = Some(v)
			case "nr_throttled":
				b.ThrottledPeriods = Some(v)
			case "throttled_usec":
				b.ThrottledTime = Some(v * 1000)
			}
		}); err != nil {
			return err
		}
	}
	if want.Limit {
		data, ok, err := r.read(dir, "cpu.max")
		if err != nil {
			return err
		}
		if ok {
			if b.Quota, b.Period, err = parseCPUMax(data); err != nil {
				return fmt.Errorf("%s: %w", filepath.Join(dir, "cpu.max"), err)
			}
		}
	}
	if want.Shares {
		var err error
		if b.Weight, err = r.readUint(dir, "cpu.weight"); err != nil {
			return err
		}
	}
	return nil
}

// parseCPUMax parses v2 cpu.max: "$MAX $PERIOD", MAX a number of µs or
// "max"; the period may be missing on very old kernels' output.
func parseCPUMax(data []byte) (quota Limit, period U64, err error) {
	f := bytes.Fields(data)
	if len(f) == 0 || len(f) > 2 {
		return Limit{}, U64{}, fmt.Errorf("%w cpu.max %q: want \"quota period\"", errMalformed, bytes.TrimSpace(data))
	}
	if string(f[0]) == "max" {
		quota = Limit{OK: true, Unlimited: true}
	} else {
		v, err := parseUintBytes(f[0])
		if err != nil {
			return Limit{}, U64{}, fmt.Errorf("%w cpu.max quota %q: %w", errMalformed, f[0], err)
		}
		quota = Limit{V: v, OK: true}
	}
	if len(f) == 2 {
		v, err := parseUintBytes(f[1])
		if err != nil {
			return Limit{}, U64{}, fmt.Errorf("%w cpu.max period %q: %w", errMalformed, f[1], err)
		}
		period = Some(v)
	}
	return quota, period, nil
}
