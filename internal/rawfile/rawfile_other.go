// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build !linux

package rawfile // import "github.com/containerstats/containerstatsreceiver/internal/rawfile"

import "errors"

// Open fails: cgroupfs and procfs exist on Linux only.
func Open([]byte) (int, error) { return -1, errors.ErrUnsupported }

// ReadAll fails: cgroupfs and procfs exist on Linux only.
func ReadAll(_ int, buf []byte) ([]byte, error) { return buf[:0], errors.ErrUnsupported }

// Close does nothing.
func Close(int) {}

// ReadDir fails: cgroupfs and procfs exist on Linux only.
func ReadDir([]byte, []byte, func(name []byte, isDir bool)) error { return errors.ErrUnsupported }
