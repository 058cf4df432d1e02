// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build !linux

package hosttree

import "testing"

// TempDir is tb.TempDir() where there is no /dev/shm tmpfs.
func TempDir(tb testing.TB) string {
	tb.Helper()
	return tb.TempDir()
}
