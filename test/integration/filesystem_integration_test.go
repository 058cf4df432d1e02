//go:build realmachine

// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package integration

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/receivertest"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/containerstats/containerstatsreceiver"
	"github.com/containerstats/containerstatsreceiver/internal/cri"
	"github.com/containerstats/containerstatsreceiver/internal/fsstats"
	"github.com/containerstats/containerstatsreceiver/internal/metadata"
	"github.com/containerstats/containerstatsreceiver/internal/testing/containerdtest"
	"github.com/containerstats/containerstatsreceiver/internal/testing/machine"
	"github.com/containerstats/containerstatsreceiver/receiver/scrape"
)

// TestRealFilesystem runs a container on real containerd (CRI measuring
// writable layers every second) and scrapes it with the receiver's
// background filesystem collection on its own CRI connection:
//   - the container writes 8 MiB into its writable layer (ExecSync, the
//     test's call): container.filesystem.usage grows by at least that;
//   - its log file's size, stat'ed by the test, equals
//     k8s.container.ephemeral_storage.usage{fs_type=logs}, and its
//     rootfs part equals container.filesystem.usage;
//   - the node filesystem equals the test's statfs (capacity and inodes
//     exactly; available and used within what other writers may change);
//   - the image filesystem is containerd's snapshotter directory, with its
//     usage from CRI and its capacity from statfs.
//
// The filesystem collection's root is a temp host root holding the pods'
// logs (the test reads no one else's) and a link to containerd's private
// directory, so the image filesystem's mountpoint resolves under it; the
// cgroups scraped are the real node's.
func TestRealFilesystem(t *testing.T) {
	machine.Lock(t) // first: released after every cleanup below
	h := containerdtest.Start(t)
	h.LogRoot = t.TempDir()
	ctrdBase := filepath.Dir(h.Socket)
	require.NoError(t, os.MkdirAll(filepath.Join(h.LogRoot, filepath.Dir(ctrdBase)), 0o755))
	require.NoError(t, os.Symlink(ctrdBase, filepath.Join(h.LogRoot, ctrdBase)))

	ctx := context.Background()
	pod := h.RunPod(t, "disk-0", "fs-it", "burstable", nil)
	id := pod.StartContainerCmd(t, "writer", 0, []string{"/bin/sh", "-c", "echo fs-it says hello; exec sleep 3600"})
	h.RequireRunning(t, id)
	own := []string{pod.UID, pod.ID, id}

	set := receivertest.NewNopSettings(metadata.Type)
	rt := containerstatsreceiver.RuntimeConfig{
		CRIEnabled: true, CRIEndpoint: h.Socket,
		Timeout: 5 * time.Second, RefreshInterval: 200 * time.Millisecond, MinRefreshInterval: 50 * time.Millisecond,
	}
	// The background collection as the factory configures it for root_path
	// h.LogRoot (its wiring is unit-tested in the root package's
	// filesystem_test.go): a CRI connection of its own to the endpoint the
	// host handle detected.
	fsHost, _ := testNode(h.LogRoot, rt, nil, set.Logger)
	fsc := fsstats.Config{
		Root: fsHost.Root(), Interval: 200 * time.Millisecond, Timeout: rt.Timeout, Logger: set.Logger,
		Connect: func() (fsstats.Source, error) {
			cl, err := cri.Dial(fsHost.Endpoints().CRI)
			if err != nil {
				return nil, err
			}
			return cri.NewFilesystemSource(cl), nil
		},
	}
	host, ident := testNode("/", rt, nil, set.Logger)
	s := scrape.New(set, scrape.Options{
		Host: host, NodeName: "node-it", MetricsBuilderConfig: defaultConfig().MetricsBuilderConfig,
		Identity: ident, Filesystem: fsstats.New(fsc),
	})
	require.NoError(t, s.Start(ctx, componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, s.Shutdown(context.Background())) })

	scrapeOwn := func() (pmetric.Metrics, pmetric.ResourceMetrics, bool) {
		m, err := s.Scrape(ctx)
		machine.RequireNoOwnErrors(t, err, own...)
		rm, ok := findResource(m, "container.id", id)
		return m, rm, ok
	}
	// waitGauge scrapes until the container's metric (its point with the
	// attributes want, key and value pairs) satisfies cond (bounded: a
	// loaded machine is slow, not wrong).
	waitGauge := func(name string, within time.Duration, cond func(v int64) bool, want ...string) int64 {
		t.Helper()
		var last int64
		var seen bool
		deadline := time.Now().Add(within)
		for time.Now().Before(deadline) {
			if _, rm, ok := scrapeOwn(); ok {
				if v, ok := intPoint(rm, name, want...); ok {
					last, seen = v, true
					if cond(v) {
						return v
					}
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("%s of container %s: condition not met within %s (last seen %d, present %v)", name, id, within, last, seen)
		return 0
	}

	// Writable layer: a baseline once containerd has measured it, then
	// 8 MiB written inside the container.
	before := waitGauge("container.filesystem.usage", 60*time.Second, func(int64) bool { return true })
	const written = 8 << 20
	ectx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	res, err := h.CRI().ExecSync(ectx, &runtimeapi.ExecSyncRequest{
		ContainerId: id, Timeout: 30,
		Cmd: []string{"/bin/sh", "-c", "dd if=/dev/zero of=/fs-it.bin bs=1048576 count=8 && sync"},
	})
	require.NoError(t, err)
	require.Zero(t, res.GetExitCode(), "dd: %s", res.GetStderr())
	after := waitGauge("container.filesystem.usage", 60*time.Second, func(v int64) bool { return v >= before+written })
	t.Logf("writable layer: %d B before, %d B after writing %d B: grew %d B", before, after, written, after-before)
	_, rm, ok := scrapeOwn()
	require.True(t, ok)
	inodes, ok := intPoint(rm, "container.filesystem.inode.used")
	require.True(t, ok, "writable layer inodes")
	assert.Positive(t, inodes)
	layer, ok := intPoint(rm, "container.filesystem.usage")
	require.True(t, ok)
	rootfs, ok := intPoint(rm, "k8s.container.ephemeral_storage.usage", "k8s.container.ephemeral_storage.fs_type", "rootfs")
	require.True(t, ok, "the ephemeral storage's rootfs part")
	assert.Equal(t, layer, rootfs, "the rootfs part is the writable layer")

	// Logs: the container's one log file, as the test stats it.
	logFile := filepath.Join(h.LogRoot, "var/log/pods", "fs-it_disk-0_"+pod.UID, "writer", "0.log")
	fi, err := os.Stat(logFile)
	require.NoError(t, err)
	require.Positive(t, fi.Size(), "containerd wrote the echo to %s", logFile)
	got := waitGauge("k8s.container.ephemeral_storage.usage", 30*time.Second, func(v int64) bool { return v == fi.Size() },
		"k8s.container.ephemeral_storage.fs_type", "logs")
	t.Logf("log file %s: %d B, k8s.container.ephemeral_storage.usage{logs} %d B", logFile, fi.Size(), got)

	// Node filesystem: <root>/var/lib/kubelet does not exist, so <root>.
	var want syscall.Statfs_t
	require.NoError(t, syscall.Statfs(h.LogRoot, &want))
	m, _, _ := scrapeOwn()
	node := nodeResource(t, m)
	unit := int64(want.Frsize) //nolint:unconvert // Frsize is int64 on amd64, int32 elsewhere
	for name, v := range map[string]int64{
		"k8s.node.filesystem.capacity":    int64(want.Blocks) * unit,
		"k8s.node.filesystem.inode.count": int64(want.Files),
		"k8s.node.filesystem.available":   int64(want.Bavail) * unit,
		"k8s.node.filesystem.usage":       int64(want.Blocks-want.Bfree) * unit,
		"k8s.node.filesystem.inode.free":  int64(want.Ffree),
	} {
		got, found := intPoint(node, name)
		require.True(t, found, name)
		switch name {
		case "k8s.node.filesystem.capacity", "k8s.node.filesystem.inode.count":
			assert.Equal(t, v, got, name)
		case "k8s.node.filesystem.inode.free":
			assert.InDelta(t, v, got, 10000, name) // other processes create and delete files
		default:
			assert.InDelta(t, v, got, 256<<20, name) // other processes write
		}
		t.Logf("%s: ours %d, test's statfs %d", name, got, v)
	}

	// Image filesystem: containerd's overlayfs snapshotter directory.
	mp := filepath.Join(ctrdBase, "root", "io.containerd.snapshotter.v1.overlayfs")
	used, ok := intPoint(node, "k8s.node.image_filesystem.usage", "system.filesystem.mountpoint", mp)
	require.True(t, ok, "image filesystem usage at %s", mp)
	assert.Positive(t, used)
	var img syscall.Statfs_t
	require.NoError(t, syscall.Statfs(mp, &img))
	capa, ok := intPoint(node, "k8s.node.image_filesystem.capacity", "system.filesystem.mountpoint", mp)
	require.True(t, ok)
	assert.Equal(t, int64(img.Blocks)*int64(img.Frsize), capa) //nolint:unconvert // Frsize is int64 on amd64, int32 elsewhere
	t.Logf("image filesystem %s: usage %d B (CRI), capacity %d B (statfs)", mp, used, capa)
}

// intPoint returns the first point of a gauge or up-down counter metric of
// rm whose attributes include want (key and value pairs).
func intPoint(rm pmetric.ResourceMetrics, name string, want ...string) (int64, bool) {
	sms := rm.ScopeMetrics()
	for i := 0; i < sms.Len(); i++ {
		ms := sms.At(i).Metrics()
		for j := 0; j < ms.Len(); j++ {
			var dps pmetric.NumberDataPointSlice
			switch m := ms.At(j); {
			case m.Name() != name:
				continue
			case m.Type() == pmetric.MetricTypeGauge:
				dps = m.Gauge().DataPoints()
			case m.Type() == pmetric.MetricTypeSum:
				dps = m.Sum().DataPoints()
			default:
				continue
			}
		points:
			for k := 0; k < dps.Len(); k++ {
				for a := 0; a+1 < len(want); a += 2 {
					if v, ok := dps.At(k).Attributes().Get(want[a]); !ok || v.Str() != want[a+1] {
						continue points
					}
				}
				return dps.At(k).IntValue(), true
			}
		}
	}
	return 0, false
}

// nodeResource is the node's resource: the one without container or pod
// (GPU devices nobody owns are on it too).
func nodeResource(t *testing.T, m pmetric.Metrics) pmetric.ResourceMetrics {
	t.Helper()
	for i := 0; i < m.ResourceMetrics().Len(); i++ {
		rm := m.ResourceMetrics().At(i)
		a := rm.Resource().Attributes()
		_, c := a.Get("container.id")
		_, p := a.Get("k8s.pod.uid")
		_, pn := a.Get("k8s.pod.name") // a GPU's owner known by its names only
		if !c && !p && !pn {
			return rm
		}
	}
	t.Fatal("no node resource")
	return pmetric.ResourceMetrics{}
}
