// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package cgroupfs

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	id1  = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	id2  = "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
	uid  = "1a2b3c4d-0000-4000-8000-00000000000a"
	uidU = "1a2b3c4d_0000_4000_8000_00000000000a"
)

func TestParsePath(t *testing.T) {
	cases := []struct {
		path string
		want Cgroup
		ok   bool
	}{
		{"/", Cgroup{Path: "/", Kind: KindNode}, true},
		{"", Cgroup{Path: "/", Kind: KindNode}, true},
		// cgroupfs driver
		{"/kubepods", Cgroup{Path: "/kubepods", Kind: KindKubepods, Driver: DriverCgroupfs}, true},
		{"/kubepods/burstable", Cgroup{Path: "/kubepods/burstable", Kind: KindQoS, Driver: DriverCgroupfs, QoS: QoSBurstable}, true},
		{"/kubepods/besteffort/pod" + uid, Cgroup{Path: "/kubepods/besteffort/pod" + uid, Kind: KindPod, Driver: DriverCgroupfs, QoS: QoSBestEffort, PodUID: uid}, true},
		{"/kubepods/pod" + uid, Cgroup{Path: "/kubepods/pod" + uid, Kind: KindPod, Driver: DriverCgroupfs, QoS: QoSGuaranteed, PodUID: uid}, true},
		{"/kubepods/burstable/pod" + uid + "/" + id1, Cgroup{Path: "/kubepods/burstable/pod" + uid + "/" + id1, Kind: KindContainer, Driver: DriverCgroupfs, QoS: QoSBurstable, PodUID: uid, ContainerID: id1}, true},
		{"/kubepods/pod" + uid + "/crio-" + id1, Cgroup{Path: "/kubepods/pod" + uid + "/crio-" + id1, Kind: KindContainer, Driver: DriverCgroupfs, QoS: QoSGuaranteed, PodUID: uid, ContainerID: id1, Runtime: RuntimeCRIO}, true},
		// a process in a nested sub-cgroup maps to its container
		{"/kubepods/pod" + uid + "/" + id1 + "/init.scope", Cgroup{Path: "/kubepods/pod" + uid + "/" + id1, Kind: KindContainer, Driver: DriverCgroupfs, QoS: QoSGuaranteed, PodUID: uid, ContainerID: id1}, true},
		// systemd driver, all three runtimes
		{
			"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + uidU + ".slice/cri-containerd-" + id1 + ".scope",
			Cgroup{Path: "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + uidU + ".slice/cri-containerd-" + id1 + ".scope", Kind: KindContainer, Driver: DriverSystemd, QoS: QoSBurstable, PodUID: uid, ContainerID: id1, Runtime: RuntimeContainerd},
			true,
		},
		{
			"/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" + uidU + ".slice/crio-" + id1 + ".scope",
			Cgroup{Path: "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" + uidU + ".slice/crio-" + id1 + ".scope", Kind: KindContainer, Driver: DriverSystemd, QoS: QoSBestEffort, PodUID: uid, ContainerID: id1, Runtime: RuntimeCRIO},
			true,
		},
		{
			"/kubepods.slice/kubepods-pod" + uidU + ".slice/docker-" + id1 + ".scope",
			Cgroup{Path: "/kubepods.slice/kubepods-pod" + uidU + ".slice/docker-" + id1 + ".scope", Kind: KindContainer, Driver: DriverSystemd, QoS: QoSGuaranteed, PodUID: uid, ContainerID: id1, Runtime: RuntimeDocker},
			true,
		},
		{"/kubepods.slice/kubepods-burstable.slice", Cgroup{Path: "/kubepods.slice/kubepods-burstable.slice", Kind: KindQoS, Driver: DriverSystemd, QoS: QoSBurstable}, true},
		// standalone containers (field note 4: one ID under two paths)
		{"/docker/" + id1, Cgroup{Path: "/docker/" + id1, Kind: KindContainer, ContainerID: id1, Runtime: RuntimeDocker}, true},
		{"/system.slice/docker.service/docker/" + id1, Cgroup{Path: "/system.slice/docker.service/docker/" + id1, Kind: KindContainer, ContainerID: id1, Runtime: RuntimeDocker}, true},
		{"/system.slice/docker-" + id1 + ".scope", Cgroup{Path: "/system.slice/docker-" + id1 + ".scope", Kind: KindContainer, ContainerID: id1, Runtime: RuntimeDocker}, true},
		// Podman: cgroupfs manager, systemd (rootful, a pod's, rootless), a
		// Quadlet unit's payload; nerdctl's systemd scope
		{"/libpod_parent/libpod-" + id1, Cgroup{Path: "/libpod_parent/libpod-" + id1, Kind: KindContainer, ContainerID: id1, Runtime: RuntimePodman}, true},
		{"/machine.slice/libpod-" + id1 + ".scope", Cgroup{Path: "/machine.slice/libpod-" + id1 + ".scope", Kind: KindContainer, ContainerID: id1, Runtime: RuntimePodman}, true},
		{"/machine.slice/machine-libpod_pod_" + id2 + ".slice/libpod-" + id1 + ".scope/container", Cgroup{Path: "/machine.slice/machine-libpod_pod_" + id2 + ".slice/libpod-" + id1 + ".scope", Kind: KindContainer, ContainerID: id1, Runtime: RuntimePodman}, true},
		{"/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" + id1 + ".scope", Cgroup{Path: "/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" + id1 + ".scope", Kind: KindContainer, ContainerID: id1, Runtime: RuntimePodman}, true},
		{"/system.slice/web.service/libpod-payload-" + id1, Cgroup{Path: "/system.slice/web.service/libpod-payload-" + id1, Kind: KindContainer, ContainerID: id1, Runtime: RuntimePodman}, true},
		{"/system.slice/nerdctl-" + id1 + ".scope", Cgroup{Path: "/system.slice/nerdctl-" + id1 + ".scope", Kind: KindContainer, ContainerID: id1, Runtime: RuntimeContainerd}, true},
	}
	for _, c := range cases {
		t.Run(c.path, func(t *testing.T) {
			got, ok := ParsePath(c.path)
			assert.Equal(t, c.ok, ok)
			assert.Equal(t, c.want, got)
		})
	}
}

func TestParsePathRejects(t *testing.T) {
	for _, p := range []string{
		"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + uidU + ".slice/crio-conmon-" + id1 + ".scope",
		"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + uidU + ".slice/var-lib-kubelet-pods.mount",
		"/kubepods/burstable/pod" + uid + "/" + id1[:63],             // short ID
		"/kubepods/burstable/pod" + uid + "/" + strings.ToUpper(id1), // upper-case hex
		"/kubepods/burstable/podnot-a-uid",
		"/kubepods/guaranteed",
		"/kubepods.slice/kubepods-besteffort.slice/kubepods-burstable-pod" + uidU + ".slice", // QoS mismatch
		"/kubepods.slice/kubepods-burstable-pod" + uidU + ".slice",                           // burstable pod outside its QoS slice
		"/kubepods/burstable/pod" + uid + "/cri-containerd-" + id1,                           // systemd name without .scope
		"/system.slice/containerd.service",
		"/user.slice",
		"/machine.slice/libpod-conmon-" + id1 + ".scope", // Podman's conmon
		"/libpod_parent/conmon",
		"/machine.slice/machine-libpod_pod_" + id2 + ".slice",
		"/system.slice/nerdctl-" + id1, // systemd name without .scope
		"/system.slice/docker-" + id1,  // systemd name without .scope
	} {
		t.Run(p, func(t *testing.T) {
			got, ok := ParsePath(p)
			assert.False(t, ok)
			assert.NotEqual(t, KindContainer, got.Kind)
			assert.NotEqual(t, KindPod, got.Kind)
		})
	}
}

// FuzzParsePath checks ParsePath never panics and that what it returns is
// self-consistent: a classified path re-parses to the same result, a
// container has a valid ID, and a pod or container in kubepods has a UID.
func FuzzParsePath(f *testing.F) {
	for _, s := range []string{
		"/", "/kubepods/burstable/pod" + uid + "/" + id1,
		"/kubepods.slice/kubepods-pod" + uidU + ".slice/crio-" + id1 + ".scope",
		"/system.slice/docker.service/docker/" + id1, "/kubepods/pod" + uid,
		"/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" + uidU + ".slice",
		"//kubepods//", "/a/b/c", "kubepods-burstable-pod.slice",
		"/libpod_parent/libpod-" + id1, "/machine.slice/libpod-conmon-" + id1 + ".scope",
		"/system.slice/web.service/libpod-payload-" + id1 + "/sub",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		c, ok := ParsePath(p)
		if !ok {
			return
		}
		again, ok2 := ParsePath(c.Path)
		require.True(t, ok2, "canonical path %q of %q does not parse", c.Path, p)
		require.Equal(t, c, again)
		switch c.Kind {
		case KindContainer:
			require.True(t, IsHex64(c.ContainerID))
		case KindPod:
			require.True(t, validUID(c.PodUID))
			require.NotEmpty(t, c.QoS)
		}
	})
}
