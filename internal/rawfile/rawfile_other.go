// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build !linux

package rawfile // import "github.com/containerstats/containerstatsreceiver/internal/rawfile"

import "errors"

// Open fails: cgroupfs and procfs exist on Linux only.
func Open([]byte) (int, error) { return -1, errors.ErrUnsupported }

// OpenDir fails: cgroupfs and procfs exist on Linux only.
func OpenDir([]byte) (int, error) { return -1, errors.ErrUnsupported }

// OpenAt fails: cgroupfs and procfs exist on Linux only.
func OpenAt(int, []byte) (int, error) { return -1, errors.ErrUnsupported }

// ReadAll fails: cgroupfs and procfs exist on Linux only.
func ReadAll(_ int, buf []byte) ([]byte, error) { return buf[:0], errors.ErrUnsupported }

// Close does nothing.
func Close(int) {}

// ReadDir fails: cgroupfs and procfs exist on Linux only.
func ReadDir([]byte, []byte, func(name []byte, isDir bool)) error { return errors.ErrUnsupported }

// Inode fails: cgroupfs and procfs exist on Linux only.
func Inode(int) (uint64, error) { return 0, errors.ErrUnsupported }

// PathInode fails: cgroupfs and procfs exist on Linux only.
func PathInode(string) (uint64, error) { return 0, errors.ErrUnsupported }

// FileLimit knows no limit off Linux.
func FileLimit() (uint64, bool) { return 0, false }
