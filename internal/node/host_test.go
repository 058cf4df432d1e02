// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package node

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// listen makes a unix socket at root/rel.
func listen(t *testing.T, root, rel string) string {
	t.Helper()
	p := filepath.Join(root, rel)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	l, err := net.Listen("unix", p)
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	return p
}

// The runtime sockets are detected once, on the first call: a socket
// that appears later is not seen, a runtime that is off has none, a
// configured one is taken as is.
func TestHostEndpointsDetectedOnce(t *testing.T) {
	root, err := os.MkdirTemp("", "h") // short: a unix socket path has a length limit
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(root) })
	crio := listen(t, root, "run/crio/crio.sock")
	h := NewHost(HostConfig{Root: root, Runtimes: Runtimes{CRI: true, Containerd: false, Docker: true, DockerEndpoints: []string{"/d.sock"}}}, nil)
	got := h.Endpoints()
	assert.Equal(t, Endpoints{CRI: crio, Docker: []string{"/d.sock"}}, got)

	listen(t, root, "run/containerd/containerd.sock") // first of cri.Sockets, but too late
	assert.Equal(t, got, h.Endpoints())

	off := NewHost(HostConfig{Root: root}, nil)
	assert.Equal(t, Endpoints{}, off.Endpoints(), "every runtime off")
}

// Layout names root_path when the root has no cgroup tree; the handle's
// Root is the root it was made from.
func TestHostLayoutNamesRootPath(t *testing.T) {
	root := t.TempDir()
	h := NewHost(HostConfig{Root: root}, nil)
	assert.Equal(t, root, h.Root())
	_, err := h.Layout()
	require.ErrorContains(t, err, `root_path "`+root+`"`)
}

// Discovered updates the cgroup index only when a logs receiver uses it
// (IndexCgroups); the layout is detected once for every reader.
func TestHostDiscovered(t *testing.T) {
	for _, index := range []bool{false, true} {
		root := filepath.Join(t.TempDir(), "v1")
		require.NoError(t, os.CopyFS(root, os.DirFS("../../testdata/fixtures/v1-cgroupfs")))
		h := NewHost(HostConfig{Root: root, IndexCgroups: index}, nil)
		l, err := h.Layout()
		require.NoError(t, err)
		tree, err := l.Discover(false)
		require.NoError(t, err)
		h.Discovered(&tree)
		require.NoError(t, os.RemoveAll(filepath.Join(root, "sys")))
		_, ok := h.Cgroups().Cgroup(context.Background(), strings.Repeat("c3", 32))
		assert.Equal(t, index, ok, "known from the discovery handed over: %v", index)
		assert.Equal(t, 1, h.Detections())
	}
}
