// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package procfs // import "github.com/containerstats/containerstatsreceiver/internal/procfs"

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"syscall"
)

// NetDev is one interface's cumulative counters from /proc/<pid>/net/dev,
// the network namespace of that process.
type NetDev struct {
	Name                                    string
	RxBytes, RxPackets, RxErrors, RxDropped uint64
	TxBytes, TxPackets, TxErrors, TxDropped uint64
}

// NetDev reads /proc/<pid>/net/dev: the interfaces of pid's network
// namespace. ok is false when the process is gone (or the file absent).
func (f FS) NetDev(pid int, dst []NetDev) (devs []NetDev, ok bool, err error) {
	data, p, err := f.readFile(strconv.Itoa(pid), "net", "dev")
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
			return dst, false, nil
		}
		return dst, false, err
	}
	devs, err = parseNetDev(data, dst)
	if err != nil {
		return dst, false, fmt.Errorf("%s: %w", p, err)
	}
	return devs, true, nil
}

// parseNetDev parses the kernel's net/dev table: two header lines, then
// "  name: rx_bytes rx_packets rx_errs rx_drop fifo frame compressed
// multicast tx_bytes tx_packets tx_errs tx_drop fifo colls carrier
// compressed" per interface.
func parseNetDev(data []byte, dst []NetDev) ([]NetDev, error) {
	lines := bytes.Split(data, []byte{'\n'})
	if len(lines) < 2 || !bytes.Contains(lines[0], []byte("|")) {
		return dst, errors.New("net/dev: missing header")
	}
	for _, line := range lines[2:] {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		name, rest, ok := bytes.Cut(line, []byte{':'})
		name = bytes.TrimSpace(name)
		if !ok || len(name) == 0 {
			return dst, fmt.Errorf("net/dev: malformed line %q", line)
		}
		f := bytes.Fields(rest)
		if len(f) < 16 {
			return dst, fmt.Errorf("net/dev: %s: %d fields, want 16", name, len(f))
		}
		var v [16]uint64
		for i := range 16 {
			n, err := strconv.ParseUint(string(f[i]), 10, 64)
			if err != nil {
				return dst, fmt.Errorf("net/dev: %s field %d: %w", name, i+1, err)
			}
			v[i] = n
		}
		dst = append(dst, NetDev{Name: string(name),
			RxBytes: v[0], RxPackets: v[1], RxErrors: v[2], RxDropped: v[3],
			TxBytes: v[8], TxPackets: v[9], TxErrors: v[10], TxDropped: v[11]})
	}
	return dst, nil
}
