// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

// Package procfs reads the few /proc files the receiver needs, under a host
// root prefix given to NewFS (like prometheus/procfs.NewFS).
package procfs // import "github.com/containerstats/containerstatsreceiver/internal/procfs"
