// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build linux

// Command workload runs one test workload (internal/testing/workload) in a
// container: `workload <mode> key=value...`. Built static (CGO_ENABLED=0)
// it goes into a test image beside busybox (containerdtest.ImageFiles).
// FDs waits for SIGUSR1 as its poke.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/containerstats/containerstatsreceiver/internal/testing/workload"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: workload <mode> [key=value...]")
		os.Exit(2)
	}
	poke := func() error {
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGUSR1)
		<-ch
		return nil
	}
	os.Exit(workload.Run(os.Args[1], os.Args[2:], poke))
}
