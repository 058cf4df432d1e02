// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build linux

package cgrouptest // import "github.com/containerstats/containerstatsreceiver/internal/testing/cgrouptest"

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/containerstats/containerstatsreceiver/internal/testing/machine"
)

// SetCPUQuota sets a CFS quota of quotaUs µs per periodUs µs on the
// container: cpu.max on v2, cpu.cfs_period_us and cpu.cfs_quota_us in the
// cpu hierarchy on v1 and hybrid machines. Only tests write to cgroupfs.
func (c *Container) SetCPUQuota(tb testing.TB, quotaUs, periodUs int) {
	tb.Helper()
	if V2() {
		if _, err := os.Stat(filepath.Join(c.Dir(""), "cpu.max")); err != nil {
			machine.Need(tb, "the cpu controller is not enabled for the test cgroup (cgroup.subtree_control of its parents)")
		}
		c.Write(tb, "", "cpu.max", strconv.Itoa(quotaUs)+" "+strconv.Itoa(periodUs))
		return
	}
	c.Write(tb, "cpu", "cpu.cfs_period_us", strconv.Itoa(periodUs))
	c.Write(tb, "cpu", "cpu.cfs_quota_us", strconv.Itoa(quotaUs))
}

// Threads lists the container's thread IDs from the kernel's own file
// (cgroup.threads on v2, tasks in the cpu hierarchy otherwise).
func (c *Container) Threads(tb testing.TB) []int {
	tb.Helper()
	p := filepath.Join(c.Dir("cpu"), "tasks")
	if V2() {
		p = filepath.Join(c.Dir(""), "cgroup.threads")
	}
	data, err := os.ReadFile(p)
	if err != nil {
		tb.Fatal(err)
	}
	var out []int
	for _, f := range strings.Fields(string(data)) {
		n, err := strconv.Atoi(f)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, n)
	}
	return out
}

// RunningThreads counts the container's threads in state R, independently
// of the receiver's reader (from /proc/<tid>/status).
func (c *Container) RunningThreads(tb testing.TB) int {
	tb.Helper()
	n := 0
	for _, tid := range c.Threads(tb) {
		data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(tid), "status"))
		if err != nil {
			continue // exited
		}
		for _, line := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(line, "State:") && strings.Contains(line, "R (running)") {
				n++
			}
		}
	}
	return n
}

// HasPSI reports whether the container's cgroup has pressure files (in the
// unified tree on hybrid machines).
func HasPSI(c *Container) bool {
	dir := c.Dir("unified")
	if V2() {
		dir = c.Dir("")
	}
	_, err := os.Stat(filepath.Join(dir, "cpu.pressure"))
	return err == nil
}

// CPUStat is the kernel's own CPU accounting of the container, read
// independently of the receiver's reader.
type CPUStat struct {
	Usage time.Duration // v1 cpuacct.usage, v2 cpu.stat usage_usec
	// User and System: v1 cpuacct.usage_user and usage_sys (tick-sampled:
	// their sum is near Usage, not equal), v2 user_usec and system_usec.
	User, System  time.Duration
	Periods       uint64        // cpu.stat nr_periods
	Throttled     uint64        // cpu.stat nr_throttled
	ThrottledTime time.Duration // v1 cpu.stat throttled_time (ns), v2 throttled_usec
}

// CPU reads the container's CPU accounting (v1: the cpuacct and cpu
// hierarchies; v2: cpu.stat).
func (c *Container) CPU(tb testing.TB) CPUStat {
	tb.Helper()
	var s CPUStat
	stat := filepath.Join(c.Dir("cpu"), "cpu.stat")
	if V2() {
		stat = filepath.Join(c.Dir(""), "cpu.stat")
	} else {
		s.Usage = time.Duration(readUint(tb, filepath.Join(c.Dir("cpuacct"), "cpuacct.usage")))
		s.User = time.Duration(readUint(tb, filepath.Join(c.Dir("cpuacct"), "cpuacct.usage_user")))
		s.System = time.Duration(readUint(tb, filepath.Join(c.Dir("cpuacct"), "cpuacct.usage_sys")))
	}
	data, err := os.ReadFile(stat)
	if err != nil {
		tb.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			tb.Fatalf("%s: %q: %v", stat, line, err)
		}
		switch k {
		case "usage_usec":
			s.Usage = time.Duration(n) * time.Microsecond
		case "user_usec":
			s.User = time.Duration(n) * time.Microsecond
		case "system_usec":
			s.System = time.Duration(n) * time.Microsecond
		case "nr_periods":
			s.Periods = n
		case "nr_throttled":
			s.Throttled = n
		case "throttled_time":
			s.ThrottledTime = time.Duration(n)
		case "throttled_usec":
			s.ThrottledTime = time.Duration(n) * time.Microsecond
		}
	}
	return s
}

// Waiting reports whether process pid is asleep waiting for its children:
// state S in a wait system call, as the shell of ModeSpin is once it has
// started its busy subshells (its wchan: do_wait for wait4, sigsuspend for
// a shell that waits for SIGCHLD). Until then the shell itself may be
// runnable (state R) between two forks.
func Waiting(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	s := string(stat)
	if i := strings.LastIndexByte(s, ')'); i < 0 || i+2 >= len(s) || s[i+2] != 'S' {
		return false
	}
	wchan, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "wchan"))
	if err != nil {
		return false
	}
	w := string(wchan)
	return strings.Contains(w, "wait") || strings.Contains(w, "sigsuspend")
}
