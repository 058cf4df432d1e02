// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package cgroupfs // import "github.com/containerstats/containerstatsreceiver/internal/cgroupfs"

import (
	"fmt"
	"runtime"
)

// CheckPlatform returns an error on any system but Linux: the receiver
// reads Linux cgroups and /proc under root_path. The module builds
// everywhere the collector does; on other systems the receiver refuses to
// start with this error, the way hostmetrics refuses a root_path.
func CheckPlatform(rootPath string) error { return checkPlatform(runtime.GOOS, rootPath) }

func checkPlatform(goos, rootPath string) error {
	if goos == "linux" {
		return nil
	}
	return fmt.Errorf("root_path %q: container_stats reads Linux cgroups and /proc and is not supported on %s", rootPath, goos)
}
