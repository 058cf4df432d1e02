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
	line, data := nextLine(data)
	if !bytes.Contains(line, []byte("|")) {
		return dst, errors.New("net/dev: missing header")
	}
	if _, data = nextLine(data); len(data) == 0 && len(line) == 0 {
		return dst, errors.New("net/dev: missing header")
	}
	for len(data) > 0 {
		line, data = nextLine(data)
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		name, rest, ok := bytes.Cut(line, []byte{':'})
		name = bytes.TrimSpace(name)
		if !ok || len(name) == 0 {
			return dst, fmt.Errorf("net/dev: malformed line %q", line)
		}
		var v [16]uint64
		for i := range v {
			var f []byte
			f, rest = nextField(rest)
			if f == nil {
				return dst, fmt.Errorf("net/dev: %s: %d fields, want 16", name, i)
			}
			n, err := parseDecimal(f)
			if err != nil {
				return dst, fmt.Errorf("net/dev: %s field %d: %w", name, i+1, err)
			}
			v[i] = n
		}
		dst = append(dst, NetDev{
			Name:    string(name),
			RxBytes: v[0], RxPackets: v[1], RxErrors: v[2], RxDropped: v[3],
			TxBytes: v[8], TxPackets: v[9], TxErrors: v[10], TxDropped: v[11],
		})
	}
	return dst, nil
}

func nextLine(data []byte) (line, rest []byte) {
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		return data[:i], data[i+1:]
	}
	return data, nil
}

// nextField returns the next space-separated field of b, nil at the end.
func nextField(b []byte) (field, rest []byte) {
	i := 0
	for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	if i == len(b) {
		return nil, nil
	}
	j := i
	for j < len(b) && b[j] != ' ' && b[j] != '\t' {
		j++
	}
	return b[i:j], b[j:]
}

// parseDecimal parses an unsigned decimal without allocating.
func parseDecimal(b []byte) (uint64, error) {
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("not a number: %q", b)
		}
		d := uint64(c - '0')
		if v > (1<<64-1-d)/10 {
			return 0, strconv.ErrRange
		}
		v = v*10 + d
	}
	return v, nil
}
