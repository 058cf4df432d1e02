// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build linux && vmnode

package v2node

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/containerstats/containerstatsreceiver/internal/testing/containerdtest"
	"github.com/containerstats/containerstatsreceiver/internal/testing/criotest"
	"github.com/containerstats/containerstatsreceiver/internal/testing/machine"
	"github.com/containerstats/containerstatsreceiver/internal/testing/vmnode"
)

// TestV2Node boots the v2 guest and runs the guest's tests (build tag
// v2guest) in it: each guest test and subtest is reported here under the
// same name, with its output, passing or failing as it did in the guest.
// Then the fixture check (fixtures_test.go) compares our v2 fixtures with
// what the guest's kernel has. What the guest writes for the docs (the
// field-note tables) is copied to $V2NODE_OUT when set.
//
// Environment: CADVISOR_PEER_BIN (make cadvisor-peer), KUBE_BIN_DIR (make
// kube-bins, for the kubelet), CONTAINERD_BIN_DIR (make containerd-bins:
// the guest's only containerd and runc) and CRIO_BIN_DIR (make crio-bins:
// its CRI-O): the guest's tests fail without them. V2NODE_RUN narrows the guest's tests (-test.run).
func TestV2Node(t *testing.T) {
	machine.Lock(t)
	machine.Need(t, vmnode.Available())
	a, err := vmnode.Prepare(vmnode.CacheDir(), t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	if a.Built {
		t.Logf("guest built in %s (cold)", a.BuildTime.Round(time.Second))
	} else {
		t.Logf("guest from the cache: %s", a.Dir)
	}
	share, results := t.TempDir(), t.TempDir()
	t0 := time.Now()
	// make v2guest-build runs these two builds ahead with the same flags
	// (make test, in the background): keep them the same.
	gobuild(t, "test", "-c", "-tags", "v2guest", "-o", filepath.Join(share, "v2guest.test"), ".")
	gobuild(t, "build", "-o", filepath.Join(share, "workload"), "../../internal/testing/cmd/workload")
	for env, name := range map[string]string{"CADVISOR_PEER_BIN": "cadvisorpeer", "KUBE_BIN_DIR": "kubelet"} {
		src := os.Getenv(env)
		if src == "" {
			continue
		}
		if env == "KUBE_BIN_DIR" {
			src = filepath.Join(src, "kubelet")
		}
		if linkOrCopyErr := linkOrCopy(src, filepath.Join(share, name)); linkOrCopyErr != nil {
			t.Fatalf("%s: %v", env, linkOrCopyErr)
		}
	}
	// The runtimes, the guest's only ones: make containerd-bins' static
	// containerd, shim, ctr and runc in /host/containerd; make crio-bins'
	// CRI-O in /host/crio (crio and copyimg link the guest's glibc and
	// libseccomp, Debian 12's as here; pinns is static).
	for _, rt := range []struct {
		env, dir, share, what string
		bins                  []string
	}{
		{containerdtest.BinDirEnv, containerdtest.DefaultBinDir(), "containerd", "containerd-bins", containerdtest.Binaries},
		{criotest.BinDirEnv, os.Getenv(criotest.BinDirEnv), "crio", "crio-bins", criotest.Binaries},
	} {
		if rt.dir == "" {
			machine.Need(t, fmt.Sprintf("%s unset (make %s): the guest has no %s", rt.env, rt.what, rt.share))
		}
		if mkdirErr := os.Mkdir(filepath.Join(share, rt.share), 0o755); mkdirErr != nil {
			t.Fatal(mkdirErr)
		}
		for _, b := range rt.bins {
			if linkOrCopyErr := linkOrCopy(filepath.Join(rt.dir, b), filepath.Join(share, rt.share, b)); linkOrCopyErr != nil {
				t.Fatalf("%s: %v", rt.env, linkOrCopyErr)
			}
		}
	}
	t.Logf("guest binaries built in %s", time.Since(t0).Round(100*time.Millisecond))
	run := os.Getenv("V2NODE_RUN")
	if run == "" {
		run = "^(TestV2|TestFieldNote2|TestFieldNote2CRIO|TestPodman)$" // not the unit tests the binary also holds
	}
	// The guest runs its binaries from a copy on its own disk, not from
	// the 9p share: every exec and page fault of a binary on 9p (no page
	// cache) is a round trip to the host, and containerd, its shims and runc
	// start again for each pod (TestV2 took 66 s from 9p, 26 s from the disk).
	script := fmt.Sprintf(`#!/bin/sh
set -e
mkdir -p /opt/host && cp -r /host/. /opt/host/
set +e
export VMNODE_GUEST=1 VMNODE_RESULTS=/results WORKLOAD_BIN=/opt/host/workload
export CADVISOR_BIN=/opt/host/cadvisorpeer KUBELET_BIN=/opt/host/kubelet CONTAINERD_BIN_DIR=/opt/host/containerd CRIO_BIN_DIR=/opt/host/crio CI=%q
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
mkswap /dev/vdc >/dev/null && swapon /dev/vdc || echo "v2node: no swap"
cd /tmp
/opt/host/v2guest.test -test.v=test2json -test.timeout=25m -test.run %q > /results/guest.out 2>&1
`, os.Getenv("CI"), run)
	if writeErr := os.WriteFile(filepath.Join(share, "run.sh"), []byte(script), 0o755); writeErr != nil { //nolint:gosec // G306: an executable
		t.Fatal(writeErr)
	}
	console, err := os.Create(filepath.Join(results, "console.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer console.Close()
	r := vmnode.Run(t, vmnode.Config{
		Assets: a, Share: share, Results: results, CPUs: 2, MemMiB: 4096,
		Disks:   []vmnode.Disk{{SizeMiB: 256}, {SizeMiB: 512}}, // vdb: block I/O, vdc: swap
		Timeout: 30 * time.Minute,
		Console: func(line string) { fmt.Fprintln(console, line) },
	})
	t.Logf("guest (%s): booted to its job in %s, job ran %s (guest uptime at the end %.1f s), run.sh exit %d",
		r.Accel, r.Boot.Round(100*time.Millisecond), r.Run.Round(100*time.Millisecond), r.GuestSecs, r.RC)
	if out := os.Getenv("V2NODE_OUT"); out != "" {
		if mkdirErr := os.MkdirAll(out, 0o755); mkdirErr == nil { //nolint:gosec // G703: a test: a path of the test's own (temp dir, repository, /proc, guest share), not input
			files, _ := filepath.Glob(filepath.Join(results, "*"))
			for _, f := range files {
				_ = linkOrCopy(f, filepath.Join(out, filepath.Base(f)))
			}
		}
	}

	raw, err := os.ReadFile(filepath.Join(results, "guest.out"))
	if err != nil {
		t.Fatalf("the guest wrote no test output (run.sh exit %d); console:\n%s", r.RC, tail(r.Console, 8000))
	}
	root := replayTree(t, raw)
	if len(root.children) == 0 {
		t.Fatalf("no guest test ran (run.sh exit %d); guest output:\n%s", r.RC, tail(string(raw), 8000))
	}
	for _, c := range root.children {
		c.replay(t)
	}
	if root.failed || r.RC != 0 {
		t.Errorf("the guest's test binary failed (exit %d)", r.RC)
		t.Logf("guest output outside any test:\n%s", root.output.String())
	}
	t.Run("Fixtures", func(t *testing.T) { checkFixtures(t, filepath.Join(results, "inventory.json")) })
	if root.failed || r.RC != 0 {
		// Last, so that a log's tail (CI keeps the end) has them: a
		// failed guest test's output ends with its kubelet's log.
		t.Logf("the guest's failures again:\n%s", tail(guestFailures(string(raw)), 6000))
	}
}

// guestFailures picks the failure reports out of the guest's test
// output: testify's blocks (Error Trace: to Test: and its Messages:)
// and the --- FAIL lines.
func guestFailures(raw string) string {
	var out []string
	in, afterTest := false, false
	for _, line := range strings.Split(raw, "\n") {
		switch {
		case strings.Contains(line, "Error Trace:"):
			in = true
		case in && strings.Contains(line, "Test:"):
			in, afterTest = false, true
			out = append(out, line)
			continue
		case afterTest && strings.Contains(line, "Messages:"):
			out = append(out, line)
		}
		afterTest = false
		if in || strings.Contains(line, "--- FAIL") {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

func gobuild(t *testing.T, args ...string) {
	t.Helper()
	goCmd := os.Getenv("GO")
	if goCmd == "" {
		goCmd = "go"
	}
	cmd := exec.Command(goCmd, args...) //nolint:gosec // G702: a test: the command line is the test's own
	if args[0] == "build" {
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0") // the workload runs in a busybox image
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

func linkOrCopy(src, dst string) error {
	if err := os.Link(src, dst); err == nil {
		return nil
	}
	in, err := os.Open(src) //nolint:gosec // G703: a test: a path of the test's own (temp dir, repository, /proc, guest share), not input
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, fi.Mode().Perm()) //nolint:gosec // G703: a test: a path of the test's own (temp dir, repository, /proc, guest share), not input
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// replayTree converts the guest binary's -test.v=test2json output with
// `go tool test2json` and builds the tree of its tests.
func replayTree(t *testing.T, raw []byte) *testNode {
	t.Helper()
	goCmd := os.Getenv("GO")
	if goCmd == "" {
		goCmd = "go"
	}
	cmd := exec.Command(goCmd, "tool", "test2json", "-t") //nolint:gosec // G702: a test: the command line is the test's own
	cmd.Stdin = bytes.NewReader(raw)
	js, err := cmd.Output()
	if err != nil {
		t.Fatalf("go tool test2json: %v", err)
	}
	return parseEvents(js)
}
