// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package cri

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/containerstats/containerstatsreceiver/internal/identity"
)

func id64(c byte) string { return strings.Repeat(string(c), 64) }

var (
	sbxWeb   = id64('1')
	ctrNginx = id64('2')
	ctrSide  = id64('3')
	ctrNew   = id64('4')
	created  = time.Date(2026, 11, 22, 5, 0, 0, 123456789, time.UTC)
)

func sandbox(id, uid, name, ns string, labels map[string]string) *runtimeapi.PodSandbox { //nolint:unparam // a sandbox reads whole at each call site: ID, pod UID, name, namespace
	l := map[string]string{identity.LabelPodName: name, identity.LabelPodNamespace: ns, identity.LabelPodUID: uid}
	for k, v := range labels {
		l[k] = v
	}
	return &runtimeapi.PodSandbox{
		Id: id, Metadata: &runtimeapi.PodSandboxMetadata{Name: name, Uid: uid, Namespace: ns, Attempt: 0},
		State: runtimeapi.PodSandboxState_SANDBOX_READY, CreatedAt: created.UnixNano(), Labels: l,
	}
}

func container(id, sbx, name, image string, attempt uint32, at time.Time, state runtimeapi.ContainerState) *runtimeapi.Container {
	return &runtimeapi.Container{
		Id: id, PodSandboxId: sbx, Metadata: &runtimeapi.ContainerMetadata{Name: name, Attempt: attempt},
		Image: &runtimeapi.ImageSpec{Image: image}, ImageRef: "sha256:" + id64('e'), State: state,
		CreatedAt: at.UnixNano(), Labels: map[string]string{identity.LabelContainerName: name},
	}
}

func newCache(t *testing.T, f *fakeCRI, timeout time.Duration) (*identity.Cache, *observer.ObservedLogs) {
	t.Helper()
	r, err := dialResolver(f.socket)
	require.NoError(t, err)
	core, logs := observer.New(zapcore.InfoLevel)
	now := time.Unix(1_800_000_000, 0)
	c := identity.NewCache(identity.CacheConfig{
		Resolvers: []identity.Resolver{r}, Timeout: timeout, MinRefresh: 5 * time.Second,
		Logger: zap.New(core), Now: func() time.Time { return now },
	})
	t.Cleanup(func() { _ = r.Close() })
	return c, logs
}

func webPod(f *fakeCRI) {
	f.set(func(f *fakeCRI) {
		f.sandboxes = []*runtimeapi.PodSandbox{sandbox(sbxWeb, "uid-web", "web-0", "shop", map[string]string{"app": "web", "tier": "front"})}
		f.containers = []*runtimeapi.Container{
			container(ctrNginx, sbxWeb, "nginx", "docker.io/library/nginx:1.27", 0, created.Add(time.Second), runtimeapi.ContainerState_CONTAINER_RUNNING),
			// Listed by image ID: the name comes from ContainerStatus.
			container(ctrSide, sbxWeb, "sidecar", "sha256:"+id64('f'), 2, created.Add(2*time.Second), runtimeapi.ContainerState_CONTAINER_RUNNING),
		}
		f.statusImg[ctrSide] = "registry:5000/team/sidecar:v3"
	})
}

func TestNormal(t *testing.T) {
	f := startFake(t)
	webPod(f)
	c, logs := newCache(t, f, time.Second)
	c.Refresh(context.Background())

	got, known := c.Container(ctrNginx, "uid-web")
	require.True(t, known)
	assert.Equal(t, identity.Container{
		ID: ctrNginx, Name: "nginx", ContainerName: "nginx", ImageName: "docker.io/library/nginx", ImageTag: "1.27",
		Runtime: "containerd", PodUID: "uid-web", PodName: "web-0", Namespace: "shop", SandboxID: sbxWeb,
		RestartCount: 0, HasRestart: true, StartTime: time.Unix(0, created.Add(time.Second).UnixNano()), Source: identity.SourceCRI,
	}, got)

	side, _ := c.Container(ctrSide, "uid-web")
	assert.Equal(t, "registry:5000/team/sidecar", side.ImageName)
	assert.Equal(t, "v3", side.ImageTag)
	assert.EqualValues(t, 2, side.RestartCount)

	p, ok := c.Pod("uid-web")
	require.True(t, ok)
	assert.Equal(t, map[string]string{"app": "web", "tier": "front"}, p.Labels)
	assert.True(t, c.IsSandbox(sbxWeb))
	assert.False(t, c.IsSandbox(ctrNginx))

	// Second refresh: the image name is cached, ContainerStatus is not called again.
	c.Refresh(context.Background())
	assert.EqualValues(t, 1, f.count("ContainerStatus"))
	assert.EqualValues(t, 1, f.count("Version"))
	assert.Equal(t, 1, logs.FilterMessage("Container runtime connected").Len())
	assert.Zero(t, logs.FilterLevelExact(zapcore.WarnLevel).Len())
}

func TestUnknownIDThenRefresh(t *testing.T) {
	f := startFake(t)
	webPod(f)
	c, _ := newCache(t, f, time.Second)
	ctx := context.Background()
	c.Prepare(ctx, []string{ctrNginx}) // nothing cached yet: refreshes
	require.EqualValues(t, 1, f.count("ListContainers"))
	c.Prepare(ctx, []string{ctrNginx, ctrSide}) // all known: no call
	require.EqualValues(t, 1, f.count("ListContainers"))

	f.set(func(f *fakeCRI) {
		f.containers = append(f.containers, container(ctrNew, sbxWeb, "worker", "docker.io/x/worker:7", 0, created.Add(time.Minute), runtimeapi.ContainerState_CONTAINER_RUNNING))
	})
	// Unknown ID but the last refresh is less than MinRefresh old (the
	// injected clock does not move): rate-limited, no call.
	c.Prepare(ctx, []string{ctrNew})
	require.EqualValues(t, 1, f.count("ListContainers"))
	_, known := c.Container(ctrNew, "uid-web")
	require.False(t, known)
}

func TestUnknownIDRefreshAfterRateLimit(t *testing.T) {
	f := startFake(t)
	webPod(f)
	r, err := dialResolver(f.socket)
	require.NoError(t, err)
	defer r.Close()
	now := time.Unix(1_800_000_000, 0)
	c := identity.NewCache(identity.CacheConfig{Resolvers: []identity.Resolver{r}, MinRefresh: 5 * time.Second, Now: func() time.Time { return now }})
	ctx := context.Background()
	c.Refresh(ctx)
	f.set(func(f *fakeCRI) {
		f.containers = append(f.containers, container(ctrNew, sbxWeb, "worker", "docker.io/x/worker:7", 0, created.Add(time.Minute), runtimeapi.ContainerState_CONTAINER_RUNNING))
	})
	now = now.Add(6 * time.Second)
	c.Prepare(ctx, []string{ctrNginx, ctrNew})
	got, known := c.Container(ctrNew, "")
	require.True(t, known)
	assert.Equal(t, "worker", got.ContainerName)
	assert.Equal(t, "web-0", got.PodName)
	assert.EqualValues(t, 2, f.count("ListContainers"))
}

func TestRestartIsNewIDWithAttempt(t *testing.T) {
	f := startFake(t)
	webPod(f)
	c, _ := newCache(t, f, time.Second)
	c.Refresh(context.Background())
	f.set(func(f *fakeCRI) {
		f.containers[0].State = runtimeapi.ContainerState_CONTAINER_EXITED
		f.containers = append(f.containers, container(ctrNew, sbxWeb, "nginx", "docker.io/library/nginx:1.27", 1, created.Add(time.Hour), runtimeapi.ContainerState_CONTAINER_CREATED))
	})
	c.Refresh(context.Background())
	nw, _ := c.Container(ctrNew, "uid-web")
	require.False(t, nw.Exited, "a created container (about to start) is not exited")
	f.set(func(f *fakeCRI) { f.containers[2].State = runtimeapi.ContainerState_CONTAINER_RUNNING })
	c.Refresh(context.Background())
	old, _ := c.Container(ctrNginx, "uid-web")
	assert.True(t, old.Exited)
	assert.Empty(t, old.ImageName, "exited containers are not looked up further")
	assert.False(t, old.ExitStatus, "exit statuses are read only when asked for (SetExitStatus)")
	nw, _ = c.Container(ctrNew, "uid-web")
	assert.False(t, nw.Exited)
	assert.Equal(t, "nginx", nw.ContainerName)
	assert.EqualValues(t, 1, nw.RestartCount)
	assert.Equal(t, created.Add(time.Hour).UnixNano(), nw.StartTime.UnixNano())
}

func TestRuntimeErrorKeepsCacheAndWarnsOnce(t *testing.T) {
	f := startFake(t)
	webPod(f)
	c, logs := newCache(t, f, time.Second)
	ctx := context.Background()
	c.Refresh(ctx)
	f.set(func(f *fakeCRI) { f.err = status.Error(codes.Unavailable, "runtime is restarting") })
	c.Refresh(ctx)
	c.Refresh(ctx)
	got, known := c.Container(ctrNginx, "uid-web")
	require.True(t, known, "the last good listing is kept")
	assert.Equal(t, "web-0", got.PodName)
	warns := logs.FilterLevelExact(zapcore.WarnLevel)
	require.Equal(t, 1, warns.Len(), "one warning per state change, not per refresh")
	assert.Contains(t, warns.All()[0].ContextMap()["error"], "runtime is restarting")

	f.set(func(f *fakeCRI) { f.err = nil })
	c.Refresh(ctx)
	assert.Equal(t, 1, logs.FilterMessage("Container runtime reachable again").Len())
	f.set(func(f *fakeCRI) { f.err = status.Error(codes.Internal, "boom") })
	c.Refresh(ctx)
	assert.Equal(t, 2, logs.FilterLevelExact(zapcore.WarnLevel).Len())
}

func TestSlowRuntimeHitsDeadline(t *testing.T) {
	f := startFake(t)
	webPod(f)
	f.set(func(f *fakeCRI) { f.delay = 5 * time.Second })
	c, logs := newCache(t, f, 200*time.Millisecond)
	start := time.Now()
	c.Refresh(context.Background())
	assert.Less(t, time.Since(start), 2*time.Second, "every call carries a deadline")
	_, known := c.Container(ctrNginx, "uid-web")
	assert.False(t, known)
	warns := logs.FilterLevelExact(zapcore.WarnLevel)
	require.Equal(t, 1, warns.Len())
	assert.Contains(t, warns.All()[0].ContextMap()["error"], "DeadlineExceeded")
}

func TestOddVersionStrings(t *testing.T) {
	for _, v := range []string{"dev", "", "1.7.20-k3s1"} {
		t.Run("version="+v, func(t *testing.T) {
			f := startFake(t)
			webPod(f)
			f.set(func(f *fakeCRI) { f.version = v })
			c, _ := newCache(t, f, time.Second)
			c.Refresh(context.Background())
			got, known := c.Container(ctrNginx, "uid-web")
			require.True(t, known)
			assert.Equal(t, "shop", got.Namespace)
			assert.Equal(t, "web-0", got.PodName)
			assert.Equal(t, "nginx", got.ContainerName)
			assert.Equal(t, "containerd", got.Runtime)
		})
	}
}

// dialResolver is a Resolver on a client of its own.
func dialResolver(endpoint string) (*Resolver, error) {
	c, err := Dial(endpoint)
	if err != nil {
		return nil, err
	}
	return NewResolver(c), nil
}

func TestNoSocket(t *testing.T) {
	r, err := dialResolver(filepath.Join(t.TempDir(), "absent.sock"))
	require.NoError(t, err, "connection is lazy")
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err = r.List(ctx)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "absent.sock")

	_, err = dialResolver("relative.sock")
	require.Error(t, err)
}

// TestEndpoint: the configured endpoint wins; else the first usual socket
// that exists under root as a unix socket; else none.
func TestEndpoint(t *testing.T) {
	assert.Equal(t, []string{
		"run/containerd/containerd.sock", "var/run/containerd/containerd.sock",
		"run/crio/crio.sock", "var/run/crio/crio.sock",
		"run/cri-dockerd.sock", "var/run/cri-dockerd.sock",
		"run/k3s/containerd/containerd.sock",
	}, Sockets(), "the order docs/identity.md gives")
	root := t.TempDir()
	assert.Empty(t, Endpoint(root, ""))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "run/crio"), 0o755))
	// A regular file named like a socket is not a socket.
	require.NoError(t, os.MkdirAll(filepath.Join(root, "run/containerd"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "run/containerd/containerd.sock"), nil, 0o600))
	l, err := net.Listen("unix", filepath.Join(root, "run/crio/crio.sock"))
	require.NoError(t, err)
	defer l.Close()
	assert.Equal(t, filepath.Join(root, "run/crio/crio.sock"), Endpoint(root, ""))
	assert.Equal(t, "/run/other.sock", Endpoint(root, "/run/other.sock"))
}

func TestRuntimeName(t *testing.T) {
	for in, want := range map[string]string{"containerd": "containerd", "cri-o": "cri-o", "docker": "docker", "": "", "Kata": "kata"} {
		assert.Equal(t, want, RuntimeName(in), in)
	}
}

// Sandbox IDs (CRI does not list them as containers) and IDs no runtime
// knows do not make every scrape call the runtime.
func TestPrepareSteadyState(t *testing.T) {
	f := startFake(t)
	webPod(f)
	r, err := dialResolver(f.socket)
	require.NoError(t, err)
	defer r.Close()
	now := time.Unix(1_800_000_000, 0)
	c := identity.NewCache(identity.CacheConfig{Resolvers: []identity.Resolver{r}, MinRefresh: 5 * time.Second, Now: func() time.Time { return now }})
	ctx := context.Background()
	stranger := id64('7') // a container cgroup no runtime knows
	c.Prepare(ctx, []string{sbxWeb, ctrNginx, ctrSide, stranger})
	require.EqualValues(t, 1, f.count("ListContainers"))
	for i := 0; i < 5; i++ {
		now = now.Add(time.Minute)
		c.Prepare(ctx, []string{sbxWeb, ctrNginx, ctrSide, stranger})
	}
	assert.EqualValues(t, 1, f.count("ListContainers"), "no call per scrape in steady state")
	// A new ID still triggers a refresh.
	c.Prepare(ctx, []string{sbxWeb, ctrNginx, ctrSide, stranger, ctrNew})
	assert.EqualValues(t, 2, f.count("ListContainers"))
}

// A ContainerStatus that fails is not swallowed: the listing stands, the
// cache logs the failure once at warn (naming the call and the container),
// and the image name is asked for again on the next refresh; once it is
// answered the cache says the listing is complete again.
func TestContainerStatusErrorIsLoggedAndRetried(t *testing.T) {
	f := startFake(t)
	webPod(f)
	f.set(func(f *fakeCRI) { delete(f.statusImg, ctrSide) }) // NotFound
	c, logs := newCache(t, f, time.Second)
	c.Refresh(context.Background())
	side, known := c.Container(ctrSide, "uid-web")
	require.True(t, known, "the listing stands")
	assert.Empty(t, side.ImageName)
	warn := logs.FilterMessageSnippet("listing is missing details").All()
	require.Len(t, warn, 1)
	assert.Contains(t, warn[0].ContextMap()["error"], "ContainerStatus "+ctrSide)
	assert.Contains(t, warn[0].ContextMap()["error"], "no such container")

	c.Refresh(context.Background())
	assert.EqualValues(t, 2, f.count("ContainerStatus"), "retried")
	assert.Len(t, logs.FilterMessageSnippet("listing is missing details").All(), 1, "logged once, not per refresh")

	f.set(func(f *fakeCRI) { f.statusImg[ctrSide] = "registry:5000/team/sidecar:v3" })
	c.Refresh(context.Background())
	side, _ = c.Container(ctrSide, "uid-web")
	assert.Equal(t, "registry:5000/team/sidecar", side.ImageName)
	assert.Equal(t, 1, logs.FilterMessageSnippet("listing is complete again").Len())
}

// An image name ContainerStatus does not give (an image ID only) is not
// cached: a later refresh that gets a name uses it.
func TestEmptyImageNameIsNotCached(t *testing.T) {
	f := startFake(t)
	webPod(f)
	f.set(func(f *fakeCRI) { f.statusImg[ctrSide] = "sha256:" + id64('f') })
	c, _ := newCache(t, f, time.Second)
	c.Refresh(context.Background())
	side, _ := c.Container(ctrSide, "uid-web")
	assert.Empty(t, side.ImageName)

	f.set(func(f *fakeCRI) { f.statusImg[ctrSide] = "registry:5000/team/sidecar:v4" })
	c.Refresh(context.Background())
	side, _ = c.Container(ctrSide, "uid-web")
	assert.Equal(t, "registry:5000/team/sidecar", side.ImageName)
	assert.Equal(t, "v4", side.ImageTag)
}

// The image-name map holds only the images of listed containers.
func TestImageMapIsPruned(t *testing.T) {
	f := startFake(t)
	webPod(f)
	r, err := dialResolver(f.socket)
	require.NoError(t, err)
	defer r.Close()
	_, err = r.List(context.Background())
	require.NoError(t, err)
	assert.Len(t, r.images, 1, "the sidecar's image, listed by ID")

	f.set(func(f *fakeCRI) { f.containers = f.containers[:1] }) // the sidecar is gone
	_, err = r.List(context.Background())
	require.NoError(t, err)
	assert.Empty(t, r.images)
}

// Two sandboxes of one pod (a sandbox restart): a newer NOTREADY sandbox
// never replaces an older READY one, in either listing order; between two
// of the same state the newer wins.
func TestReadySandboxWinsOverNewerNotReady(t *testing.T) {
	ready := sandbox(sbxWeb, "uid-web", "web-0", "shop", map[string]string{"sandbox": "ready"})
	stale := sandbox(id64('9'), "uid-web", "web-0", "shop", map[string]string{"sandbox": "notready-newer"})
	stale.State = runtimeapi.PodSandboxState_SANDBOX_NOTREADY
	stale.CreatedAt = created.Add(time.Hour).UnixNano()
	for name, list := range map[string][]*runtimeapi.PodSandbox{
		"ready first":    {ready, stale},
		"notready first": {stale, ready},
	} {
		t.Run(name, func(t *testing.T) {
			f := startFake(t)
			f.set(func(f *fakeCRI) { f.sandboxes = list })
			c, _ := newCache(t, f, time.Second)
			c.Refresh(context.Background())
			p, ok := c.Pod("uid-web")
			require.True(t, ok)
			assert.Equal(t, "ready", p.Labels["sandbox"])
		})
	}
	t.Run("two notready: the newer", func(t *testing.T) {
		old := sandbox(sbxWeb, "uid-web", "web-0", "shop", map[string]string{"sandbox": "old"})
		old.State = runtimeapi.PodSandboxState_SANDBOX_NOTREADY
		f := startFake(t)
		f.set(func(f *fakeCRI) { f.sandboxes = []*runtimeapi.PodSandbox{stale, old} })
		c, _ := newCache(t, f, time.Second)
		c.Refresh(context.Background())
		p, _ := c.Pod("uid-web")
		assert.Equal(t, "notready-newer", p.Labels["sandbox"])
	})
}

// exitCache is newCache with exit statuses on.
func exitCache(t *testing.T, f *fakeCRI) *identity.Cache {
	t.Helper()
	r, err := dialResolver(f.socket)
	require.NoError(t, err)
	r.SetExitStatus(true)
	t.Cleanup(func() { _ = r.Close() })
	now := time.Unix(1_800_000_000, 0)
	return identity.NewCache(identity.CacheConfig{
		Resolvers: []identity.Resolver{r}, Timeout: 5 * time.Second, MinRefresh: 5 * time.Second,
		Now: func() time.Time { return now },
	})
}

// With SetExitStatus, an exited container gets its exit code, reason,
// finish time and image from ContainerStatus, read once; running ones are
// not asked; a failed call is retried by the next listing.
func TestExitStatus(t *testing.T) {
	f := startFake(t)
	webPod(f)
	c := exitCache(t, f)
	c.Refresh(context.Background())
	calls := f.count("ContainerStatus") // the sidecar's image name
	finished := created.Add(90 * time.Second)
	f.set(func(f *fakeCRI) {
		f.containers[0].State = runtimeapi.ContainerState_CONTAINER_EXITED
		f.containers = append(f.containers, container(ctrNew, sbxWeb, "nginx", "docker.io/library/nginx:1.27", 1, created.Add(time.Hour), runtimeapi.ContainerState_CONTAINER_RUNNING))
		f.exits[ctrNginx] = &runtimeapi.ContainerStatus{
			Id: ctrNginx, State: runtimeapi.ContainerState_CONTAINER_EXITED, ExitCode: 137, Reason: "OOMKilled",
			FinishedAt: finished.UnixNano(), Image: &runtimeapi.ImageSpec{Image: "docker.io/library/nginx:1.27"},
		}
	})
	c.Refresh(context.Background())
	assert.Equal(t, calls+1, f.count("ContainerStatus"), "the exited container only")
	old, ok := c.Container(ctrNginx, "uid-web")
	require.True(t, ok)
	assert.True(t, old.Exited)
	assert.True(t, old.ExitStatus)
	assert.EqualValues(t, 137, old.ExitCode)
	assert.Equal(t, "OOMKilled", old.Reason)
	assert.Equal(t, finished.UnixNano(), old.FinishedAt.UnixNano())
	assert.Equal(t, "docker.io/library/nginx", old.ImageName)
	assert.Equal(t, "1.27", old.ImageTag)
	nw, _ := c.Container(ctrNew, "uid-web")
	assert.False(t, nw.ExitStatus)

	c.Refresh(context.Background())
	assert.Equal(t, calls+1, f.count("ContainerStatus"), "an exit status is read once")

	// Instances lists running and exited containers, not sandboxes.
	var ids []string
	for _, ct := range c.Instances() {
		ids = append(ids, ct.ID)
	}
	assert.ElementsMatch(t, []string{ctrNginx, ctrSide, ctrNew}, ids)

	// A failed ContainerStatus: no exit status, asked again next time.
	ctrGone := id64('5')
	f.set(func(f *fakeCRI) {
		f.containers = append(f.containers, container(ctrGone, sbxWeb, "job", "docker.io/library/busybox:1", 0, created, runtimeapi.ContainerState_CONTAINER_EXITED))
	})
	c.Refresh(context.Background())
	gone, _ := c.Container(ctrGone, "uid-web")
	assert.False(t, gone.ExitStatus)
	n := f.count("ContainerStatus")
	c.Refresh(context.Background())
	assert.Equal(t, n+1, f.count("ContainerStatus"))
}

// At most MaxExitStatusPerList exit statuses per listing, newest first.
func TestExitStatusBounded(t *testing.T) {
	f := startFake(t)
	c := exitCache(t, f)
	const n = MaxExitStatusPerList + 4
	f.set(func(f *fakeCRI) {
		f.sandboxes = []*runtimeapi.PodSandbox{sandbox(sbxWeb, "uid-web", "web-0", "shop", nil)}
		for i := 0; i < n; i++ {
			id := strings.Repeat(string(rune('a'+i)), 64)
			f.containers = append(f.containers, container(id, sbxWeb, "job", "docker.io/library/busybox:1", uint32(i), created.Add(time.Duration(i)*time.Minute), runtimeapi.ContainerState_CONTAINER_EXITED))
			f.exits[id] = &runtimeapi.ContainerStatus{Id: id, State: runtimeapi.ContainerState_CONTAINER_EXITED, ExitCode: int32(i)}
		}
	})
	c.Refresh(context.Background())
	assert.EqualValues(t, MaxExitStatusPerList, f.count("ContainerStatus"))
	newest, _ := c.Container(strings.Repeat(string(rune('a'+n-1)), 64), "uid-web")
	assert.True(t, newest.ExitStatus, "newest first")
	assert.EqualValues(t, n-1, newest.ExitCode)
	oldest, _ := c.Container(strings.Repeat("a", 64), "uid-web")
	assert.False(t, oldest.ExitStatus)
	c.Refresh(context.Background())
	assert.EqualValues(t, n, f.count("ContainerStatus"))
	oldest, _ = c.Container(strings.Repeat("a", 64), "uid-web")
	assert.True(t, oldest.ExitStatus)
	assert.EqualValues(t, 0, oldest.ExitCode)
}
