//go:build realmachine

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package containerdtest

import (
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/containerstats/containerstatsreceiver/internal/testing/machine"
)

// TestRestartWaitsForSlowShims: the cause of a container lost across a
// containerd restart under load. While containerd is down its shims are
// stopped (SIGSTOP: a shim that a loaded machine does not schedule), and
// they only answer again 7 s after containerd started. containerd 1.6's
// default gives a shim 5 s (io.containerd.timeout.shim.load), then takes it
// for dead and deletes its task, killing the container. The harness's
// [timeouts] give it 60 s: the container must survive.
func TestRestartWaitsForSlowShims(t *testing.T) {
	machine.Lock(t)
	h := Start(t)
	pod := h.RunPod(t, "slow-shim", "ops", "besteffort", nil)
	id := pod.StartContainer(t, "app", 0)
	h.RequireRunning(t, id)

	h.Stop(t)
	shims := shimsOf(h.Socket)
	if len(shims) == 0 {
		t.Fatal("no shim of this containerd found")
	}
	for _, sh := range shims {
		if err := syscall.Kill(sh.pid, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
	}
	resume := func() {
		for _, sh := range shims {
			_ = syscall.Kill(sh.pid, syscall.SIGCONT)
		}
	}
	t.Cleanup(resume) // before the harness's cleanup (registered earlier)
	restarted := time.Now()
	go func() {
		time.Sleep(7 * time.Second)
		resume()
	}()
	h.restartWithin(t, 90*time.Second)
	t.Logf("containerd answered %s after its restart", time.Since(restarted).Round(time.Millisecond))
	h.RequireRunning(t, id)
	for _, line := range strings.Split(h.log(), "\n") {
		if strings.Contains(line, "dead shim") || strings.Contains(line, "cleaning leaked shim") {
			t.Errorf("containerd cleaned up a shim: %s", line)
		}
	}
	if os.Getenv("CONTAINERDTEST_SHOW_LOG") != "" {
		t.Log(h.log())
	}
}
