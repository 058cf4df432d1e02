// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package procfs // import "github.com/containerstats/containerstatsreceiver/internal/procfs"

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/containerstats/containerstatsreceiver/internal/opt"
)

// Meminfo holds the /proc/meminfo fields the receiver uses, in bytes. A field
// the kernel did not print is absent (!OK), not zero.
type Meminfo struct {
	MemTotal     opt.Value[uint64]
	ActiveAnon   opt.Value[uint64]
	InactiveAnon opt.Value[uint64]
	ActiveFile   opt.Value[uint64]
	InactiveFile opt.Value[uint64]
	Mapped       opt.Value[uint64]
	SwapTotal    opt.Value[uint64]
	SwapFree     opt.Value[uint64]
}

// Meminfo reads /proc/meminfo.
func (f FS) Meminfo() (Meminfo, error) {
	data, p, err := f.readFile("meminfo")
	if err != nil {
		return Meminfo{}, err
	}
	m, err := parseMeminfo(data)
	if err != nil {
		return Meminfo{}, fmt.Errorf("%s: %w", p, err)
	}
	return m, nil
}

// parseMeminfo parses "Key:   value kB" lines.
func parseMeminfo(data []byte) (Meminfo, error) {
	var m Meminfo
	for _, line := range bytes.Split(data, []byte{'\n'}) {
		key, rest, found := bytes.Cut(line, []byte{':'})
		if !found {
			continue
		}
		var dst *opt.Value[uint64]
		switch string(key) {
		case "MemTotal":
			dst = &m.MemTotal
		case "Active(anon)":
			dst = &m.ActiveAnon
		case "Inactive(anon)":
			dst = &m.InactiveAnon
		case "Active(file)":
			dst = &m.ActiveFile
		case "Inactive(file)":
			dst = &m.InactiveFile
		case "Mapped":
			dst = &m.Mapped
		case "SwapTotal":
			dst = &m.SwapTotal
		case "SwapFree":
			dst = &m.SwapFree
		default:
			continue
		}
		fields := bytes.Fields(rest)
		if len(fields) == 0 || len(fields) > 2 {
			return Meminfo{}, fmt.Errorf("malformed line %q", line)
		}
		v, err := strconv.ParseUint(string(fields[0]), 10, 64)
		if err != nil {
			return Meminfo{}, fmt.Errorf("malformed line %q: %w", line, err)
		}
		if len(fields) == 2 {
			if string(fields[1]) != "kB" {
				return Meminfo{}, fmt.Errorf("malformed line %q: unknown unit", line)
			}
			if v > (1<<64-1)/1024 {
				return Meminfo{}, fmt.Errorf("malformed line %q: value out of range", line)
			}
			v *= 1024
		}
		*dst = opt.Some(v)
	}
	return m, nil
}
