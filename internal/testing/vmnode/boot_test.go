// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build linux && vmnode

package vmnode

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/containerstats/containerstatsreceiver/internal/testing/machine"
)

// prepare takes the machine lock and returns the guest, built or from the
// cache.
func prepare(t *testing.T) *Assets {
	t.Helper()
	machine.Lock(t) // before the build: the leftover check waits for it
	machine.Need(t, Available())
	a, err := Prepare(CacheDir(), t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestPrepareGuest builds the guest, or finds it in the cache, and boots
// nothing: make test runs it in the background (make v2guest-image) while
// other steps compile, so that TestBoot and TestV2Node find it built (a
// cold build is mostly apt and dpkg: 1m36s of a cold CI run's v2-test).
func TestPrepareGuest(t *testing.T) {
	a := prepare(t)
	for _, f := range []string{a.Kernel, a.Initrd, a.Rootfs} {
		if fi, err := os.Stat(f); err != nil || fi.Size() == 0 {
			t.Errorf("guest file %s: %v (empty: %v)", f, err, err == nil)
		}
	}
	t.Logf("guest %s: kernel %s, built now: %v (%s)", a.Dir, a.KernelVersion, a.Built, a.BuildTime.Round(time.Second))
}

// TestBoot boots the guest and checks what the v2 tests rely on: systemd
// as PID 1 on a pure cgroup v2 tree with every controller, the 9p shares
// both ways, an extra disk.
func TestBoot(t *testing.T) {
	a := prepare(t)
	share, results := t.TempDir(), t.TempDir()
	script := `#!/bin/sh
set -e
cat /sys/fs/cgroup/cgroup.controllers > /results/controllers
stat -fc %T /sys/fs/cgroup > /results/cgroupfs
readlink /proc/1/exe > /results/init
cat /proc/pressure/cpu > /results/psi
test -b /dev/vdb && echo vdb > /results/disk
uname -r > /results/uname
`
	if err := os.WriteFile(filepath.Join(share, "run.sh"), []byte(script), 0o755); err != nil { //nolint:gosec // G306: an executable
		t.Fatal(err)
	}
	r := Run(t, Config{Assets: a, Share: share, Results: results, Disks: []Disk{{SizeMiB: 64}}})
	t.Logf("accel %s: boot %s, job %s", r.Accel, r.Boot, r.Run)
	if r.RC != 0 {
		t.Fatalf("run.sh: exit %d; console:\n%s", r.RC, r.Console)
	}
	read := func(f string) string {
		b, err := os.ReadFile(filepath.Join(results, f))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}
	for _, c := range []string{"cpu", "memory", "io", "pids", "hugetlb", "cpuset"} {
		if !strings.Contains(" "+read("controllers")+" ", " "+c+" ") {
			t.Errorf("controller %s missing: %q", c, read("controllers"))
		}
	}
	if got := read("cgroupfs"); got != "cgroup2fs" {
		t.Errorf("/sys/fs/cgroup is %s, want cgroup2fs", got)
	}
	if got := read("init"); !strings.Contains(got, "systemd") {
		t.Errorf("PID 1 is %s, want systemd", got)
	}
	if got := read("uname"); got != a.KernelVersion {
		t.Errorf("guest kernel %s, built %s", got, a.KernelVersion)
	}
	if read("disk") != "vdb" {
		t.Error("no /dev/vdb")
	}
}
