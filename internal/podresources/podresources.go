// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

// Package podresources is a read-only client of the kubelet pod-resources
// API (k8s.io/kubelet/pkg/apis/podresources/v1): which devices the kubelet
// allocated to which container. Only List is called; the API has no
// mutating RPC.
package podresources // import "github.com/containerstats/containerstatsreceiver/internal/podresources"

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	v1 "k8s.io/kubelet/pkg/apis/podresources/v1"
)

// maxMsgSize matches the kubelet's own limit for this API (16 MiB): a
// dense node's List answer can exceed gRPC's 4 MiB default.
const maxMsgSize = 16 << 20

// Allocation is one container's devices, as the kubelet allocated them.
// DeviceIDs holds the IDs of every resource (for NVIDIA's device plugin
// these are GPU or MIG UUIDs, with a "::<n>" replica suffix under
// time-slicing), sorted and de-duplicated.
type Allocation struct {
	Namespace string
	Pod       string
	Container string
	DeviceIDs []string
}

// Client lists allocations over the kubelet's unix socket. The connection is
// made lazily by gRPC on the first call and re-made after failures.
type Client struct {
	endpoint string
	conn     *grpc.ClientConn
	client   v1.PodResourcesListerClient
}

// New returns a client for the socket at path (an absolute path on this
// machine, root_path already applied). Nothing is dialed until List.
func New(path string) (*Client, error) {
	if path == "" {
		return nil, errors.New("pod-resources socket path is empty")
	}
	conn, err := grpc.NewClient("unix://"+path,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMsgSize)))
	if err != nil {
		return nil, fmt.Errorf("pod-resources %s: %w", path, err)
	}
	return &Client{endpoint: path, conn: conn, client: v1.NewPodResourcesListerClient(conn)}, nil
}

// List calls the read-only List RPC and returns the containers that have at
// least one device, sorted by namespace, pod and container.
func (c *Client) List(ctx context.Context) ([]Allocation, error) {
	resp, err := c.client.List(ctx, &v1.ListPodResourcesRequest{})
	if err != nil {
		return nil, fmt.Errorf("pod-resources %s: List: %w", c.endpoint, err)
	}
	return fromResponse(resp), nil
}

// Endpoint is the socket path the client was made for.
func (c *Client) Endpoint() string { return c.endpoint }

// Close releases the connection; safe on nil and twice.
func (c *Client) Close() error {
	if c == nil || c.conn == nil {
		return nil
	}
	err := c.conn.Close()
	c.conn = nil
	return err
}

func fromResponse(resp *v1.ListPodResourcesResponse) []Allocation {
	var out []Allocation
	for _, p := range resp.GetPodResources() {
		for _, ctr := range p.GetContainers() {
			seen := map[string]bool{}
			var ids []string
			for _, d := range ctr.GetDevices() {
				for _, id := range d.GetDeviceIds() {
					if id != "" && !seen[id] {
						seen[id] = true
						ids = append(ids, id)
					}
				}
			}
			if len(ids) == 0 {
				continue
			}
			sort.Strings(ids)
			out = append(out, Allocation{
				Namespace: p.GetNamespace(), Pod: p.GetName(), Container: ctr.GetName(), DeviceIDs: ids,
			})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		if a.Pod != b.Pod {
			return a.Pod < b.Pod
		}
		return a.Container < b.Container
	})
	return out
}

// DeviceUUID strips the "::<n>" replica suffix NVIDIA's device plugin adds
// to device IDs under time-slicing, leaving the GPU or MIG UUID.
func DeviceUUID(id string) string {
	if i := strings.Index(id, "::"); i >= 0 {
		return id[:i]
	}
	return id
}
