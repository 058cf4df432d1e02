// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package cgroupfs

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCheckPlatform(t *testing.T) {
	assert.NoError(t, checkPlatform("linux", "/"))
	for _, goos := range []string{"darwin", "windows"} {
		err := checkPlatform(goos, "/hostfs")
		assert.EqualError(t, err, `root_path "/hostfs": container_stats reads Linux cgroups and /proc and is not supported on `+goos)
	}
}
