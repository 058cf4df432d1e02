// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package cgroupfs // import "github.com/containerstats/containerstatsreceiver/internal/cgroupfs"

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
)

// errMalformed is wrapped by every parse error.
var errMalformed = errors.New("malformed")

// v1UnlimitedThreshold: cgroup v1 reports "no limit" as LONG_MAX rounded down
// to the page size (9223372036854771712 with 4 KiB pages). Anything at or
// above 2^62 is treated as unlimited: no machine has that much memory.
const v1UnlimitedThreshold = uint64(1) << 62

// cutLine splits data at its first newline: the line without it, and the
// rest (nil after the last line).
func cutLine(data []byte) (line, rest []byte) {
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		return data[:i], data[i+1:]
	}
	return data, nil
}

// parseFlatKeyed parses the "key value" per line format of memory.stat,
// cpu.stat, memory.events and cpuacct.stat, calling fn for each pair. It
// allocates nothing; key is only valid during the call.
func parseFlatKeyed(data []byte, fn func(key []byte, val uint64)) error {
	for len(data) > 0 {
		var line []byte
		line, data = cutLine(data)
		if len(line) == 0 {
			continue
		}
		sp := bytes.IndexByte(line, ' ')
		if sp <= 0 {
			return fmt.Errorf("%w line %q: want \"key value\"", errMalformed, line)
		}
		v, err := parseUintBytes(bytes.TrimSpace(line[sp+1:]))
		if err != nil {
			return fmt.Errorf("%w line %q: %w", errMalformed, line, err)
		}
		fn(line[:sp], v)
	}
	return nil
}

// parseSingleUint parses a file holding one unsigned integer (memory.current,
// cpuacct.usage, memory.usage_in_bytes).
func parseSingleUint(data []byte) (uint64, error) {
	v, err := parseUintBytes(bytes.TrimSpace(data))
	if err != nil {
		return 0, fmt.Errorf("%w value %q: %w", errMalformed, bytes.TrimSpace(data), err)
	}
	return v, nil
}

// parseLimit parses a limit file: a number, or "max" (v2) for unlimited; v1's
// page-rounded LONG_MAX also reads as unlimited.
func parseLimit(data []byte) (Limit, error) {
	s := bytes.TrimSpace(data)
	if string(s) == "max" {
		return Limit{OK: true, Unlimited: true}, nil
	}
	v, err := parseUintBytes(s)
	if err != nil {
		// v1 writes -1 into some limit files to mean unlimited.
		if string(s) == "-1" {
			return Limit{OK: true, Unlimited: true}, nil
		}
		return Limit{}, fmt.Errorf("%w limit %q: %w", errMalformed, s, err)
	}
	return Limit{V: v, OK: true, Unlimited: v >= v1UnlimitedThreshold}, nil
}

func parseUintBytes(b []byte) (uint64, error) {
	if len(b) == 0 {
		return 0, errors.New("empty")
	}
	// Fast path without allocating a string.
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return strconv.ParseUint(string(b), 10, 64)
		}
		d := uint64(c - '0')
		if v > (1<<64-1-d)/10 {
			return 0, strconv.ErrRange
		}
		v = v*10 + d
	}
	return v, nil
}
