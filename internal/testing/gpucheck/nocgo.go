//go:build !cgo

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

// Command gpucheck needs cgo (go-nvml); see main.go.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Println("gpu-check: built without cgo; go-nvml needs cgo (CGO_ENABLED=1)")
	os.Exit(2)
}
