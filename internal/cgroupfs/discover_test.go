// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package cgroupfs

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func podUIDs(t Tree) []string {
	var out []string
	for _, p := range t.Pods {
		out = append(out, p.PodUID)
	}
	return out
}

func containerIDs(t Tree) []string {
	var out []string
	for _, c := range t.Containers {
		out = append(out, c.ContainerID)
	}
	return out
}

// TestDiscoverListingErrors: a directory that cannot be listed (EACCES,
// EIO, EMFILE) at any level of the walk is recorded in Tree.Unlisted with
// its path and the errno, the rest of the tree is still discovered, and
// UnlistedAbove tells what lies below it. Only the walk root failing is an
// error of Discover itself.
func TestDiscoverListingErrors(t *testing.T) {
	const (
		qos       = "/kubepods.slice/kubepods-besteffort.slice"
		pod       = "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1a2b3c4d_0000_4000_8000_00000000000a.slice"
		podUID    = "1a2b3c4d-0000-4000-8000-00000000000a"
		qosPodUID = "2b3c4d5e-0000-4000-8000-00000000000b"
	)
	full := func() Tree {
		l, err := Detect(filepath.Join(fixtures, "v2-systemd"))
		require.NoError(t, err)
		tree, err := l.Discover(false)
		require.NoError(t, err)
		require.Empty(t, tree.Unlisted)
		return tree
	}()
	require.Contains(t, podUIDs(full), qosPodUID)

	for _, c := range []struct {
		name, rel string
		errno     syscall.Errno
		// what is missing compared with the full tree
		goneContainers, gonePods int
	}{
		{"QoS class EACCES", qos, syscall.EACCES, 1, 1},
		{"pod EIO", pod, syscall.EIO, 2, 0},
		{"pod EMFILE", pod, syscall.EMFILE, 2, 0},
		{"kubepods EIO", "/kubepods.slice", syscall.EIO, len(full.Containers), len(full.Pods)},
	} {
		t.Run(c.name, func(t *testing.T) {
			l, err := Detect(filepath.Join(fixtures, "v2-systemd"))
			require.NoError(t, err)
			dir := filepath.Join(l.WalkRoot(), c.rel)
			l.SetListFault(func(d string) error {
				if d == dir {
					return &os.PathError{Op: "open", Path: d, Err: c.errno}
				}
				return nil
			})
			tree, err := l.Discover(false)
			require.NoError(t, err, "a listing error below the root is not fatal")
			require.Len(t, tree.Unlisted, 1)
			u := tree.Unlisted[0]
			assert.Equal(t, c.rel, u.Rel)
			assert.Equal(t, dir, u.Dir)
			require.ErrorIs(t, u, c.errno)
			assert.Contains(t, u.Error(), dir, "the error names the directory")
			assert.Len(t, tree.Containers, len(full.Containers)-c.goneContainers)
			assert.Len(t, tree.Pods, len(full.Pods)-c.gonePods)
			for _, ct := range full.Containers {
				below := tree.UnlistedAbove(ct.Path) >= 0
				assert.Equal(t, strings.HasPrefix(ct.Path, c.rel+"/"), below, ct.Path)
				assert.Equal(t, !below, contains(containerIDs(tree), ct.ContainerID), "%s: seen unless below the unlisted directory", ct.Path)
			}
		})
	}

	t.Run("root", func(t *testing.T) {
		l, err := Detect(filepath.Join(fixtures, "v2-systemd"))
		require.NoError(t, err)
		l.SetListFault(func(string) error { return syscall.EIO })
		_, err = l.Discover(false)
		require.ErrorIs(t, err, syscall.EIO)
		assert.Contains(t, err.Error(), l.WalkRoot())
	})

	t.Run("standalone walk", func(t *testing.T) {
		l, err := Detect(filepath.Join(fixtures, "hybrid"))
		require.NoError(t, err)
		dir := filepath.Join(l.WalkRoot(), "docker")
		l.SetListFault(func(d string) error {
			if d == dir {
				return syscall.EIO
			}
			return nil
		})
		tree, err := l.Discover(true)
		require.NoError(t, err)
		require.Len(t, tree.Unlisted, 1)
		assert.Equal(t, "/docker", tree.Unlisted[0].Rel)
	})

	t.Run("a directory that vanished is not an error", func(t *testing.T) {
		l, err := Detect(filepath.Join(fixtures, "v2-systemd"))
		require.NoError(t, err)
		l.SetListFault(func(d string) error {
			if d == filepath.Join(l.WalkRoot(), pod) {
				return &os.PathError{Op: "open", Path: d, Err: syscall.ENOENT}
			}
			return nil
		})
		tree, err := l.Discover(false)
		require.NoError(t, err)
		assert.Empty(t, tree.Unlisted)
	})
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// The standalone walk finds the container cgroups Podman and nerdctl make
// (rootful systemd and cgroupfs manager, a pod's, rootless at depth 6, a
// Quadlet payload, nerdctl's scope) and leaves out their conmon cgroups;
// without standalone none is reported.
func TestDiscoverPodmanShapes(t *testing.T) {
	const (
		a = "aa00000000000000000000000000000000000000000000000000000000000001"
		b = "bb00000000000000000000000000000000000000000000000000000000000002"
		c = "cc00000000000000000000000000000000000000000000000000000000000003"
		d = "dd00000000000000000000000000000000000000000000000000000000000004"
		e = "ee00000000000000000000000000000000000000000000000000000000000005"
		f = "ff00000000000000000000000000000000000000000000000000000000000006"
		p = "0f00000000000000000000000000000000000000000000000000000000000007"
		g = "ab00000000000000000000000000000000000000000000000000000000000008"
	)
	want := map[string]string{
		"/machine.slice/libpod-" + a + ".scope":                                                                           a,
		"/machine.slice/machine-libpod_pod_" + p + ".slice/libpod-" + b + ".scope":                                        b,
		"/user.slice/user-1000.slice/user@1000.service/user.slice/user-libpod_pod_" + p + ".slice/libpod-" + c + ".scope": c,
		"/user.slice/user-1000.slice/user@1000.service/app.slice/web.service/libpod-payload-" + d:                         d,
		"/libpod_parent/libpod-" + e:            e,
		"/system.slice/nerdctl-" + f + ".scope": f,
	}
	files := map[string]string{
		"machine.slice/libpod-conmon-" + a + ".scope/cgroup.procs": "",
		"libpod_parent/conmon/cgroup.procs":                        "",
		// a conmon whose container's scope is gone (it outlives the
		// container for a moment): not a container either; with its
		// container there, the shorter path would win and hide it
		"machine.slice/libpod-conmon-" + g + ".scope/cgroup.procs": "",
		// a container's own sub-cgroup is part of it
		"machine.slice/libpod-" + a + ".scope/container/cgroup.procs": "",
	}
	for path := range want {
		files[strings.TrimPrefix(path, "/")+"/cgroup.procs"] = ""
	}
	r := memTree(t, true, files)

	tree, err := r.l.Discover(true)
	require.NoError(t, err)
	got := map[string]string{}
	for _, ct := range tree.Containers {
		got[ct.Path] = ct.ContainerID
		wantRT := RuntimePodman
		if ct.ContainerID == f {
			wantRT = RuntimeContainerd
		}
		assert.Equal(t, wantRT, ct.Runtime, ct.Path)
	}
	assert.Equal(t, want, got)

	tree, err = r.l.Discover(false)
	require.NoError(t, err)
	assert.Empty(t, tree.Containers, "standalone containers only when asked")
}
