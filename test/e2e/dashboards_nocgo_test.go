// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build realmachine && !cgo

package e2e

import "testing"

// pushGPUMocks needs go-nvml's mocks, which need cgo: without it the GPU
// view cannot be evaluated, and the test says so instead of passing.
func (k *cluster) pushGPUMocks(t *testing.T) []string {
	t.Fatal("the GPU view is evaluated on go-nvml mocks, which need cgo (CGO_ENABLED=1)")
	return nil
}
