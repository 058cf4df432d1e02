// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build linux && v2guest

package v2node

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/containerstats/containerstatsreceiver/internal/testing/containerdtest"
	"github.com/containerstats/containerstatsreceiver/internal/testing/machine"
	"github.com/containerstats/containerstatsreceiver/internal/testing/sidebyside"
	"github.com/containerstats/containerstatsreceiver/receiver/scrape"
)

// startCAdvisor runs tools/cadvisorpeer (cAdvisor v0.60.6 as the kubelet
// embeds it, housekeeping every 10 s) on the node's kubepods.slice with
// extra flags, and returns its /metrics URL and its log.
func startCAdvisor(t *testing.T, args ...string) (string, *bytes.Buffer) {
	t.Helper()
	bin := os.Getenv("CADVISOR_BIN")
	if _, err := os.Stat(bin); err != nil { //nolint:gosec // G703: a test: a path of the test's own (temp dir, repository, /proc, guest share), not input
		machine.Need(t, "no cAdvisor peer in the guest (make cadvisor-peer, CADVISOR_PEER_BIN): "+err.Error())
	}
	addr := filepath.Join(t.TempDir(), "addr")
	cmd := exec.Command(bin, append([]string{"-cgroup-roots", "/kubepods.slice", "-addr-file", addr}, args...)...) //nolint:gosec // G702: a test: the command line is the test's own
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	require.Eventually(t, func() bool { b, err := os.ReadFile(addr); return err == nil && len(b) > 0 }, 60*time.Second, 100*time.Millisecond,
		"cAdvisor never served: %s", &log)
	b, _ := os.ReadFile(addr)
	return "http://" + string(b) + "/metrics", &log
}

// expoValue is the value of the first sample of metric whose labels
// include every label=value of want in a Prometheus text exposition, and
// whether there is one.
func expoValue(expo, metric string, want map[string]string) (float64, bool) {
	for _, line := range strings.Split(expo, "\n") {
		if !strings.HasPrefix(line, metric+"{") && !strings.HasPrefix(line, metric+" ") {
			continue
		}
		labels, rest := "", line[len(metric):]
		if strings.HasPrefix(rest, "{") {
			end := strings.LastIndexByte(rest, '}')
			if end < 0 {
				continue
			}
			labels, rest = rest[1:end], rest[end+1:]
		}
		ok := true
		for k, v := range want {
			if !strings.Contains(","+labels+",", ","+k+"="+strconv.Quote(v)+",") {
				ok = false
			}
		}
		f := strings.Fields(rest)
		if !ok || len(f) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err == nil {
			return v, true
		}
	}
	return 0, false
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url) //nolint:gosec // G107: a test: the URL of a server the test started
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s: %s", url, b)
	return string(b)
}

// testFieldNote1: cAdvisor with its netlink load reader on (what
// --enable_load_reader does in cAdvisor's own binary) and our receiver on
// the same container with K busy threads, the kernel's running-thread
// count beside both, for 30 s. cAdvisor's reader cannot start on v2: it
// logs a warning and exports a load of 0 while its CPU usage for the
// container goes on, so the 0 looks like data. Ours rises towards K. A
// second container runs one thread: at the last sample each container's
// load is checked against its own running threads and fails the other's
// (sidebyside). The table goes to fieldnote1.md (docs/cpu.md quotes it).
func testFieldNote1(t *testing.T, n *node) {
	const k = 2
	c := n.run(t, "loadavg", "burstable", containerdtest.ContainerSpec{
		Command: shell(fmt.Sprintf("while [ ! -e /tmp/go ]; do sleep 1; done; exec /bin/workload spin threads=%d", k)),
	}, false)
	// A second container with one thread: ours of each must fail the
	// other's figure (sidebyside), so the load is the container's own.
	const k1 = 1
	c1 := n.run(t, "loadavg1", "burstable", containerdtest.ContainerSpec{
		Command: shell(fmt.Sprintf("while [ ! -e /tmp/go ]; do sleep 1; done; exec /bin/workload spin threads=%d", k1)),
	}, false)
	url, log := startCAdvisor(t, "-enable-load-reader")
	cgroup := strings.TrimPrefix(c.Dir, cgRoot)
	own := append(c.own(), c1.own()...)
	// Ours: a scraper whose first sample sees the shells asleep (load 0).
	// A shell wakes once a second to look for /tmp/go, and a sample taken
	// then rightly counts it running (a cold CI run's guest saw 1): start
	// from a fresh scraper until one sample saw both asleep, as
	// testTasksAndLoad does.
	var s *scrape.Scraper
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		s = newScraper(t, n.ids, allMetrics(), nil)
		m := scrapeOwn(t, s, own...)
		p, p1 := values(m, "container.id", c.ID), values(m, "container.id", c1.ID)
		if p["container.tasks/running"] == 0 && p1["container.tasks/running"] == 0 {
			require.Equal(t, 0.0, p["container.cpu.load_average.10s"], "the first sample of the waiting shell")
			require.Equal(t, 0.0, p1["container.cpu.load_average.10s"], "the first sample of the waiting shell")
			break
		}
		require.True(t, time.Now().Before(deadline), "no scrape saw the waiting shells with no running thread")
	}
	require.NoError(t, os.WriteFile(c.path(t, "/tmp/go"), nil, 0o600))
	require.NoError(t, os.WriteFile(c1.path(t, "/tmp/go"), nil, 0o600))
	require.Eventually(t, func() bool {
		th, r := kernelThreads(t, c.Dir)
		th1, r1 := kernelThreads(t, c1.Dir)
		return th == k+1 && c.shellWaiting(t) && r == k && th1 == k1+1 && c1.shellWaiting(t) && r1 == k1
	}, 60*time.Second, 50*time.Millisecond)
	start := time.Now()

	var table strings.Builder
	fmt.Fprintf(&table, "| time after start (s) | kernel: running threads | containerstats `container.cpu.load_average.10s` | cAdvisor `container_cpu_load_average_10s` | cAdvisor `container_cpu_usage_seconds_total` |\n|---:|---:|---:|---:|---:|\n")
	var ours, theirs []float64
	var load1 float64
	var running1 int
	var elapsed time.Duration
	for i := 0; i < 7; i++ {
		time.Sleep(5 * time.Second)
		m := scrapeOwn(t, s, own...)
		elapsed = time.Since(start)
		_, running := kernelThreads(t, c.Dir)
		_, running1 = kernelThreads(t, c1.Dir)
		load1 = values(m, "container.id", c1.ID)["container.cpu.load_average.10s"]
		load := values(m, "container.id", c.ID)["container.cpu.load_average.10s"]
		expo := get(t, url)
		cl, okLoad := expoValue(expo, "container_cpu_load_average_10s", map[string]string{"id": cgroup})
		cu, okCPU := expoValue(expo, "container_cpu_usage_seconds_total", map[string]string{"id": cgroup, "cpu": "total"})
		show := func(v float64, ok bool) string {
			if !ok {
				return "absent"
			}
			return strconv.FormatFloat(v, 'f', 3, 64)
		}
		fmt.Fprintf(&table, "| %.0f | %d | %.3f | %s | %s |\n", time.Since(start).Seconds(), running, load, show(cl, okLoad), show(cu, okCPU))
		ours = append(ours, load)
		if okLoad {
			theirs = append(theirs, cl)
		}
		assert.Equal(t, k, running, "the kernel: %d threads running", k)
		assert.Equal(t, k1, running1, "the kernel: %d thread running", k1)
		if i == 6 {
			assert.True(t, okCPU, "cAdvisor still reports the container's CPU")
		}
	}
	var warn string
	for _, line := range strings.Split(log.String(), "\n") {
		if strings.Contains(line, "load reader") && strings.Contains(line, cgroup) {
			warn = line
			break
		}
	}
	fmt.Fprintf(&table, "\ncAdvisor's log for the container (klog, at warning level):\n\n    %s\n", strings.TrimSpace(warn))
	writeResult(t, "fieldnote1.md", []byte(table.String()))
	t.Logf("field note 1 on the real v2 node:\n%s", table.String())

	// The last sample of each container against the kernel's running
	// threads: ours within 10 % of the count times 1 − e^(−t/10 s), t the
	// time since the threads ran (ours' load began earlier, while the
	// shells waited: up to e^(−t/10 s) of the count above).
	loadRow := func(entity string, ours float64, running int) sidebyside.Row {
		f := 1 - math.Exp(-elapsed.Seconds()/10)
		return sidebyside.Row{
			Quantity: "container.cpu.load_average.10s against the kernel's running threads", Entity: entity,
			Ref: float64(running), Tol: 0.1 * float64(running), Ours: ours,
			Pass: func(v float64) bool { return math.Abs(ours-v*f) <= 0.1*float64(running) },
		}
	}
	sidebyside.Require(t, fmt.Sprintf("field note 1, %.0f s after the threads started", elapsed.Seconds()), []sidebyside.Row{
		loadRow(fmt.Sprintf("loadavg (%d threads)", k), ours[len(ours)-1], k),
		loadRow(fmt.Sprintf("loadavg1 (%d thread)", k1), load1, running1),
	}, sidebyside.Options{Apart: 4, MinRows: 2})
	assert.Contains(t, warn, "Could not initialize cpu load reader", "cAdvisor warns that its reader cannot start")
	assert.Contains(t, warn, "cgroup v2", "and says why")
	require.NotEmpty(t, theirs, "cAdvisor exports the load series")
	for _, v := range theirs {
		assert.Equal(t, 0.0, v, "cAdvisor's load on v2: always 0")
	}
	assert.Greater(t, ours[len(ours)-1], 0.9*k, "ours approaches %d after 35 s (%.3f)", k, ours)
	for i := 1; i < len(ours); i++ {
		assert.Greater(t, ours[i], ours[i-1], "ours rises")
	}
}
