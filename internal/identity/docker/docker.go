// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

// Package docker resolves container identity through the Docker Engine
// API: dockerd's socket, and Podman's Docker-compatible service on its
// socket (rootful and rootless). docker's containers have no names, images
// or labels anywhere else (dockerd hands containerd only the OCI spec; its
// containers in containerd's "moby" namespace are bare IDs), and Podman's
// have no other API we read.
//
// One refresh is one GET /containers/json?all=1 (after one GET /_ping per
// connection, for the client's API-version negotiation); never a
// per-container inspect or a stats call. It uses the Engine API's own
// client module (github.com/moby/moby/client), which negotiates down to
// the daemon's API version (Docker 20.10 and Podman 4 serve 1.41).
package docker // import "github.com/containerstats/containerstatsreceiver/internal/identity/docker"

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/containerstats/containerstatsreceiver/internal/identity"
)

// Sockets are the Engine API's usual sockets relative to the host root, in
// the order detection lists them: dockerd's, then rootful Podman's
// (`podman system service`, podman.socket). Rootless Podman's
// run/user/<uid>/podman/podman.sock are found by RootlessGlob.
func Sockets() []string {
	return []string{
		"run/docker.sock",
		"var/run/docker.sock",
		"run/podman/podman.sock",
		"var/run/podman/podman.sock",
	}
}

// RootlessGlob matches rootless Podman's API sockets relative to the host
// root.
const RootlessGlob = "run/user/*/podman/podman.sock"

// Endpoints are the Engine API sockets to list: the configured ones
// (runtime.docker_endpoints) when set, else every socket of Sockets and
// RootlessGlob that exists under root as a unix socket, each file once
// (var/run is usually a link to run). nil when there is none.
func Endpoints(root string, configured []string) []string {
	if len(configured) > 0 {
		return configured
	}
	var out []string
	var seen []os.FileInfo
	add := func(p string) {
		fi, ok := identity.StatSocket(p)
		if !ok {
			return
		}
		if slices.ContainsFunc(seen, func(s os.FileInfo) bool { return os.SameFile(s, fi) }) {
			return
		}
		seen = append(seen, fi)
		out = append(out, p)
	}
	for _, s := range Sockets() {
		add(filepath.Join(root, s))
	}
	rootless, _ := filepath.Glob(filepath.Join(root, RootlessGlob)) // the pattern is valid: no error
	for _, p := range rootless {
		add(p)
	}
	return out
}

// Resolver lists the containers of one Engine API socket.
type Resolver struct {
	endpoint string
	allow    []string
	cli      *client.Client
}

// New prepares a client of the Engine API socket endpoint (a path or
// "unix://path"); nothing is dialed before the first List. Container
// labels whose keys are in labels are kept (container.label.<key>), the
// rest dropped.
func New(endpoint string, labels []string) (*Resolver, error) {
	path := strings.TrimPrefix(endpoint, "unix://")
	if !filepath.IsAbs(path) {
		return nil, fmt.Errorf("docker endpoint %q: must be an absolute unix socket path", endpoint)
	}
	cli, err := client.New(client.WithHost("unix://"+path),
		client.WithTraceProvider(noop.NewTracerProvider()))
	if err != nil {
		return nil, fmt.Errorf("docker endpoint %q: %w", endpoint, err)
	}
	return &Resolver{endpoint: path, allow: slices.Clone(labels), cli: cli}, nil
}

// Source is identity.SourceDocker.
func (*Resolver) Source() identity.Source { return identity.SourceDocker }

// Endpoint is the socket path.
func (r *Resolver) Endpoint() string { return r.endpoint }

// Close closes the client's idle connections.
func (r *Resolver) Close() error { return r.cli.Close() }

// List lists every container, exited ones included, in one call.
func (r *Resolver) List(ctx context.Context) (identity.Snapshot, error) {
	res, err := r.cli.ContainerList(ctx, client.ContainerListOptions{All: true})
	if err != nil {
		return identity.Snapshot{}, fmt.Errorf("docker API %s: GET /containers/json: %w", r.endpoint, err)
	}
	return snapshot(res.Items, r.allow), nil
}

// snapshot maps one listing: names without docker's leading "/", the image
// as the container was created from it (an image ID names nothing), the
// allowed labels, and the Kubernetes labels of containers cri-dockerd made.
func snapshot(items []container.Summary, allow []string) identity.Snapshot {
	var snap identity.Snapshot
	for i := range items {
		c := &items[i]
		l := c.Labels
		ct := identity.Container{
			ID:            c.ID,
			ContainerName: l[identity.LabelContainerName],
			PodUID:        l[identity.LabelPodUID],
			PodName:       l[identity.LabelPodName],
			Namespace:     l[identity.LabelPodNamespace],
			Sandbox:       l[identity.LabelDockerType] == "podsandbox",
			Labels:        identity.AllowedLabels(l, allow),
			Source:        identity.SourceDocker,
		}
		if len(c.Names) > 0 {
			ct.Name = strings.TrimPrefix(c.Names[0], "/")
		}
		switch c.State {
		case container.StateExited, container.StateDead, container.StateRemoving:
			ct.Exited = true
		}
		if c.Created > 0 {
			ct.StartTime = time.Unix(c.Created, 0).UTC()
		}
		ct.ImageName, ct.ImageTag = identity.SplitImage(c.Image)
		if ct.Sandbox {
			snap.SandboxIDs = append(snap.SandboxIDs, ct.ID)
		}
		snap.Containers = append(snap.Containers, ct)
	}
	return snap
}
