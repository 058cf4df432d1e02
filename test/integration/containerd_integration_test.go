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
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/containerstats/containerstatsreceiver"
	"github.com/containerstats/containerstatsreceiver/internal/identity"
	"github.com/containerstats/containerstatsreceiver/internal/metadata"
	"github.com/containerstats/containerstatsreceiver/internal/testing/cgrouptest"
	"github.com/containerstats/containerstatsreceiver/internal/testing/containerdtest"
	"github.com/containerstats/containerstatsreceiver/internal/testing/machine"
	"github.com/containerstats/containerstatsreceiver/receiver/scrape"
)

// TestRealContainerdIdentity runs real containerd (CRI plugin, runc),
// creates pods and containers through CRI, and checks every identity
// attribute the receiver reports against what CRI says. Then containerd is
// stopped (identity stays, one warning per resolver) and restarted
// (reachable again). On both runtimes (containerdtest.Stacks): the
// current one (make containerd-bins) and Debian's containerd 1.6, so that
// the clients we ship keep working against the runtimes still deployed.
func TestRealContainerdIdentity(t *testing.T) {
	machine.Lock(t) // first: released after every cleanup below
	for _, st := range containerdtest.Stacks() {
		t.Run(st.Name, func(t *testing.T) { testRealContainerdIdentity(t, st) })
	}
}

func testRealContainerdIdentity(t *testing.T, st containerdtest.Stack) {
	began := time.Now()
	step := func(what string) { t.Logf("%6.2fs %s", time.Since(began).Seconds(), what) }
	h := containerdtest.StartWith(t, containerdtest.Options{BinDir: st.BinDir})
	t.Cleanup(func() { step("cleanup (runs after this)") })
	step("containerd started, image imported")
	ctx := context.Background()
	web := h.RunPod(t, "web-0", "shop", "burstable", map[string]string{"app": "web", "tier": "front"})
	nginx := web.StartContainer(t, "nginx", 0)
	side := web.StartContainer(t, "sidecar", 2)
	cron := h.RunPod(t, "cron-9", "ops", "besteffort", nil)
	batch := cron.StartContainer(t, "batch", 0)
	// This test's entities: a scrape error naming one of them fails it;
	// errors about other cgroups on the machine are not its business.
	own := []string{web.UID, web.ID, cron.UID, cron.ID, nginx, side, batch}

	step("pods and containers running")
	core, logs := observer.New(zapcore.InfoLevel)
	set := receivertest.NewNopSettings(metadata.Type)
	set.Logger = zap.New(core)
	rt := containerstatsreceiver.RuntimeConfig{
		CRIEnabled: true, CRIEndpoint: h.Socket,
		ContainerdEnabled: true, ContainerdEndpoint: "unix://" + h.Socket, ContainerdNamespaces: []string{containerdtest.Namespace},
		Timeout: time.Second, RefreshInterval: 200 * time.Millisecond, MinRefreshInterval: 50 * time.Millisecond,
	}
	host, ident := testNode("/", rt, nil, set.Logger)
	s := scrape.New(set, scrape.Options{
		Host: host, NodeName: "node-it", MetricsBuilderConfig: metadata.NewDefaultMetricsBuilderConfig(),
		Identity: ident, PodLabels: true,
	})
	require.NoError(t, s.Start(ctx, componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, s.Shutdown(context.Background())) })

	check := func(m pmetric.Metrics) {
		t.Helper()
		for _, id := range []string{nginx, side, batch} {
			st, err := h.CRI().ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id})
			require.NoError(t, err)
			cs := st.GetStatus()
			list, err := h.CRI().ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{Id: id}})
			require.NoError(t, err)
			require.Len(t, list.GetContainers(), 1)
			sandboxID := list.GetContainers()[0].GetPodSandboxId()
			ps, err := h.CRI().PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: sandboxID})
			require.NoError(t, err)
			pm := ps.GetStatus().GetMetadata()
			imgName, imgTag := identity.SplitImage(cs.GetImage().GetImage())
			require.NotEmpty(t, imgName)

			rm, ok := findResource(m, "container.id", id)
			require.True(t, ok, "container %s reported", id)
			want := map[string]any{
				"container.id":                id,
				"container.name":              cs.GetMetadata().GetName(),
				"container.image.name":        imgName,
				"container.image.tags":        []any{imgTag},
				"container.runtime.name":      "containerd",
				"k8s.container.name":          cs.GetMetadata().GetName(),
				"k8s.container.restart_count": int64(cs.GetMetadata().GetAttempt()),
				"k8s.pod.uid":                 pm.GetUid(),
				"k8s.pod.name":                pm.GetName(),
				"k8s.namespace.name":          pm.GetNamespace(),
				"k8s.pod.qos_class":           map[string]string{"web-0": "burstable", "cron-9": "besteffort"}[pm.GetName()],
				"k8s.node.name":               "node-it",
			}
			for k, v := range ps.GetStatus().GetLabels() {
				if k != identity.LabelPodName && k != identity.LabelPodNamespace && k != identity.LabelPodUID {
					want["k8s.pod.label."+k] = v
				}
			}
			assert.Equal(t, want, rm.Resource().Attributes().AsRaw())
			assertCumulativeStart(t, rm, pcommon.Timestamp(cs.GetCreatedAt()))
			assertUptime(t, rm, cs.GetCreatedAt())
			_, isSandbox := findResource(m, "container.id", sandboxID)
			assert.False(t, isSandbox, "sandbox %s excluded", sandboxID)
		}
	}

	m, err := s.Scrape(ctx)
	machine.RequireNoOwnErrors(t, err, own...)
	check(m)

	step("first scrape checked")
	// Restart: a new container ID with attempt+1; the old one is gone.
	web.StopContainer(t, nginx)
	nginx2 := web.StartContainer(t, "nginx", 1)
	own = append(own, nginx2)
	// A container new since the identity cache's last listing is left out
	// (pending) by a scrape that may not refresh (MinRefreshInterval since
	// the last refresh, or one under way): scrape until it is fetched.
	var rm pmetric.ResourceMetrics
	var ok bool
	for deadline := time.Now().Add(10 * time.Second); ; {
		m, err = s.Scrape(ctx)
		machine.RequireNoOwnErrors(t, err, own...)
		_, old := findResource(m, "container.id", nginx)
		assert.False(t, old, "exited container not reported")
		if rm, ok = findResource(m, "container.id", nginx2); ok || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	require.True(t, ok, "the restarted container %s was never reported", nginx2)
	rc, _ := rm.Resource().Attributes().Get("k8s.container.restart_count")
	assert.EqualValues(t, 1, rc.Int())
	nginx = nginx2
	check(m)

	// containerd down: scrapes go on with cached identity; one warning per
	// resolver, however many refreshes fail.
	step("restart checked")

	// containerd's own API alone (CRI off): names and image from the
	// labels, no restart count.
	rtCtrd := rt
	rtCtrd.CRIEnabled = false
	host2, ident2 := testNode("/", rtCtrd, nil, zap.NewNop())
	s2 := scrape.New(receivertest.NewNopSettings(metadata.Type), scrape.Options{
		Host: host2, NodeName: "node-it", MetricsBuilderConfig: metadata.NewDefaultMetricsBuilderConfig(),
		Identity: ident2,
	})
	require.NoError(t, s2.Start(ctx, componenttest.NewNopHost()))
	m, err = s2.Scrape(ctx)
	machine.RequireNoOwnErrors(t, err, own...)
	require.NoError(t, s2.Shutdown(ctx))
	rm, ok = findResource(m, "container.id", side)
	require.True(t, ok)
	assert.Equal(t, map[string]any{
		"container.id": side, "container.name": "sidecar", "container.image.name": "docker.io/containerstats/testbox", "container.image.tags": []any{"1.0"},
		"container.runtime.name": "containerd", "k8s.container.name": "sidecar", "k8s.pod.uid": web.UID, "k8s.pod.name": "web-0",
		"k8s.namespace.name": "shop", "k8s.pod.qos_class": "burstable", "k8s.node.name": "node-it",
	}, rm.Resource().Attributes().AsRaw())
	_, isSandbox := findResource(m, "container.id", web.ID)
	assert.False(t, isSandbox, "sandbox known from io.cri-containerd.kind")
	step("containerd API alone checked")

	h.Stop(t)
	step("containerd stopped")
	require.Eventually(t, func() bool { return logs.FilterLevelExact(zapcore.WarnLevel).Len() >= 2 }, 5*time.Second, 50*time.Millisecond)
	time.Sleep(600 * time.Millisecond) // three more failing refreshes
	// A container no runtime knows (a bare kubepods-shaped cgroup): path
	// identity only, never empty strings.
	bare := cgrouptest.NewContainer(t, "besteffort")
	own = append(own, bare.ID, bare.PodUID)
	for i := 0; i < 2; i++ {
		m, err = s.Scrape(ctx)
		machine.RequireNoOwnErrors(t, err, own...)
		rm, ok := findResource(m, "container.id", bare.ID)
		require.True(t, ok, "path-only container reported")
		assert.Equal(t, map[string]any{
			"container.id": bare.ID, "k8s.pod.uid": bare.PodUID, "k8s.pod.qos_class": "besteffort", "k8s.node.name": "node-it",
		}, rm.Resource().Attributes().AsRaw())
		check2 := func() {
			for _, id := range []string{nginx, side, batch} {
				rm, ok := findResource(m, "container.id", id)
				require.True(t, ok, "container %s reported while containerd is down (resources: %v)", id, containerIDs(m))
				n, _ := rm.Resource().Attributes().Get("k8s.pod.name")
				assert.NotEmpty(t, n.Str())
			}
		}
		check2()
	}
	// The identity's warnings (they name their resolver's source); the
	// system containers' detection may warn about this machine's own
	// processes (a containerd whose cpu and memory cgroups differ).
	warns := logs.FilterLevelExact(zapcore.WarnLevel).FilterFieldKey("source").All()
	require.Len(t, warns, 2, "one warning per resolver and state change")
	srcs := []string{warns[0].ContextMap()["source"].(string), warns[1].ContextMap()["source"].(string)}
	assert.ElementsMatch(t, []string{"cri", "containerd"}, srcs)

	// containerd back: reachable again, full identity.
	step("down scrapes checked")
	h.Restart(t)
	// containerd's CRI answers once it has reloaded its containers (their
	// shims reconnected); a loaded machine may take a while.
	require.Eventually(t, func() bool { return logs.FilterMessage("Container runtime reachable again").Len() >= 2 }, 60*time.Second, 50*time.Millisecond)
	step("containerd reachable again")
	// The containers survived the restart, by CRI's own word: a container
	// the runtime lost is containerd's doing, named here, not the
	// receiver's (see containerdtest's [timeouts]).
	h.RequireRunning(t, nginx, side, batch)
	m, err = s.Scrape(ctx)
	machine.RequireNoOwnErrors(t, err, own...)
	check(m)
	// A container created after the restart: fresh listings work. Its
	// first scrape asks the runtimes at once (bounded by the 1 s timeout);
	// on a loaded machine the answer may come a refresh or two later, so
	// wait for the condition, bounded, rather than for one scrape.
	worker := cron.StartContainer(t, "worker", 0)
	own = append(own, worker)
	h.RequireRunning(t, worker)
	var attrs map[string]any
	require.Eventually(t, func() bool {
		m, err = s.Scrape(ctx)
		machine.RequireNoOwnErrors(t, err, own...)
		rm, ok := findResource(m, "container.id", worker)
		if !ok {
			return false
		}
		attrs = rm.Resource().Attributes().AsRaw()
		return attrs["k8s.container.name"] != nil
	}, 10*time.Second, 100*time.Millisecond, "container %s created after the restart reported with its identity (last scrape: %v, its attributes %v)", worker, containerIDs(m), attrs)
	assert.Equal(t, "worker", attrs["k8s.container.name"])
	assert.Equal(t, "ops", attrs["k8s.namespace.name"])
	// Each resolver logged each change of state once: connected, down, up
	// (a containerd still busy after its restart may time out once more:
	// a change too, logged once, never the same state twice in a row).
	for src, seq := range stateLogs(logs) {
		require.GreaterOrEqual(t, len(seq), 3, "%s: %v", src, seq)
		assert.Equal(t, []string{"connected", "down", "up"}, seq[:3], src)
		for i := 3; i < len(seq); i++ {
			assert.NotEqual(t, seq[i-1], seq[i], "%s logged the same state twice in a row: %v", src, seq)
		}
	}
	step("identity after restart checked")
}

func findResource(m pmetric.Metrics, key, val string) (pmetric.ResourceMetrics, bool) { //nolint:unparam // each call site names the attribute it matches
	for i := 0; i < m.ResourceMetrics().Len(); i++ {
		rm := m.ResourceMetrics().At(i)
		if v, ok := rm.Resource().Attributes().Get(key); ok && v.Str() == val {
			return rm, true
		}
	}
	return pmetric.ResourceMetrics{}, false
}

func assertCumulativeStart(t *testing.T, rm pmetric.ResourceMetrics, want pcommon.Timestamp) {
	t.Helper()
	n := 0
	for i := 0; i < rm.ScopeMetrics().Len(); i++ {
		ms := rm.ScopeMetrics().At(i).Metrics()
		for j := 0; j < ms.Len(); j++ {
			if ms.At(j).Type() != pmetric.MetricTypeSum {
				continue
			}
			for k := 0; k < ms.At(j).Sum().DataPoints().Len(); k++ {
				assert.Equal(t, want, ms.At(j).Sum().DataPoints().At(k).StartTimestamp(), ms.At(j).Name())
				n++
			}
		}
	}
	assert.NotZero(t, n)
}

// containerIDs lists the container IDs a scrape reported, for failure
// messages.
func containerIDs(m pmetric.Metrics) []string {
	var ids []string
	for i := 0; i < m.ResourceMetrics().Len(); i++ {
		if v, ok := m.ResourceMetrics().At(i).Resource().Attributes().Get("container.id"); ok {
			ids = append(ids, v.Str()[:12])
		}
	}
	return ids
}

// assertUptime: container.uptime is the whole seconds (a double) between
// the runtime's creation time (CRI CreatedAt, ns) and the point's
// timestamp, and the container's pids.count is at least its one process.
func assertUptime(t *testing.T, rm pmetric.ResourceMetrics, createdNs int64) {
	t.Helper()
	var up, pids pmetric.NumberDataPointSlice
	ms := rm.ScopeMetrics().At(0).Metrics()
	for i := 0; i < ms.Len(); i++ {
		switch ms.At(i).Name() {
		case "container.uptime":
			up = ms.At(i).Gauge().DataPoints()
		case "container.pids.count":
			pids = ms.At(i).Gauge().DataPoints()
		}
	}
	if assert.Equal(t, 1, up.Len(), "container.uptime reported") {
		dp := up.At(0)
		assert.Equal(t, float64((int64(dp.Timestamp())-createdNs)/1e9), dp.DoubleValue())
	}
	if assert.Equal(t, 1, pids.Len(), "container.pids.count reported") {
		assert.GreaterOrEqual(t, pids.At(0).IntValue(), int64(1))
	}
}
