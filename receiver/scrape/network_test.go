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
	require.NoError(t, os.WriteFile(filepath.Join(root, "proc/7301/net/dev"), []byte("garbage\n"), 0o644))
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
	for _, e := range []*bool{&m.K8sPodNetworkIo.Enabled, &m.K8sPodNetworkPackets.Enabled, &m.K8sPodNetworkErrors.Enabled, &m.K8sPodNetworkDropped.Enabled,
		&m.K8sNodeNetworkIo.Enabled, &m.K8sNodeNetworkPackets.Enabled, &m.K8sNodeNetworkErrors.Enabled, &m.K8sNodeNetworkDropped.Enabled,
		&m.ContainerPidsCount.Enabled, &m.ContainerPidsLimit.Enabled, &m.K8sPodPidsCount.Enabled, &m.K8sPodPidsLimit.Enabled} {
		*e = false
	}
	var opened []string
	s := New(newSettings(), Options{RootPath: root, NodeName: "n", MetricsBuilderConfig: mbc,
		TraceRead: func(p string) { opened = append(opened, p) }})
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
