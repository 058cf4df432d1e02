// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package logs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/plogtest"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/filter"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/containerstats/containerstatsreceiver/internal/cgroupfs"
	"github.com/containerstats/containerstatsreceiver/internal/identity"
	"github.com/containerstats/containerstatsreceiver/internal/metadata"
	"github.com/containerstats/containerstatsreceiver/internal/node"
)

const (
	fixtures = "../../testdata/fixtures/logs"
	goldens  = "../../testdata/golden/logs"

	shopUID    = "0a1b2c3d-1111-4a4a-8b8b-000000000001"
	billingUID = "0a1b2c3d-2222-4b4b-9c9c-000000000002"
	batchUID   = "0a1b2c3d-3333-4c4c-adad-000000000003"

	shopID    = "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"
	billingID = "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2"
	batchID   = "c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3"
	// an older attempt of shop's app: its file must not take this ID.
	shopOldID = "d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4"
)

// fakeRuntime is a CRI-like resolver that knows two of the four fixture
// containers (shop/app attempt 2, billing/server attempt 3).
type fakeRuntime struct{}

func (fakeRuntime) Source() identity.Source { return identity.SourceCRI }
func (fakeRuntime) Endpoint() string        { return "fake" }
func (fakeRuntime) Close() error            { return nil }
func (fakeRuntime) List(context.Context) (identity.Snapshot, error) {
	return identity.Snapshot{
		Containers: []identity.Container{
			{
				ID: shopID, Name: "app", ContainerName: "app", ImageName: "registry.example/shop/app", ImageTag: "3.1.4",
				Runtime: "containerd", PodUID: shopUID, PodName: "web-5d8f", Namespace: "shop",
				RestartCount: 2, HasRestart: true, Source: identity.SourceCRI,
			},
			{
				ID: shopOldID, Name: "app", ContainerName: "app", ImageName: "registry.example/shop/app", ImageTag: "3.1.3",
				Runtime: "containerd", PodUID: shopUID, PodName: "web-5d8f", Namespace: "shop",
				RestartCount: 1, HasRestart: true, Exited: true, Source: identity.SourceCRI,
			},
			{
				ID: billingID, Name: "server", ContainerName: "server", ImageName: "quay.example/billing/api", ImageTag: "2.7.18",
				Runtime: "cri-o", PodUID: billingUID, PodName: "api-7c6e", Namespace: "billing",
				RestartCount: 3, HasRestart: true, Source: identity.SourceCRI,
			},
		},
		Pods: []identity.Pod{
			{UID: shopUID, Name: "web-5d8f", Namespace: "shop", Labels: map[string]string{"app": "web", "tier": "front"}, Source: identity.SourceCRI},
			{UID: billingUID, Name: "api-7c6e", Namespace: "billing", Labels: map[string]string{"app": "billing"}, Source: identity.SourceCRI},
		},
	}, nil
}

// fakeCgroups gives the cgroup of the containers the "node" runs.
type fakeCgroups map[string]cgroupfs.Cgroup

func (f fakeCgroups) Cgroup(_ context.Context, id string) (cgroupfs.Cgroup, bool) {
	c, ok := f[id]
	return c, ok
}

var cgroups = fakeCgroups{
	shopID:    {ContainerID: shopID, PodUID: shopUID, QoS: "burstable", Runtime: "containerd", Kind: cgroupfs.KindContainer},
	billingID: {ContainerID: billingID, PodUID: billingUID, QoS: "guaranteed", Runtime: "crio", Kind: cgroupfs.KindContainer},
	batchID:   {ContainerID: batchID, PodUID: batchUID, QoS: "besteffort", Runtime: "docker", Kind: cgroupfs.KindContainer},
}

// hostRoot copies the fixture host tree into a temp dir and adds the
// /var/log/containers link the kubelet makes for batch/worker (the only
// way to its container ID: no runtime knows it). solo/sidecar has neither.
func hostRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	require.NoError(t, os.CopyFS(root, os.DirFS(fixtures)))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "var/log/containers"), 0o755))
	require.NoError(t, os.Symlink(
		"/var/log/pods/batch_job-9x_"+batchUID+"/worker/0.log",
		filepath.Join(root, "var/log/containers", "job-9x_batch_worker-"+batchID+".log")))
	return root
}

func newCache(root string) *identity.Cache {
	return identity.NewCache(identity.CacheConfig{
		Resolvers: []identity.Resolver{fakeRuntime{}},
		PodLogs:   identity.NewPodLogs(root),
	})
}

func testOptions(root string) Options {
	return Options{
		Host:               node.NewHost(node.HostConfig{Root: root}, nil),
		NodeName:           "node-logs-7",
		ResourceAttributes: metadata.DefaultResourceAttributesConfig(),
		Identity:           newCache(root),
		Cgroups:            cgroups,
		PodLabels:          true,
		StartAt:            "beginning",
		PollInterval:       10 * time.Millisecond,
	}
}

// run starts the receiver, waits for want records and stops it.
func run(t *testing.T, opts Options, want int, during func(sink *consumertest.LogsSink)) *consumertest.LogsSink {
	t.Helper()
	sink := new(consumertest.LogsSink)
	r, err := New(context.Background(), receivertest.NewNopSettings(metadata.Type), opts, sink)
	require.NoError(t, err)
	require.NoError(t, r.Start(context.Background(), componenttest.NewNopHost()))
	defer func() { require.NoError(t, r.Shutdown(context.Background())) }()
	if during != nil {
		during(sink)
	}
	require.Eventually(t, func() bool { return sink.LogRecordCount() >= want }, 10*time.Second, 10*time.Millisecond)
	time.Sleep(100 * time.Millisecond) // nothing more may arrive
	require.Equal(t, want, sink.LogRecordCount())
	return sink
}

// merged puts every batch's records under one ResourceLogs per resource.
func merged(sink *consumertest.LogsSink) plog.Logs {
	out := plog.NewLogs()
	byRes := map[string]plog.LogRecordSlice{}
	for _, ld := range sink.AllLogs() {
		for i := 0; i < ld.ResourceLogs().Len(); i++ {
			rl := ld.ResourceLogs().At(i)
			key := fmt.Sprint(sortedAttrs(rl.Resource().Attributes().AsRaw()))
			dst, ok := byRes[key]
			if !ok {
				nrl := out.ResourceLogs().AppendEmpty()
				rl.Resource().CopyTo(nrl.Resource())
				dst = nrl.ScopeLogs().AppendEmpty().LogRecords()
				byRes[key] = dst
			}
			for j := 0; j < rl.ScopeLogs().Len(); j++ {
				lrs := rl.ScopeLogs().At(j).LogRecords()
				for k := 0; k < lrs.Len(); k++ {
					lrs.At(k).CopyTo(dst.AppendEmpty())
				}
			}
		}
	}
	return out
}

func sortedAttrs(m map[string]any) []string {
	var out []string
	for k, v := range m {
		out = append(out, fmt.Sprintf("%s=%v", k, v))
	}
	sort.Strings(out)
	return out
}

func requireGolden(t *testing.T, name string, got plog.Logs) {
	t.Helper()
	path := filepath.Join(goldens, name)
	if os.Getenv("UPDATE_GOLDEN") != "" {
		require.NoError(t, golden.WriteLogsToFile(path, got))
	}
	want, err := golden.ReadLogs(path)
	require.NoError(t, err)
	require.NoError(t, plogtest.CompareLogs(want, got,
		plogtest.IgnoreObservedTimestamp(),
		plogtest.IgnoreResourceLogsOrder(),
		plogtest.IgnoreLogRecordsOrder()))
}

// TestFixtureFormats reads the four fixture files (containerd with partial
// lines, CRI-O, docker JSON, containerd of a container nobody names) and
// compares with the golden logs: runtime identity for two, the
// /var/log/containers link and /var/log/pods for the third, the path alone
// (no container.id) for the fourth.
func TestFixtureFormats(t *testing.T) {
	root := hostRoot(t)
	sink := run(t, testOptions(root), 4+3+3+2, nil)
	requireGolden(t, "formats.yaml", merged(sink))
}

// TestFilters drops by namespace and container name on the resolved
// identity.
func TestFilters(t *testing.T) {
	root := hostRoot(t)
	opts := testOptions(root)
	var err error
	opts.Filter.Namespaces, err = identity.CompileRules(nil, []filter.Config{{Strict: "billing"}})
	require.NoError(t, err)
	opts.Filter.Containers, err = identity.CompileRules(nil, []filter.Config{{Regex: "^side"}})
	require.NoError(t, err)
	sink := run(t, opts, 4+3, nil)
	got := map[string]bool{}
	for _, ld := range sink.AllLogs() {
		for i := 0; i < ld.ResourceLogs().Len(); i++ {
			v, _ := ld.ResourceLogs().At(i).Resource().Attributes().Get("k8s.namespace.name")
			got[v.Str()] = true
		}
	}
	require.Equal(t, map[string]bool{"shop": true, "batch": true}, got)
}

// TestRotation writes a containerd log, rotates it the way the kubelet
// does (rename to <n>.log.<date>, new <n>.log) after more lines went to the
// old file, and expects every line exactly once, with full identity.
func TestRotation(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "var/log/pods", "shop_web-5d8f_"+shopUID, "app")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	cur := filepath.Join(dir, "2.log")
	appendLines := func(p string, lines ...string) {
		f, err := os.OpenFile(p, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		require.NoError(t, err)
		_, err = f.WriteString(strings.Join(lines, "\n") + "\n")
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
	appendLines(cur,
		"2026-11-22T06:05:01.000000501Z stdout F rotation line one, long enough to fill a fingerprint of its own",
		"2026-11-22T06:05:02.000000502Z stderr F rotation line two")
	opts := testOptions(root)
	sink := run(t, opts, 6, func(sink *consumertest.LogsSink) {
		require.Eventually(t, func() bool { return sink.LogRecordCount() == 2 }, 10*time.Second, 10*time.Millisecond)
		appendLines(cur,
			"2026-11-22T06:05:03.000000503Z stdout P rotation partial three-a ",
			"2026-11-22T06:05:03.000000504Z stdout F rotation partial three-b")
		require.NoError(t, os.Rename(cur, cur+".20261122-060504"))
		appendLines(cur,
			"2026-11-22T06:05:05.000000505Z stdout F after rotation line four, long enough to fill a fingerprint too",
			"2026-11-22T06:05:06.000000506Z stdout P after rotation partial five-a ",
			"2026-11-22T06:05:06.000000507Z stdout F after rotation partial five-b")
		require.Eventually(t, func() bool { return sink.LogRecordCount() >= 5 }, 10*time.Second, 10*time.Millisecond)
		appendLines(cur, "2026-11-22T06:05:07.000000508Z stderr F after rotation line six")
	})
	requireGolden(t, "rotation.yaml", merged(sink))
}

// TestMalformedLine: a line in no known format is forwarded as it is (the
// parser's on_error "send") and still gets the container's identity; the
// lines after it parse.
func TestMalformedLine(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "var/log/pods", "shop_web-5d8f_"+shopUID, "app")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "2.log"), []byte(
		"garbage without a time stamp or stream\n"+
			"2026-11-22T06:07:01.000000701Z stdout F shop app after garbage\n"), 0o600))
	sink := run(t, testOptions(root), 2, nil)
	bodies := map[string]bool{}
	for _, ld := range sink.AllLogs() {
		for i := 0; i < ld.ResourceLogs().Len(); i++ {
			rl := ld.ResourceLogs().At(i)
			id, _ := rl.Resource().Attributes().Get("container.id")
			require.Equal(t, shopID, id.Str())
			lrs := rl.ScopeLogs().At(0).LogRecords()
			for j := 0; j < lrs.Len(); j++ {
				bodies[lrs.At(j).Body().Str()] = true
			}
		}
	}
	require.Equal(t, map[string]bool{"garbage without a time stamp or stream": true, "shop app after garbage": true}, bodies)
}

// New without a host handle fails: there is no fallback.
func TestNewNeedsHost(t *testing.T) {
	opts := testOptions(t.TempDir())
	opts.Host = nil
	_, err := New(context.Background(), receivertest.NewNopSettings(metadata.Type), opts, consumertest.NewNop())
	require.ErrorContains(t, err, "no host handle")
}
