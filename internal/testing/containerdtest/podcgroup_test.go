// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build linux

package containerdtest

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The pod cgroups are named as the kubelet names them for each driver
// (pkg/kubelet/cm: cgroupfs paths, systemd slices with the UID's dashes
// escaped and every level's name repeating its ancestors').
func TestPodCgroup(t *testing.T) {
	const uid = "0a1b2c3d-7e57-4f00-8a9b-0c1d2e3f4a5b"
	for _, c := range []struct {
		qos          string
		systemd      bool
		path, parent string
	}{
		{"burstable", false, "/kubepods/burstable/pod" + uid, "/kubepods/burstable/pod" + uid},
		{"", false, "/kubepods/pod" + uid, "/kubepods/pod" + uid},
		{
			"besteffort", true,
			"/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod0a1b2c3d_7e57_4f00_8a9b_0c1d2e3f4a5b.slice",
			"kubepods-besteffort-pod0a1b2c3d_7e57_4f00_8a9b_0c1d2e3f4a5b.slice",
		},
		{
			"", true,
			"/kubepods.slice/kubepods-pod0a1b2c3d_7e57_4f00_8a9b_0c1d2e3f4a5b.slice",
			"kubepods-pod0a1b2c3d_7e57_4f00_8a9b_0c1d2e3f4a5b.slice",
		},
	} {
		path, parent := podCgroup(uid, c.qos, c.systemd)
		assert.Equal(t, c.path, path, "qos %q systemd %v", c.qos, c.systemd)
		assert.Equal(t, c.parent, parent, "qos %q systemd %v", c.qos, c.systemd)
	}
}
