// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package procfs // import "github.com/containerstats/containerstatsreceiver/internal/procfs"

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// BootTime reads the node's boot time from the btime line of /proc/stat.
func (f FS) BootTime() (time.Time, error) {
	data, p, err := f.readFile("stat")
	if err != nil {
		return time.Time{}, err
	}
	t, err := parseBootTime(data)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s: %w", p, err)
	}
	return t, nil
}

func parseBootTime(data []byte) (time.Time, error) {
	for _, line := range bytes.Split(data, []byte{'\n'}) {
		if v, found := bytes.CutPrefix(line, []byte("btime ")); found {
			s, err := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
			if err != nil || s < 0 {
				return time.Time{}, fmt.Errorf("malformed btime line %q", line)
			}
			return time.Unix(s, 0), nil
		}
	}
	return time.Time{}, errors.New("no btime line")
}
