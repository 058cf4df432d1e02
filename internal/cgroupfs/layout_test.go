// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package cgroupfs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const fixtures = "../../testdata/fixtures"

func TestDetect(t *testing.T) {
	cases := []struct {
		name    string
		mode    Mode
		driver  Driver
		pods    int
		ctrs    int
		unified string
	}{
		{"v1-cgroupfs", ModeV1, DriverCgroupfs, 3, 4, ""},
		{"v1-systemd", ModeV1, DriverSystemd, 2, 2, ""},
		{"v2-systemd", ModeV2, DriverSystemd, 3, 4, "sys/fs/cgroup"},
		{"v2-cgroupfs", ModeV2, DriverCgroupfs, 3, 3, "sys/fs/cgroup"},
		{"hybrid", ModeHybrid, DriverCgroupfs, 1, 1, "sys/fs/cgroup/unified"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := filepath.Join(fixtures, c.name)
			l, err := Detect(root)
			require.NoError(t, err)
			assert.Equal(t, c.mode, l.Mode)
			if c.unified != "" {
				assert.Equal(t, filepath.Join(root, c.unified), l.Unified)
			}
			if c.mode != ModeV2 {
				// cpu and cpuacct are symlinks to the cpu,cpuacct mount.
				cpu, evalSymlinksErr := filepath.EvalSymlinks(l.V1[CtrlCPU])
				require.NoError(t, evalSymlinksErr)
				acct, evalSymlinksErr := filepath.EvalSymlinks(l.V1[CtrlCPUAcct])
				require.NoError(t, evalSymlinksErr)
				assert.Equal(t, cpu, acct)
				assert.Equal(t, "cpu,cpuacct", filepath.Base(acct))
				assert.NotEmpty(t, l.V1[CtrlMemory])
			}
			tree, err := l.Discover(false)
			require.NoError(t, err)
			assert.Equal(t, c.driver, tree.Driver)
			assert.Equal(t, map[Driver]string{DriverCgroupfs: "/kubepods", DriverSystemd: "/kubepods.slice"}[c.driver], tree.Kubepods, "the pods' root cgroup")
			assert.Len(t, tree.Pods, c.pods)
			assert.Len(t, tree.Containers, c.ctrs)
			for _, ctr := range tree.Containers {
				assert.Equal(t, KindContainer, ctr.Kind)
				assert.NotEmpty(t, ctr.PodUID)
			}
		})
	}
}

func TestDetectNoCgroupFS(t *testing.T) {
	_, err := Detect(t.TempDir())
	require.ErrorIs(t, err, ErrNoCgroupFS)

	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "sys/fs/cgroup/empty"), 0o755))
	_, err = Detect(root)
	require.ErrorIs(t, err, ErrNoCgroupFS)
}

// TestDiscoverStandaloneDedup: field note 4. The same container ID under
// /docker/<id> and /system.slice/docker.service/docker/<id> is one container.
func TestDiscoverStandaloneDedup(t *testing.T) {
	l, err := Detect(filepath.Join(fixtures, "hybrid"))
	require.NoError(t, err)
	tree, err := l.Discover(true)
	require.NoError(t, err)
	var standalone []Cgroup
	for _, c := range tree.Containers {
		if c.PodUID == "" {
			standalone = append(standalone, c)
		}
	}
	require.Len(t, standalone, 1)
	assert.Equal(t, "/docker/"+standalone[0].ContainerID, standalone[0].Path)
	assert.Equal(t, RuntimeDocker, standalone[0].Runtime)
}

func TestReaderAbsentVsVanished(t *testing.T) {
	root := t.TempDir()
	cg := filepath.Join(root, "sys/fs/cgroup")
	require.NoError(t, os.MkdirAll(filepath.Join(cg, "a"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(cg, "cgroup.controllers"), nil, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(cg, "a", "cpu.stat"), []byte("usage_usec 5\n"), 0o600))
	l, err := Detect(root)
	require.NoError(t, err)
	r := NewReader(l)

	cpu, err := r.CPU("/a")
	require.NoError(t, err)
	assert.Equal(t, Some(5000), cpu.Usage)
	assert.False(t, cpu.User.OK, "a key the kernel did not print is absent, not zero")

	mem, err := r.Memory("/a", MemoryAll)
	require.NoError(t, err, "missing memory files mean no data, not an error")
	assert.False(t, mem.Usage.OK)

	_, err = r.CPU("/gone")
	require.ErrorIs(t, err, ErrVanished)

	require.NoError(t, os.WriteFile(filepath.Join(cg, "a", "memory.current"), []byte("lots\n"), 0o600))
	_, err = r.Memory("/a", MemoryAll)
	require.ErrorIs(t, err, errMalformed)
	assert.Contains(t, err.Error(), filepath.Join(cg, "a", "memory.current"), "errors name the file")
}

// TestHostDetectsOnce: every reader of one Host gets a Layout of its own
// (its buffers are not shared) from one detection; a failed detection is
// retried.
func TestHostDetectsOnce(t *testing.T) {
	h := NewHost(filepath.Join("..", "..", "testdata", "fixtures", "v2-systemd"))
	require.NoError(t, h.CheckPlatform())
	a, err := h.Layout()
	require.NoError(t, err)
	b, err := h.Layout()
	require.NoError(t, err)
	assert.NotSame(t, a, b, "a Layout per reader")
	assert.Equal(t, a.Mode, b.Mode)
	assert.Equal(t, a.Unified, b.Unified)
	assert.Equal(t, 1, h.Detections())

	empty := NewHost(t.TempDir())
	_, err = empty.Layout()
	require.ErrorIs(t, err, ErrNoCgroupFS)
	_, err = empty.Layout()
	require.ErrorIs(t, err, ErrNoCgroupFS)
	assert.Equal(t, 2, empty.Detections(), "a failure is not kept")
}

// join is filepath.Join, faster on the clean paths discovery gives.
func TestJoin(t *testing.T) {
	for _, c := range [][2]string{
		{"/sys/fs/cgroup", "/kubepods.slice/kubepods-pod1.slice/cri-containerd-a.scope"},
		{"/sys/fs/cgroup/memory", "/"},
		{"/sys/fs/cgroup", ""},
		{"/sys/fs/cgroup", "/a/../b"},
		{"/sys/fs/cgroup", "/a/./b"},
		{"/sys/fs/cgroup", "/a//b"},
		{"/sys/fs/cgroup", "/a/b/"},
		{"/sys/fs/cgroup/", "/a"},
		{"/sys/fs/cgroup", "a/b"},
		{"/", "/a"},
		{"", "/a"},
		{"/r", "/.hidden/..x/...y"},
	} {
		assert.Equal(t, filepath.Join(c[0], c[1]), join(c[0], c[1]), "%q %q", c[0], c[1])
	}
}

func FuzzJoin(f *testing.F) {
	f.Add("/sys/fs/cgroup", "/kubepods/burstable/pod1/abc")
	f.Add("/sys/fs/cgroup", "/a/../b")
	f.Add("/", "/.")
	f.Fuzz(func(t *testing.T, dir, rel string) {
		if got, want := join(dir, rel), filepath.Join(dir, rel); got != want {
			t.Fatalf("join(%q, %q) = %q, filepath.Join: %q", dir, rel, got, want)
		}
	})
}
