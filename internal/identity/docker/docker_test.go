// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package docker

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/containerstats/containerstatsreceiver/internal/identity"
)

func id64(c byte) string { return strings.Repeat(string(c), 64) }

// listing is a GET /containers/json?all=1 answer as dockerd 20.10 and
// Podman 4.3 write it: every field the mapping reads has a distinct value
// (the last has none of the optional ones).
var listing = `[
 {"Id":"` + id64('a') + `","Names":["/shop-web-1"],"Image":"nginx:1.27-alpine","ImageID":"sha256:` + id64('1') + `",
  "Created":1764460801,"State":"running","Status":"Up 2 minutes",
  "Labels":{"com.docker.compose.project":"shop","com.docker.compose.service":"web","com.docker.compose.version":"1.29.2","maintainer":"nginx"}},
 {"Id":"` + id64('b') + `","Names":["/batch"],"Image":"registry.local:5000/team/batch@sha256:` + id64('2') + `",
  "Created":1764460802,"State":"exited","Status":"Exited (3) 5 seconds ago","Labels":{"com.docker.compose.project":"jobs"}},
 {"Id":"` + id64('c') + `","Names":["/podman-db"],"Image":"localhost/db:15","Created":1764460803,"State":"running","Labels":null},
 {"Id":"` + id64('d') + `","Names":["/untagged"],"Image":"sha256:` + id64('3') + `","Created":1764460804,"State":"created","Labels":{}},
 {"Id":"` + id64('e') + `","Names":["/k8s_POD_api-0_prod_0f0e0d0c-0b0a-0908-0706-050403020100_0"],"Image":"registry.local/pause:3.10","Created":1764460805,"State":"running",
  "Labels":{"io.kubernetes.docker.type":"podsandbox","io.kubernetes.pod.name":"api-0","io.kubernetes.pod.namespace":"prod","io.kubernetes.pod.uid":"0f0e0d0c-0b0a-0908-0706-050403020100"}},
 {"Id":"` + id64('f') + `","Names":["/k8s_app_api-0_prod_0f0e0d0c-0b0a-0908-0706-050403020100_2"],"Image":"registry.local/api:7","Created":1764460806,"State":"dead",
  "Labels":{"io.kubernetes.docker.type":"container","io.kubernetes.pod.name":"api-0","io.kubernetes.pod.namespace":"prod","io.kubernetes.pod.uid":"0f0e0d0c-0b0a-0908-0706-050403020100","io.kubernetes.container.name":"app"}},
 {"Id":"` + id64('9') + `","Names":[],"Image":"busybox","Created":0,"State":"created","Labels":{}}
]`

// engine is a fake Engine API on a real unix socket.
type engine struct {
	mu      sync.Mutex
	version string // API version /_ping announces
	body    string // /containers/json answer
	hang    chan struct{}
	paths   []string // requests, "GET /v1.41/containers/json?all=1"
}

func (e *engine) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e.mu.Lock()
	e.paths = append(e.paths, r.Method+" "+r.URL.RequestURI())
	hang := e.hang
	e.mu.Unlock()
	if hang != nil {
		select {
		case <-hang:
		case <-r.Context().Done():
		}
		return
	}
	w.Header().Set("Api-Version", e.version)
	// dockerd refuses a request for a newer API version than its own.
	if v, _, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/v"), "/"); ok && strings.HasPrefix(r.URL.Path, "/v1.") && newer(v, e.version) {
		http.Error(w, `{"message":"client version `+v+` is too new. Maximum supported API version is `+e.version+`"}`, http.StatusBadRequest)
		return
	}
	switch {
	case strings.HasSuffix(r.URL.Path, "/_ping"):
		_, _ = w.Write([]byte("OK"))
	case strings.HasSuffix(r.URL.Path, "/containers/json"):
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(e.body))
	default:
		http.Error(w, "not served by the fake", http.StatusNotFound)
	}
}

// newer compares "1.x" API versions.
func newer(a, b string) bool {
	minor := func(v string) int {
		n, _ := strconv.Atoi(strings.TrimPrefix(v, "1."))
		return n
	}
	return minor(a) > minor(b)
}

func (e *engine) requests() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.paths...)
}

func serve(t *testing.T, e *engine) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "docker.sock")
	l, err := net.Listen("unix", sock)
	require.NoError(t, err)
	srv := &http.Server{Handler: e, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return sock
}

func TestList(t *testing.T) {
	e := &engine{version: "1.41", body: listing}
	r, err := New("unix://"+serve(t, e), []string{"com.docker.compose.project", "com.docker.compose.service", "absent.key"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close() })
	assert.Equal(t, identity.SourceDocker, r.Source())
	assert.Equal(t, "docker", r.Source().String())

	snap, err := r.List(context.Background())
	require.NoError(t, err)
	at := func(s int64) time.Time { return time.Unix(s, 0).UTC() }
	const uid = "0f0e0d0c-0b0a-0908-0706-050403020100"
	assert.Equal(t, []identity.Container{
		{
			ID: id64('a'), Name: "shop-web-1", ImageName: "nginx", ImageTag: "1.27-alpine", StartTime: at(1764460801),
			Labels: map[string]string{"com.docker.compose.project": "shop", "com.docker.compose.service": "web"}, Source: identity.SourceDocker,
		},
		{
			ID: id64('b'), Name: "batch", ImageName: "registry.local:5000/team/batch", StartTime: at(1764460802), Exited: true,
			Labels: map[string]string{"com.docker.compose.project": "jobs"}, Source: identity.SourceDocker,
		},
		{ID: id64('c'), Name: "podman-db", ImageName: "localhost/db", ImageTag: "15", StartTime: at(1764460803), Source: identity.SourceDocker},
		{ID: id64('d'), Name: "untagged", StartTime: at(1764460804), Source: identity.SourceDocker},
		{
			ID: id64('e'), Name: "k8s_POD_api-0_prod_" + uid + "_0", ImageName: "registry.local/pause", ImageTag: "3.10", StartTime: at(1764460805),
			PodUID: uid, PodName: "api-0", Namespace: "prod", Sandbox: true, Source: identity.SourceDocker,
		},
		{
			ID: id64('f'), Name: "k8s_app_api-0_prod_" + uid + "_2", ImageName: "registry.local/api", ImageTag: "7", StartTime: at(1764460806),
			ContainerName: "app", PodUID: uid, PodName: "api-0", Namespace: "prod", Exited: true, Source: identity.SourceDocker,
		},
		{ID: id64('9'), ImageName: "busybox", Source: identity.SourceDocker}, // no name, no creation time: none, not the epoch
	}, snap.Containers)
	assert.Equal(t, []string{id64('e')}, snap.SandboxIDs)

	// A second refresh is one list call: the API version was negotiated
	// once (one /_ping), never an inspect or a stats call.
	_, err = r.List(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []string{"HEAD /_ping", "GET /v1.41/containers/json?all=1", "GET /v1.41/containers/json?all=1"}, e.requests())
}

func TestListWithoutAllowList(t *testing.T) {
	r, err := New(serve(t, &engine{version: "1.41", body: listing}), nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close() })
	snap, err := r.List(context.Background())
	require.NoError(t, err)
	for _, c := range snap.Containers {
		assert.Nil(t, c.Labels, c.Name)
	}
}

func TestListFailures(t *testing.T) {
	t.Run("no socket", func(t *testing.T) {
		sock := filepath.Join(t.TempDir(), "docker.sock")
		r, err := New(sock, nil)
		require.NoError(t, err) // nothing is dialed before List
		_, err = r.List(context.Background())
		require.Error(t, err)
		assert.Contains(t, err.Error(), "docker API "+sock+": GET /containers/json")
	})
	t.Run("hangs", func(t *testing.T) {
		e := &engine{version: "1.41", hang: make(chan struct{})}
		t.Cleanup(func() { close(e.hang) })
		r, err := New(serve(t, e), nil)
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		t0 := time.Now()
		_, err = r.List(ctx)
		require.Error(t, err)
		assert.Less(t, time.Since(t0), 5*time.Second, "the caller's deadline bounds the call")
	})
	t.Run("malformed", func(t *testing.T) {
		r, err := New(serve(t, &engine{version: "1.41", body: `[{"Id":`}), nil)
		require.NoError(t, err)
		_, err = r.List(context.Background())
		require.Error(t, err)
		assert.Contains(t, err.Error(), "GET /containers/json")
	})
	t.Run("API too old", func(t *testing.T) {
		r, err := New(serve(t, &engine{version: "1.39", body: listing}), nil)
		require.NoError(t, err)
		_, err = r.List(context.Background())
		require.Error(t, err)
		assert.Contains(t, err.Error(), "Maximum supported API version is 1.39")
	})
	t.Run("relative endpoint", func(t *testing.T) {
		_, err := New("run/docker.sock", nil)
		require.EqualError(t, err, `docker endpoint "run/docker.sock": must be an absolute unix socket path`)
	})
}

func TestEndpoints(t *testing.T) {
	root := t.TempDir()
	listen := func(rel string) string {
		p := filepath.Join(root, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		l, err := net.Listen("unix", p)
		require.NoError(t, err)
		t.Cleanup(func() { _ = l.Close() })
		return p
	}
	assert.Nil(t, Endpoints(root, nil), "nothing under an empty root")

	docker := listen("run/docker.sock")
	// var/run links to run, as on most hosts: the same socket, listed once.
	require.NoError(t, os.MkdirAll(filepath.Join(root, "var"), 0o755))
	require.NoError(t, os.Symlink("../run", filepath.Join(root, "var/run")))
	// A regular file of a socket's name is no socket.
	require.NoError(t, os.MkdirAll(filepath.Join(root, "run/podman"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "run/podman/podman.sock"), nil, 0o600))
	u1000 := listen("run/user/1000/podman/podman.sock")
	u1001 := listen("run/user/1001/podman/podman.sock")
	assert.Equal(t, []string{docker, u1000, u1001}, Endpoints(root, nil))

	assert.Equal(t, []string{"/elsewhere/docker.sock"}, Endpoints(root, []string{"/elsewhere/docker.sock"}), "configured: as given, not probed")
}
