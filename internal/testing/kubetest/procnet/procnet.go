// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

// Package procnet reads the TCP listeners of a process from /proc: the test
// cluster (package kubetest) checks with it that a component listens only
// where it was told to. Standard library only, so that its fuzz target
// compiles without the cluster's dependencies.
package procnet

import (
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
)

// Listening lists the TCP addresses process pid listens on ("ip:port"),
// from its socket file descriptors and /proc/<pid>/net/tcp{,6}.
func Listening(pid int) ([]string, error) {
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return nil, err
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		l, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if err == nil && strings.HasPrefix(l, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
		}
	}
	var out []string
	for _, f := range []string{"tcp", "tcp6"} {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, f))
		if err != nil {
			if f == "tcp6" && errors.Is(err, os.ErrNotExist) {
				continue // IPv6 off
			}
			return nil, err
		}
		addrs, err := parseListeners(b, inodes)
		if err != nil {
			return nil, fmt.Errorf("/proc/%d/net/%s: %w", pid, f, err)
		}
		out = append(out, addrs...)
	}
	return out, nil
}

// parseListeners returns the local addresses of the LISTEN (0A) sockets of
// a /proc/net/tcp{,6} table whose inode is in inodes.
func parseListeners(b []byte, inodes map[string]bool) ([]string, error) {
	var out []string
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	for _, line := range lines[1:] { // header
		f := strings.Fields(line)
		if len(f) < 10 {
			return nil, fmt.Errorf("short line %q", line)
		}
		if f[3] != "0A" || !inodes[f[9]] {
			continue
		}
		hexIP, hexPort, ok := strings.Cut(f[1], ":")
		if !ok {
			return nil, fmt.Errorf("local address %q", f[1])
		}
		raw, err := hex.DecodeString(hexIP)
		if err != nil {
			return nil, fmt.Errorf("local address %q: %w", f[1], err)
		}
		// The kernel prints the address as 32-bit words in host order
		// (little-endian here): reverse each word.
		ip := make(net.IP, len(raw))
		for i := 0; i+4 <= len(raw); i += 4 {
			ip[i], ip[i+1], ip[i+2], ip[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
		}
		port, err := strconv.ParseUint(hexPort, 16, 16)
		if err != nil {
			return nil, fmt.Errorf("local address %q: %w", f[1], err)
		}
		if v4 := ip.To4(); v4 != nil {
			ip = v4
		}
		out = append(out, net.JoinHostPort(ip.String(), strconv.FormatUint(port, 10)))
	}
	return out, nil
}
