// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

// Package calc holds the receiver's pure arithmetic: rates over real elapsed
// time, the working-set rule and smoothing. It imports only the standard
// library and takes time as arguments, never from a clock of its own.
package calc // import "github.com/containerstats/containerstatsreceiver/internal/calc"
