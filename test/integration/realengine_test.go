//go:build realmachine

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package integration

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/containerstats/containerstatsreceiver"
	"github.com/containerstats/containerstatsreceiver/internal/metadata"
	"github.com/containerstats/containerstatsreceiver/internal/testing/dockertest"
	"github.com/containerstats/containerstatsreceiver/internal/testing/machine"
	"github.com/containerstats/containerstatsreceiver/internal/testing/podmantest"
	"github.com/containerstats/containerstatsreceiver/receiver/scrape"
)

// TestRealDocker: containers a real dockerd (Debian's 20.10, private,
// cgroupfs driver: /docker/<id>) runs, one of them from a real
// docker-compose project, are reported as standalone containers with the
// names, image and allowed labels the Engine API gives; `docker restart`
// keeps one series per container.
func TestRealDocker(t *testing.T) {
	machine.Lock(t)
	d := dockertest.Start(t)
	cs := d.Compose(t, "shop", dockertest.ShopCompose)
	require.Len(t, cs, 2, "the compose project's containers")
	solo := d.Run(t, "solo", map[string]string{"com.example.tier": "gold", "com.example.hidden": "x"}, "sleep", "600")
	own := []string{cs["web"].ID, cs["worker"].ID, solo.ID}

	set := receivertest.NewNopSettings(metadata.Type)
	host, ident := testNode("/", containerstatsreceiver.RuntimeConfig{
		DockerEnabled: true, DockerEndpoints: []string{d.Socket},
		Timeout: 2 * time.Second, RefreshInterval: time.Hour, MinRefreshInterval: 10 * time.Millisecond,
	}, []string{"com.docker.compose.project", "com.docker.compose.service", "com.example.team", "com.example.tier"}, set.Logger)
	s := scrape.New(set, scrape.Options{
		Host: host, NodeName: "docker-host", StandaloneContainers: true, MetricsBuilderConfig: metadata.NewDefaultMetricsBuilderConfig(),
		Identity: ident,
	})
	require.NoError(t, s.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, s.Shutdown(context.Background())) })
	scrapeOnce := func() pmetric.Metrics {
		t.Helper()
		m, err := s.Scrape(context.Background())
		machine.RequireNoOwnErrors(t, err, own...)
		return m
	}

	image := map[string]any{"container.image.name": "localhost/containerstats-dockertest", "container.image.tags": []any{"1"}}
	want := map[string]map[string]any{
		cs["web"].ID: {
			"container.name": "shop_web_1", "container.label.com.docker.compose.project": "shop",
			"container.label.com.docker.compose.service": "web", "container.label.com.example.team": "payments",
		},
		cs["worker"].ID: {
			"container.name": "shop_worker_1", "container.label.com.docker.compose.project": "shop",
			"container.label.com.docker.compose.service": "worker",
		},
		solo.ID: {"container.name": "solo", "container.label.com.example.tier": "gold"},
	}
	m := scrapeOnce()
	for id, attrs := range want {
		attrs["container.id"], attrs["container.runtime.name"], attrs["k8s.node.name"] = id, "docker", "docker-host"
		for k, v := range image {
			attrs[k] = v
		}
		rm, ok := findResource(m, "container.id", id)
		if assert.True(t, ok, "container %s reported: %v", id, containerIDs(m)) {
			assert.Equal(t, attrs, rm.Resource().Attributes().AsRaw())
		}
	}

	// docker restart: the same container ID in a new cgroup, whose
	// counters start again; docker's creation time stays the first run's.
	// The series goes on, one per container, starting again at the new
	// run's start (its process's, from /proc).
	before := time.Now()
	_, err := d.Docker(nil, "restart", "--time", "0", "solo")
	require.NoError(t, err)
	after := time.Now()
	restarted := d.Inspect(t, "solo")
	require.Equal(t, solo.ID, restarted.ID)
	require.NotEqual(t, solo.PID, restarted.PID, "a restart runs a new init process")
	m = scrapeOnce()
	n := 0
	for i := 0; i < m.ResourceMetrics().Len(); i++ {
		if v, ok := m.ResourceMetrics().At(i).Resource().Attributes().Get("container.id"); ok && v.Str() == solo.ID {
			n++
		}
	}
	assert.Equal(t, 1, n, "one series for the restarted container")
	rm, ok := findResource(m, "container.id", solo.ID)
	require.True(t, ok)
	ms := rm.ScopeMetrics().At(0).Metrics()
	sums := 0
	for i := 0; i < ms.Len(); i++ {
		if ms.At(i).Type() != pmetric.MetricTypeSum || !ms.At(i).Sum().IsMonotonic() {
			continue
		}
		for k := 0; k < ms.At(i).Sum().DataPoints().Len(); k++ {
			st := ms.At(i).Sum().DataPoints().At(k).StartTimestamp().AsTime()
			// /proc's start times are in clock ticks (10 ms) after a boot
			// time in whole seconds: up to a second early.
			assert.True(t, !st.Before(before.Add(-time.Second)) && !st.After(after), "%s starts at %v, the restart ran from %v to %v", ms.At(i).Name(), st, before, after)
			sums++
		}
	}
	assert.Positive(t, sums)
}

// TestRealPodmanAPI: a container rootful Podman (Debian's 4.3, cgroupfs
// manager: /libpod_parent/libpod-<id>) runs is named, with its image and
// allowed labels, through Podman's Docker-compatible API
// (`podman system service`), as dockerd's are.
func TestRealPodmanAPI(t *testing.T) {
	machine.Lock(t)
	pm := podmantest.New(t)
	sock := pm.Service(t)
	c := pm.RunLabelled(t, "containerstats-podman-api", map[string]string{"com.example.tier": "silver", "com.example.hidden": "y"}, "sleep", "600")

	set := receivertest.NewNopSettings(metadata.Type)
	host, ident := testNode("/", containerstatsreceiver.RuntimeConfig{
		DockerEnabled: true, DockerEndpoints: []string{"unix://" + sock},
		Timeout: 5 * time.Second, RefreshInterval: time.Hour, MinRefreshInterval: 10 * time.Millisecond,
	}, []string{"com.example.tier"}, set.Logger)
	s := scrape.New(set, scrape.Options{
		Host: host, NodeName: "podman-host", StandaloneContainers: true, MetricsBuilderConfig: metadata.NewDefaultMetricsBuilderConfig(),
		Identity: ident,
	})
	require.NoError(t, s.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, s.Shutdown(context.Background())) })
	m, err := s.Scrape(context.Background())
	machine.RequireNoOwnErrors(t, err, c.ID)
	rm, ok := findResource(m, "container.id", c.ID)
	require.True(t, ok, "the Podman container reported: %v", containerIDs(m))
	assert.Equal(t, map[string]any{
		"container.id": c.ID, "container.name": "containerstats-podman-api", "container.runtime.name": "podman",
		"container.image.name": "localhost/containerstats-podmantest", "container.image.tags": []any{"1"},
		"container.label.com.example.tier": "silver", "k8s.node.name": "podman-host",
	}, rm.Resource().Attributes().AsRaw())
}
