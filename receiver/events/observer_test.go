// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package events

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/containerstats/containerstatsreceiver/internal/cgroupfs"
	"github.com/containerstats/containerstatsreceiver/internal/containerevents"
	"github.com/containerstats/containerstatsreceiver/internal/identity"
	"github.com/containerstats/containerstatsreceiver/internal/metadata"
)

// The v2-systemd fixture's burstable pod and its containers a1 (oom_kill
// 2), b2 (7); d4 (0) is in another pod.
const (
	podA = "1a2b3c4d-0000-4000-8000-00000000000a"
	podC = "3c4d5e6f-0000-4000-8000-00000000000c"
	dirA = "sys/fs/cgroup/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1a2b3c4d_0000_4000_8000_00000000000a.slice"
	dirC = "sys/fs/cgroup/kubepods.slice/kubepods-pod3c4d5e6f_0000_4000_8000_00000000000c.slice"
)

var (
	idA1 = strings.Repeat("a1", 32)
	idB2 = strings.Repeat("b2", 32)
	idD4 = strings.Repeat("d4", 32)
)

// fakeIdentity names the fixture's containers; pending ones are new since
// the last listing; starts and stops are counted.
type fakeIdentity struct {
	ctrs          map[string]identity.Container
	pods          map[string]identity.Pod
	pending       map[string]bool
	list          []identity.Container
	starts, stops int
	prepared      []string
}

func (f *fakeIdentity) Start(context.Context) error    { f.starts++; return nil }
func (f *fakeIdentity) Shutdown(context.Context) error { f.stops++; return nil }
func (f *fakeIdentity) Prepare(_ context.Context, ids []string) {
	f.prepared = append([]string(nil), ids...)
}

func (f *fakeIdentity) Container(id, podUID string) (identity.Container, bool) {
	c, ok := f.ctrs[id]
	if !ok {
		return identity.Container{ID: id, PodUID: podUID, Source: identity.SourcePath}, false
	}
	return c, true
}
func (f *fakeIdentity) Pending(id string) bool { return f.pending[id] }
func (f *fakeIdentity) IsSandbox(string) bool  { return false }
func (f *fakeIdentity) Pod(uid string) (identity.Pod, bool) {
	p, ok := f.pods[uid]
	return p, ok
}
func (f *fakeIdentity) Instances() []identity.Container { return f.list }

type sink struct{ got []plog.Logs }

func (s *sink) Active() bool         { return true }
func (s *sink) Publish(ld plog.Logs) { s.got = append(s.got, ld) }

// records are the published records' container IDs and kill counts.
func (s *sink) records() map[string]int64 {
	out := map[string]int64{}
	for _, ld := range s.got {
		for i := 0; i < ld.ResourceLogs().Len(); i++ {
			rl := ld.ResourceLogs().At(i)
			id, _ := rl.Resource().Attributes().Get("container.id")
			lr := rl.ScopeLogs().At(0).LogRecords().At(0)
			n, _ := lr.Attributes().Get(containerevents.AttrOOMKillCount)
			out[id.Str()] = n.Int()
		}
	}
	s.got = nil
	return out
}

func setOOM(t *testing.T, root, dir, id string, kills int) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(root, dir, "cri-containerd-"+id+".scope", "memory.events"),
		[]byte(fmt.Sprintf("low 0\nhigh 0\nmax 3\noom 5\noom_kill %d\noom_group_kill 0\n", kills)), 0o644))
}

func observer(t *testing.T, id *fakeIdentity, mod func(*ObserverOptions)) (*Observer, *sink, string) {
	t.Helper()
	root := filepath.Join(t.TempDir(), "root")
	require.NoError(t, os.CopyFS(root, os.DirFS("../../testdata/fixtures/v2-systemd")))
	s := &sink{}
	o := ObserverOptions{
		Host: cgroupfs.NewHost(root), RootPath: root, Identity: id, Sink: s, PodLabels: true,
		Detector: containerevents.Config{NodeName: "node-obs", ResourceAttributes: metadata.DefaultResourceAttributesConfig(), ScopeVersion: "4.5.6"},
	}
	if mod != nil {
		mod(&o)
	}
	b := NewObserver(o)
	require.NoError(t, b.Start(context.Background()))
	t.Cleanup(func() { require.NoError(t, b.Shutdown(context.Background())) })
	return b, s, root
}

func fixtureIdentity() *fakeIdentity {
	return &fakeIdentity{
		ctrs: map[string]identity.Container{
			idA1: {ID: idA1, PodUID: podA, PodName: "web-0", Namespace: "shop", ContainerName: "nginx", Source: identity.SourceCRI},
			idB2: {ID: idB2, PodUID: podA, PodName: "web-0", Namespace: "shop", ContainerName: "sidecar", Source: identity.SourceCRI},
			idD4: {ID: idD4, PodUID: podC, PodName: "batch-1", Namespace: "jobs", ContainerName: "work", Source: identity.SourceCRI},
		},
		pods: map[string]identity.Pod{podA: {UID: podA, Labels: map[string]string{"app": "web"}}},
	}
}

// The logs-only case: the first observation is the baseline, an increase
// of a counter is one record with the container's resource (pod labels
// included), an unchanged counter none; the tree goes to Discovered; the
// identity is asked for the tree's containers and started and stopped.
func TestObserver(t *testing.T) {
	id := fixtureIdentity()
	var trees int
	b, s, root := observer(t, id, func(o *ObserverOptions) { o.Discovered = func(*cgroupfs.Tree) { trees++ } })
	require.Equal(t, 1, id.starts)
	ctx := context.Background()
	require.NoError(t, b.Observe(ctx))
	assert.Empty(t, s.records(), "baseline: a1 and b2 had kills before")
	assert.Subset(t, id.prepared, []string{idA1, idB2, idD4}, "the tree's containers")

	setOOM(t, root, dirA, idA1, 5) // 2 -> 5
	require.NoError(t, b.Observe(ctx))
	require.Len(t, s.got, 1)
	rl := s.got[0].ResourceLogs().At(0)
	assert.Equal(t, map[string]any{
		"container.id": idA1, "k8s.pod.uid": podA, "k8s.pod.name": "web-0", "k8s.namespace.name": "shop",
		"k8s.container.name": "nginx", "k8s.node.name": "node-obs", "k8s.pod.qos_class": "burstable",
		"container.runtime.name": "containerd", "k8s.pod.label.app": "web",
	}, rl.Resource().Attributes().AsRaw())
	assert.Equal(t, "4.5.6", rl.ScopeLogs().At(0).Scope().Version())
	assert.Equal(t, map[string]int64{idA1: 3}, s.records())

	require.NoError(t, b.Observe(ctx))
	assert.Empty(t, s.records(), "unchanged")
	assert.Equal(t, 3, trees)
	require.NoError(t, b.Shutdown(ctx))
	require.NoError(t, b.Shutdown(ctx), "twice")
	assert.Equal(t, 2, id.stops, "each Shutdown passes to the identity, which counts users itself")
}

// Containers the metrics scrape would not report give no event: one new
// since the runtime's last listing (until it is listed), one that
// exited.
func TestObserverSelects(t *testing.T) {
	id := fixtureIdentity()
	id.pending = map[string]bool{idB2: true}
	ex := id.ctrs[idD4]
	ex.Exited = true
	id.ctrs[idD4] = ex
	b, s, root := observer(t, id, nil)
	ctx := context.Background()
	require.NoError(t, b.Observe(ctx))
	setOOM(t, root, dirA, idB2, 9)
	setOOM(t, root, dirC, idD4, 4)
	setOOM(t, root, dirA, idA1, 3)
	require.NoError(t, b.Observe(ctx))
	assert.Equal(t, map[string]int64{idA1: 1}, s.records(), "b2 pending, d4 exited")

	// Listed now: its first read is its baseline (it was there at start),
	// the next increase an event.
	id.pending = nil
	require.NoError(t, b.Observe(ctx))
	assert.Empty(t, s.records())
	setOOM(t, root, dirA, idB2, 11)
	require.NoError(t, b.Observe(ctx))
	assert.Equal(t, map[string]int64{idB2: 2}, s.records())
}

// A malformed counter costs that container's events only: an error names
// the container and the file, the other containers' events go on.
func TestObserverMalformed(t *testing.T) {
	b, s, root := observer(t, fixtureIdentity(), nil)
	ctx := context.Background()
	require.NoError(t, b.Observe(ctx))
	require.NoError(t, os.WriteFile(filepath.Join(root, dirA, "cri-containerd-"+idA1+".scope", "memory.events"), []byte("oom_kill x\n"), 0o644))
	setOOM(t, root, dirA, idB2, 8) // 7 -> 8
	err := b.Observe(ctx)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "container "+idA1+": OOM kill events")
	assert.Contains(t, err.Error(), "memory.events")
	assert.Equal(t, map[string]int64{idB2: 1}, s.records())
}

// No cgroup tree under root_path: Start fails naming it; Observe before
// Start is an error, not a panic.
func TestObserverNoTree(t *testing.T) {
	root := t.TempDir()
	b := NewObserver(ObserverOptions{Host: cgroupfs.NewHost(root), RootPath: root, Identity: fixtureIdentity(), Sink: &sink{}, Now: func() time.Time { return time.Unix(7, 0) }})
	err := b.Start(context.Background())
	require.Error(t, err)
	assert.Contains(t, err.Error(), fmt.Sprintf("root_path %q", root))
	require.Error(t, b.Observe(context.Background()))
	require.NoError(t, b.Shutdown(context.Background()))
}
