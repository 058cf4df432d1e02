// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

// Package cgroupfs finds and reads the node's cgroup tree under a host root
// prefix. Everything is rooted at a path given to Detect: no package state, no
// look at the real /sys/fs/cgroup unless the root says so, so the same code
// reads a live node, a DaemonSet's /hostfs and a fixture directory.
//
// Why the hot path does not use github.com/containerd/cgroups/v3's Stat:
// cgroup2.Load(group, cgroup2.WithMountpoint(p)) and cgroup1 with a custom
// hierarchy can be pointed at a root, but their Stat/StatFiltered return
// protobuf structs of plain uint64 fields and turn a missing file into 0
// (cgroup2 getStatFileContentUint64, e.g. memory.swap.current on a node
// without swap accounting), and "max" into math.MaxUint64. Our contract is
// that absent, zero and unlimited are three different things, which those
// structs cannot express. Stat also reads every controller's files and fills
// a map per file. So this package parses the few files the enabled metrics
// need, with one parser per file shape (parse.go), and keeps presence beside
// every value (U64).
package cgroupfs // import "github.com/containerstats/containerstatsreceiver/internal/cgroupfs"
