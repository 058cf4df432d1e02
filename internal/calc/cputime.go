// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package calc // import "github.com/containerstats/containerstatsreceiver/internal/calc"

import "math/bits"

// CPUSplit is a cgroup's CPU time split into user and system, in ns.
type CPUSplit struct {
	User, System uint64
}

// AdjustCPUSplit splits total, a precise CPU time (v1 cpuacct.usage, v2
// usage_usec), into user and system in the proportion of user and system
// as the kernel samples them, never letting either fall below prev (the
// split returned for the same cgroup last time; zero the first time). It
// is the kernel's cputime_adjust (kernel/sched/cputime.c), which cgroup v2
// applies to cpu.stat itself: on v2 the split it is given already sums to
// total and comes back unchanged. Cgroup v1 does not: its
// cpuacct.usage_user and usage_sys are tick-sampled, and their sum can be
// far from cpuacct.usage (seen on a 6.18 kernel: 18 % above it for a
// container throttled at 200m, 13 % below for an idle one), so summing the
// raw modes would not give the total the kubelet and cAdvisor report.
//
// The result sums to total, unless total is not above prev's sum (then
// prev: nothing new to split).
func AdjustCPUSplit(prev CPUSplit, total, user, system uint64) CPUSplit {
	if prev.User+prev.System >= total {
		return prev
	}
	var sys uint64
	switch {
	case system == 0:
		sys = 0
	case user == 0:
		sys = total
	default:
		// system·total/(user+system), in 128 bits: the quotient is at most
		// total, so it fits.
		sum, carry := bits.Add64(user, system, 0)
		hi, lo := bits.Mul64(system, total)
		if carry != 0 { // user+system overflowed: halve all three terms
			lo = lo>>1 | hi<<63
			hi >>= 1
			sum = sum>>1 | 1<<63
		}
		if hi >= sum { // cannot happen for system <= user+system; be safe
			sys = total
		} else {
			sys, _ = bits.Div64(hi, lo, sum)
		}
	}
	if sys < prev.System {
		sys = prev.System
	}
	usr := total - sys
	if usr < prev.User {
		usr = prev.User
		sys = total - usr
	}
	return CPUSplit{User: usr, System: sys}
}
