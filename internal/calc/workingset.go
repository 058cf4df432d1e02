// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package calc // import "github.com/containerstats/containerstatsreceiver/internal/calc"

// WorkingSet is usage minus inactive file cache, floored at 0: the one
// definition used for containers, pods and the node on v1 and v2 (the
// kubelet's, and what eviction decisions compare against).
func WorkingSet(usage, inactiveFile uint64) uint64 {
	if inactiveFile >= usage {
		return 0
	}
	return usage - inactiveFile
}

// Available is what is left under a limit: limit minus working set, floored
// at 0 (the working set can exceed the limit briefly, or when the limit was
// lowered below current usage). It is also used for any a - b of two counters
// read at different instants, such as minor = pgfault - pgmajfault.
func Available(limit, workingSet uint64) uint64 {
	if workingSet >= limit {
		return 0
	}
	return limit - workingSet
}

// ClampInt64 is a count as an int64 data point value, clamped at the
// largest int64.
func ClampInt64(v uint64) int64 {
	if v > 1<<63-1 {
		return 1<<63 - 1
	}
	return int64(v)
}
