// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package procfs // import "github.com/containerstats/containerstatsreceiver/internal/procfs"

import (
	"bytes"
	"fmt"
	"strconv"
	"time"
)

// userHZ is the unit of /proc/<pid>/stat's time fields: USER_HZ, 100 on
// every Linux architecture (the kernel converts from its own HZ).
const userHZ = 100

// StartTime returns when process pid started: /proc/<pid>/stat's
// starttime (field 22, clock ticks after boot) added to boot, the node's
// boot time (/proc/stat btime, Stat).
func (f FS) StartTime(pid int, boot time.Time) (time.Time, error) {
	data, p, err := f.readFile(strconv.Itoa(pid), "stat")
	if err != nil {
		return time.Time{}, err
	}
	ticks, err := parseStatStartTicks(data)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s: %w", p, err)
	}
	return boot.Add(time.Duration(ticks) * (time.Second / userHZ)), nil
}

// parseStatStartTicks returns field 22 (starttime) of a /proc/<pid>/stat
// line: the 20th field after the last ')' that ends comm (the state is the
// first of them).
func parseStatStartTicks(data []byte) (uint64, error) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 || bytes.IndexByte(data[:i], '(') < 0 {
		return 0, fmt.Errorf("%w: no (comm)", errMalformedStat)
	}
	fields := bytes.Fields(data[i+1:])
	const startField = 22 - 3 // fields 1 and 2 are pid and comm; the state, field 3, is fields[0]
	if len(fields) <= startField {
		return 0, fmt.Errorf("%w: %d fields after (comm), want more than %d", errMalformedStat, len(fields), startField)
	}
	v, err := strconv.ParseUint(string(fields[startField]), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: starttime %q: %w", errMalformedStat, fields[startField], err)
	}
	return v, nil
}
