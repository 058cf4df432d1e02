// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build realmachine

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDeployConfigsValidate: every collector config a user deploys (the
// DaemonSet's default, the two Prometheus setups, the cAdvisor-compatible
// view, kubeletstats' names, the example gateway) is accepted by the built collector's own `validate`, which decodes
// every component's section strictly (an unknown key fails) and runs its
// validation; deploy's unit tests check the receiver section, the manifest
// and the patch. The environment is the DaemonSet's (deploy/daemonset.yaml
// sets these three; the others have defaults in the files, but the
// gateway's backend; `validate` does not open the TLS files). A copy with an
// unknown exporter key must fail, so the check can fail.
func TestDeployConfigsValidate(t *testing.T) {
	bin := collectorBin(t)
	root := repoRoot(t)
	env := append(os.Environ(), "K8S_NODE_NAME=node-1", "OTLP_ENDPOINT=otel-gateway.containerstats.svc:4317", "MY_POD_IP=10.0.0.1",
		"BACKEND_OTLP_ENDPOINT=http://prometheus.monitoring.svc:9090/api/v1/otlp")
	validate := func(path string) (string, error) {
		cmd := exec.Command(bin, "validate", "--config", path)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	for _, f := range []string{
		"deploy/config.yaml",
		"deploy/prometheus-pull/config.yaml",
		"deploy/prometheus-otlp/config.yaml",
		"config/cadvisor-compat.yaml",
		"config/kubeletstats-compat.yaml",
		"deploy/gateway/config.yaml",
	} {
		out, err := validate(filepath.Join(root, f))
		require.NoError(t, err, "%s: %s", f, out)
		t.Logf("%s: valid", f)
	}
	b, err := os.ReadFile(filepath.Join(root, "deploy/prometheus-otlp/config.yaml"))
	require.NoError(t, err)
	bad := strings.Replace(string(b), "  otlp_http:\n", "  otlp_http:\n    not_a_key: 1\n", 1)
	require.NotEqual(t, string(b), bad)
	badPath := filepath.Join(t.TempDir(), "bad.yaml")
	require.NoError(t, os.WriteFile(badPath, []byte(bad), 0o600)) //nolint:gosec // G703: a test: a path of the test's own (temp dir, repository, /proc, guest share), not input
	out, err := validate(badPath)
	require.Error(t, err, "an unknown key passed validate")
	require.Contains(t, out, "not_a_key")
}
