//go:build realmachine

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package integration

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/containerstats/containerstatsreceiver"
	"github.com/containerstats/containerstatsreceiver/internal/metadata"
	"github.com/containerstats/containerstatsreceiver/internal/testing/containerdtest"
	"github.com/containerstats/containerstatsreceiver/internal/testing/machine"
	"github.com/containerstats/containerstatsreceiver/receiver/logs"
	"github.com/containerstats/containerstatsreceiver/receiver/scrape"
)

// TestRealContainerdLogs runs a busy container on real containerd whose
// stdout goes to a kubelet-shaped /var/log/pods (under a temp host root: the
// test reads no one else's logs), scrapes its metrics and tails its logs,
// and requires the log records' resource to equal the metrics' resource
// for the same container.id, attribute for attribute.
func TestRealContainerdLogs(t *testing.T) {
	machine.Lock(t) // first: released after every cleanup below
	h := containerdtest.Start(t)
	h.LogRoot = t.TempDir()
	ctx := context.Background()
	pod := h.RunPod(t, "chatty-0", "logs-it", "burstable", map[string]string{"app": "chatty", "tier": "edge"})
	id := pod.StartContainerCmd(t, "talker", 1, []string{
		"/bin/sh", "-c",
		`i=0; while true; do echo "busy line $i"; echo "busy err $i" >&2; i=$((i+1)); sleep 0.05; done`,
	})

	set := receivertest.NewNopSettings(metadata.Type)
	rt := containerstatsreceiver.RuntimeConfig{
		CRIEnabled: true, CRIEndpoint: h.Socket,
		ContainerdEnabled: true, ContainerdEndpoint: "unix://" + h.Socket, ContainerdNamespaces: []string{containerdtest.Namespace},
		Timeout: time.Second, RefreshInterval: 200 * time.Millisecond, MinRefreshInterval: 50 * time.Millisecond,
	}
	cfg := defaultConfig()

	// Metrics: the real cgroup tree.
	host, ident := testNode("/", rt, nil, set.Logger)
	s := scrape.New(set, scrape.Options{
		Host: host, NodeName: "node-it", MetricsBuilderConfig: cfg.MetricsBuilderConfig,
		Identity: ident, PodLabels: true,
	})
	require.NoError(t, s.Start(ctx, componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, s.Shutdown(context.Background())) })
	m, err := s.Scrape(ctx)
	machine.RequireNoOwnErrors(t, err, pod.UID, pod.ID, id)
	rm, ok := findResource(m, "container.id", id)
	require.True(t, ok, "container %s has metrics", id)
	want := rm.Resource().Attributes().AsRaw()
	require.Equal(t, "chatty-0", want["k8s.pod.name"])
	require.Equal(t, "burstable", want["k8s.pod.qos_class"])

	// Logs: files under the temp host root, cgroups of the real node, the
	// same identity code.
	sink := new(consumertest.LogsSink)
	logHost, logIdent := testNode(h.LogRoot, rt, nil, set.Logger)
	r, err := logs.New(ctx, set, logs.Options{
		Host: logHost, NodeName: "node-it", ResourceAttributes: cfg.ResourceAttributes,
		Identity: logIdent,
		Cgroups:  host.Cgroups(), PodLabels: true,
		StartAt: "beginning", PollInterval: 20 * time.Millisecond,
	}, sink)
	require.NoError(t, err)
	require.NoError(t, r.Start(ctx, componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, r.Shutdown(context.Background())) })

	var got map[string]any
	streams := map[string]bool{}
	require.Eventually(t, func() bool {
		for _, ld := range sink.AllLogs() {
			eachRecord(ld, func(res map[string]any, lr plog.LogRecord) {
				if !strings.HasPrefix(lr.Body().Str(), "busy ") {
					return
				}
				got = res
				s, _ := lr.Attributes().Get("log.iostream")
				streams[s.Str()] = true
				p, _ := lr.Attributes().Get("log.file.path")
				assert.Equal(t, filepath.Join("/var/log/pods", "logs-it_chatty-0_"+pod.UID, "talker", "1.log"), p.Str())
			})
		}
		return got != nil && streams["stdout"] && streams["stderr"]
	}, 20*time.Second, 50*time.Millisecond, "busy container's stdout and stderr arrive")
	t.Logf("log resource (%d records so far): %v", sink.LogRecordCount(), got)
	assert.Equal(t, want, got, "log resource equals metrics resource")
	assert.Equal(t, id, got["container.id"])
	assert.Equal(t, pod.UID, got["k8s.pod.uid"])
}

func eachRecord(ld plog.Logs, f func(res map[string]any, lr plog.LogRecord)) {
	for i := 0; i < ld.ResourceLogs().Len(); i++ {
		rl := ld.ResourceLogs().At(i)
		res := rl.Resource().Attributes().AsRaw()
		for j := 0; j < rl.ScopeLogs().Len(); j++ {
			lrs := rl.ScopeLogs().At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				f(res, lrs.At(k))
			}
		}
	}
}
