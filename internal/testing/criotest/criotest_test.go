// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build linux

package criotest

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The wrapper raises an oom_score_adj below this process's to it, leaves
// the rest of the spec alone and runs runc with the same arguments.
func TestRuncWrapper(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "runc")
	require.NoError(t, os.WriteFile(fake, []byte("#!/bin/sh\necho \"$@\" > \"$0.args\"\n"), 0o755)) //nolint:gosec // G306: a program
	wrapper := filepath.Join(dir, "wrapper")
	require.NoError(t, os.WriteFile(wrapper, []byte(runcWrapper(fake)), 0o755)) //nolint:gosec // G306: a program
	own, err := os.ReadFile("/proc/self/oom_score_adj")
	require.NoError(t, err)
	for _, tc := range []struct{ spec, want string }{
		{`{"process":{"oomScoreAdj":-998,"args":["/pause"]}}`, `{"process":{"oomScoreAdj":` + strings.TrimSpace(string(own)) + `,"args":["/pause"]}}`},
		{"{\n  \"process\": {\n    \"oomScoreAdj\": -1000\n  }\n}", "{\n  \"process\": {\n    \"oomScoreAdj\":" + strings.TrimSpace(string(own)) + "\n  }\n}"},
		{`{"process":{"oomScoreAdj":500}}`, `{"process":{"oomScoreAdj":500}}`},
	} {
		bundle := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(bundle, "config.json"), []byte(tc.spec), 0o600))
		out, err := exec.Command(wrapper, "--root", "/r", "create", "--bundle", bundle, "--pid-file", "/p", "id1").CombinedOutput()
		require.NoError(t, err, "%s", out)
		got, err := os.ReadFile(filepath.Join(bundle, "config.json"))
		require.NoError(t, err)
		assert.JSONEq(t, tc.want, string(got))
		args, err := os.ReadFile(fake + ".args")
		require.NoError(t, err)
		assert.Equal(t, "--root /r create --bundle "+bundle+" --pid-file /p id1\n", string(args))
	}
}

// Every path in the configuration is the harness's own (under its
// directory) or one of the binaries it runs: none is the machine's.
func TestConfigPathsAreOwn(t *testing.T) {
	c := &CRIO{base: "/tmp/crio-x", Socket: "/tmp/crio-x/crio.sock", Opts: Options{BinDir: "/b/crio", RuncDir: "/b/containerd", ConmonCgroup: "pod"}}
	cfg := c.config()
	paths := regexp.MustCompile(`"(/[^"]*)"`).FindAllStringSubmatch(cfg, -1)
	require.NotEmpty(t, paths)
	allowed := []string{"/tmp/crio-x/", "/b/crio/pinns", Conmon, "/usr/lib/cni"}
	for _, p := range paths {
		ok := false
		for _, a := range allowed {
			ok = ok || strings.HasPrefix(p[1], a)
		}
		assert.True(t, ok, "%s is not the harness's", p[1])
	}
	for _, want := range []string{`enable_nri = false`, `disable_hostport_mapping = true`, `drop_infra_ctr = false`, `cgroup_manager = "cgroupfs"`, `monitor_cgroup = "pod"`, `runtime_path = "/tmp/crio-x/runc"`} {
		assert.Contains(t, cfg, want)
	}
}
