// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/scraper/scrapererror"
)

// A malformed net/dev costs that pod's network points only (a partial
// error naming the pod and the file); the pod keeps its other points and
// the other pod its network points. A pod whose process is gone (its
// /proc/<pid> missing) has no network points and no error.
func TestScrapeNetworkFaults(t *testing.T) {
	const (
		badPod  = "1a2b3c4d-0000-4000-8000-00000000000a" // process 7301 in the v2-systemd fixture
		goodPod = "2b3c4d5e-0000-4000-8000-00000000000b" // process 7300
	)
	root := copyFixture(t, "v2-systemd")
	require.NoError(t, os.WriteFile(filepath.Join(root, "proc/7301/net/dev"), []byte("garbage\n"), 0o600))
	s := newTestScraper(t, root, false, &fakeClock{now: t0})
	m, err := s.Scrape(context.Background())
	var pe scrapererror.PartialScrapeError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, 8, pe.Failed, "one interface: 4 metrics x 2 directions (the count of interfaces is unknown)")
	assert.Contains(t, err.Error(), "pod "+badPod)
	assert.Contains(t, err.Error(), filepath.Join("7301", "net", "dev"))
	bad := points(m, "k8s.pod.uid", badPod)
	assert.NotContains(t, bad, "k8s.pod.network.io/eth0/receive")
	assert.Contains(t, bad, "k8s.pod.memory.usage")
	assert.Contains(t, points(m, "k8s.pod.uid", goodPod), "k8s.pod.network.io/eth0/receive")

	require.NoError(t, os.RemoveAll(filepath.Join(root, "proc/7301")))
	m, err = s.Scrape(context.Background())
	require.NoError(t, err)
	assert.NotContains(t, points(m, "k8s.pod.uid", badPod), "k8s.pod.network.io/eth0/receive", "gone process: no data, not 0")
}

// Disabled network metrics open no net/dev and no cgroup.procs.
func TestNetworkReadOnlyWhenEnabled(t *testing.T) {
	root := copyFixture(t, "v2-systemd")
	mbc := defaultMBC()
	m := &mbc.Metrics
	for _, e := range []*bool{
		&m.K8sPodNetworkIo.Enabled, &m.K8sPodNetworkPacketCount.Enabled, &m.K8sPodNetworkErrors.Enabled, &m.K8sPodNetworkPacketDropped.Enabled,
		&m.K8sNodeNetworkIo.Enabled, &m.K8sNodeNetworkPacketCount.Enabled, &m.K8sNodeNetworkErrors.Enabled, &m.K8sNodeNetworkPacketDropped.Enabled,
		&m.ContainerPidsCount.Enabled, &m.ContainerPidsLimit.Enabled, &m.K8sPodPidsCount.Enabled, &m.K8sPodPidsLimit.Enabled,
	} {
		*e = false
	}
	var opened []string
	s := New(newSettings(), Options{
		Host: testHost(root), NodeName: "n", MetricsBuilderConfig: mbc,
		TraceRead: func(p string) { opened = append(opened, p) },
	})
	require.NoError(t, s.Start(context.Background(), nil))
	t.Cleanup(func() { require.NoError(t, s.Shutdown(context.Background())) })
	_, err := s.Scrape(context.Background())
	require.NoError(t, err)
	require.NotEmpty(t, opened)
	for _, p := range opened {
		for _, f := range []string{"net/dev", "cgroup.procs", "pids.current", "pids.max"} {
			assert.NotContains(t, p, f)
		}
	}
}

// A pod's network comes from a thread of its containers that the thread
// states' read listed a moment ago, without a second listing of the pod
// (its cgroup.procs is not opened); when that thread has no net/dev (gone),
// from a process of the pod as before.
func TestPodNetworkFromAContainerThread(t *testing.T) {
	const pod = "1a2b3c4d-0000-4000-8000-00000000000a" // container a1 lists threads 2101.., process 7301
	root := copyFixture(t, "v2-systemd")
	dev := "Inter-|   Receive |  Transmit\n face |bytes packets errs drop fifo frame compressed multicast|bytes packets errs drop fifo colls carrier compressed\n" +
		"  eth0: 9101 9102 9103 9104 9105 9106 9107 9108 9109 9110 9111 9112 9113 9114 9115 9116\n"
	require.NoError(t, os.MkdirAll(filepath.Join(root, "proc/2101/net"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "proc/2101/net/dev"), []byte(dev), 0o600))
	var opened []string
	s := New(newSettings(), Options{
		Host: testHost(root), NodeName: "n", MetricsBuilderConfig: defaultMBC(),
		TraceRead: func(p string) { opened = append(opened, p) },
	})
	require.NoError(t, s.Start(context.Background(), nil))
	t.Cleanup(func() { require.NoError(t, s.Shutdown(context.Background())) })
	m, err := s.Scrape(context.Background())
	require.NoError(t, err)
	p := points(m, "k8s.pod.uid", pod)
	assert.Equal(t, 9101.0, p["k8s.pod.network.io/eth0/receive"])
	assert.Equal(t, 9109.0, p["k8s.pod.network.io/eth0/transmit"])
	podDir := filepath.Join(root, "sys/fs/cgroup/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1a2b3c4d_0000_4000_8000_00000000000a.slice")
	assert.NotContains(t, opened, filepath.Join(podDir, "cgroup.procs"), "no second listing of the pod")

	// The thread is gone: the pod's process (7301) it is.
	require.NoError(t, os.RemoveAll(filepath.Join(root, "proc/2101/net")))
	m, err = s.Scrape(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 3020050.0, points(m, "k8s.pod.uid", pod)["k8s.pod.network.io/eth0/receive"])
}
