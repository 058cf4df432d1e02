// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build linux

package kubetest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// Helm runs helm (bin, `make helm`'s) with args and returns what it
// prints; an error carries its standard error. It sees no repositories,
// cache or plugins of the user's: HELM_CACHE_HOME, HELM_CONFIG_HOME and
// HELM_DATA_HOME are an empty directory of the test.
func Helm(tb testing.TB, bin string, args ...string) ([]byte, error) {
	tb.Helper()
	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	home := tb.TempDir()
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+home, "HELM_CONFIG_HOME="+home, "HELM_DATA_HOME="+home)
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("helm %s: %w: %s", args[0], err, stderr.String())
	}
	return out, nil
}
