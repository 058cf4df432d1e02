// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build linux

// Command leftovers is the last step of `make test` (`make leftovers`): it
// takes the machine-wide test lock (so no running test's pods are
// mistaken for leftovers), lists what real-machine tests left behind
// (internal/testing/leftovers: processes, kubepods cgroups, mounts, network
// namespaces, containerdtest directories) and exits 1 naming them. With
// -clean it removes them after naming them (still exiting 1), so the next
// run starts from a clean machine.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/containerstats/containerstatsreceiver/internal/testing/leftovers"
	"github.com/containerstats/containerstatsreceiver/internal/testing/machine"
)

func main() {
	clean := flag.Bool("clean", false, "remove the leftovers after naming them (the exit status stays 1)")
	flag.Parse()
	os.Exit(run(*clean))
}

func run(clean bool) int {
	logf := func(f string, a ...any) { fmt.Fprintf(os.Stderr, "leftovers: "+f+"\n", a...) }
	release, err := machine.Acquire(logf)
	if err != nil {
		logf("machine lock %s: %v", machine.LockPath(), err)
		return 2
	}
	defer release()
	o := leftovers.Default()
	ls, err := leftovers.Find(o)
	if err != nil {
		logf("%v", err)
		return 2
	}
	if len(ls) == 0 {
		fmt.Println("leftovers: none (no test process, cgroup, mount or network namespace left behind)")
		return 0
	}
	fmt.Fprintf(os.Stderr, "leftovers: %d things real-machine tests left behind:\n%s", len(ls), leftovers.Report(ls))
	if clean {
		errs := leftovers.Clean(o, ls)
		for _, err := range errs {
			logf("could not remove: %v", err)
		}
		if len(errs) == 0 {
			logf("removed them all")
		}
	}
	return 1
}
