// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

// Package cri is the receiver's client of a CRI runtime (k8s.io/cri-api
// runtime v1) over a unix socket: where the socket is (Endpoint, the one
// place it is detected), the connection (Dial), and what the receiver asks
// of it: container identity (Resolver, an identity.Resolver) and
// filesystem usage (FilesystemSource, an fsstats.Source). Only read-only
// RPCs are called: Version, ListPodSandbox, ListContainers and
// ContainerStatus (image names; exit statuses when Resolver.SetExitStatus
// is on) for identity; ListContainerStats and ImageFsInfo for
// filesystems.
package cri // import "github.com/containerstats/containerstatsreceiver/internal/cri"

import (
	"google.golang.org/grpc"

	"github.com/containerstats/containerstatsreceiver/internal/identity"
)

// Sockets are the usual CRI endpoints, relative to the host root, in the
// order auto-detection tries them: containerd's, CRI-O's and cri-dockerd's
// under run/ then var/run/, then k3s' containerd.
func Sockets() []string {
	var out []string
	for _, s := range []string{"containerd/containerd.sock", "crio/crio.sock", "cri-dockerd.sock"} {
		out = append(out, "run/"+s, "var/run/"+s)
	}
	return append(out, "run/k3s/containerd/containerd.sock")
}

// Endpoint is the CRI socket to use: configured (runtime.cri_endpoint)
// when set, else the first of Sockets that exists under root as a unix
// socket; "" when there is none. Identity and the filesystem collection
// both take their endpoint from it.
func Endpoint(root, configured string) string {
	return identity.SocketEndpoint(root, configured, Sockets())
}

// Client is one connection to a CRI runtime. Nothing is dialed until the
// first call, and a runtime that restarts is reconnected to
// (identity.DialUnix: backoff capped at identity.MaxReconnectDelay).
type Client struct {
	endpoint string
	conn     *grpc.ClientConn
}

// Dial prepares a client of the CRI socket at endpoint (a path or
// "unix://path").
func Dial(endpoint string) (*Client, error) {
	conn, path, err := identity.DialUnix("cri", endpoint)
	if err != nil {
		return nil, err
	}
	return &Client{endpoint: path, conn: conn}, nil
}

// Endpoint is the socket path.
func (c *Client) Endpoint() string { return c.endpoint }

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }
