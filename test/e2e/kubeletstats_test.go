// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build realmachine

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
	"sigs.k8s.io/yaml"
)

// The cluster test's gateway (testdata/kube-gateway.yaml) runs
// config/kubeletstats-compat.yaml's processors in a second metrics pipeline
// whose remote write goes to a second Prometheus, where
// kubernetes-mixin-otel's own queries are evaluated (dashboards_test.go).
const (
	kubeletstatsCompatFile = "config/kubeletstats-compat.yaml"
	// kubeletstatsPipeline, kubeletstatsExporter: the overlay's names.
	kubeletstatsPipeline = "metrics/kubeletstats"
	kubeletstatsExporter = "prometheus_remote_write/kubeletstats"
	// kubeletstatsRemoteWriteEnv holds the second Prometheus' remote-write
	// URL in the gateway's pod.
	kubeletstatsRemoteWriteEnv = "REMOTE_WRITE_URL_KUBELETSTATS"
)

// kubeletstatsGatewayOverlay is layered over the gateway's config (a second
// --config; maps merge): a second metrics pipeline of the gateway's otlp
// receiver that runs config/kubeletstats-compat.yaml's own processors
// (every one of its pipeline's but memory_limiter and batch, with the
// file's sections) and remote-writes with the gateway's own
// prometheus_remote_write settings but the endpoint, which is
// ${env:REMOTE_WRITE_URL_KUBELETSTATS}. It adds keys only (checked): the
// gateway's own pipelines stay as they are.
func kubeletstatsGatewayOverlay(t *testing.T, gateway []byte) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot(t), kubeletstatsCompatFile))
	require.NoError(t, err)
	var compat, gw map[string]any
	require.NoError(t, yaml.Unmarshal(raw, &compat))
	require.NoError(t, yaml.Unmarshal(gateway, &gw))
	cc := confmap.NewFromStringMap(compat)
	gc := confmap.NewFromStringMap(gw)

	order, ok := cc.Get("service::pipelines::metrics::processors").([]any)
	require.True(t, ok, "%s: service::pipelines::metrics::processors", kubeletstatsCompatFile)
	procs := map[string]any{}
	var names []any
	for _, p := range order {
		n := fmt.Sprint(p)
		if n == "memory_limiter" || n == "batch" {
			continue
		}
		sec := cc.Get("processors::" + n)
		require.NotNil(t, sec, "%s: processor %s has no section", kubeletstatsCompatFile, n)
		procs[n] = sec
		names = append(names, n)
	}
	require.NotEmpty(t, names, "%s: no processor of its own in the pipeline", kubeletstatsCompatFile)
	exp, ok := gc.Get("exporters::prometheus_remote_write").(map[string]any)
	require.True(t, ok, "the gateway has no prometheus_remote_write exporter")
	exp["endpoint"] = "${env:" + kubeletstatsRemoteWriteEnv + "}"
	recv := gc.Get("service::pipelines::metrics::receivers")
	require.NotNil(t, recv)

	overlay := map[string]any{
		"processors": procs,
		"exporters":  map[string]any{kubeletstatsExporter: exp},
		"service": map[string]any{"pipelines": map[string]any{kubeletstatsPipeline: map[string]any{
			"receivers": recv, "processors": names, "exporters": []any{kubeletstatsExporter},
		}}},
	}
	for _, k := range confmap.NewFromStringMap(overlay).AllKeys() {
		require.False(t, gc.IsSet(k), "the overlay sets %s, which the gateway's config has", k)
	}
	out, err := yaml.Marshal(overlay)
	require.NoError(t, err)
	return out
}

// TestKubeletstatsGatewayOverlay: the overlay over the cluster test's
// gateway config runs the compat file's processor, and only it, in a
// pipeline of its own, and the built collector accepts the two files
// together (validate decodes every section strictly and builds the
// processor's statements).
func TestKubeletstatsGatewayOverlay(t *testing.T) {
	gw, err := os.ReadFile(filepath.Join("testdata", "kube-gateway.yaml"))
	require.NoError(t, err)
	ov := kubeletstatsGatewayOverlay(t, gw)
	var m map[string]any
	require.NoError(t, yaml.Unmarshal(ov, &m))
	c := confmap.NewFromStringMap(m)
	assert.Equal(t, []any{"transform/kubeletstats"}, c.Get("service::pipelines::"+kubeletstatsPipeline+"::processors"))
	assert.Equal(t, []any{"otlp"}, c.Get("service::pipelines::"+kubeletstatsPipeline+"::receivers"))
	assert.Equal(t, "${env:"+kubeletstatsRemoteWriteEnv+"}", c.Get("exporters::"+kubeletstatsExporter+"::endpoint"))
	t.Logf("overlay:\n%s", ov)

	dir := t.TempDir()
	base := filepath.Join(dir, "gateway.yaml")
	over := filepath.Join(dir, "kubeletstats.yaml")
	require.NoError(t, os.WriteFile(base, gw, 0o600)) //nolint:gosec // G703: a test: a path of the test's own (temp dir, repository, /proc, guest share), not input
	require.NoError(t, os.WriteFile(over, ov, 0o600))
	env := append(os.Environ(), "OTLP_LISTEN=127.0.0.1:4317", "MY_POD_IP=127.0.0.1", "REMOTE_WRITE_URL=http://127.0.0.1:9/api/v1/write",
		kubeletstatsRemoteWriteEnv+"=http://127.0.0.1:9/api/v1/write")
	cmd := exec.Command(collectorBin(t), "validate", "--config", base, "--config", over) //nolint:gosec // G204: a test tool: the command and its arguments are the test's own
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	// A statement the transform processor cannot parse fails validate, so
	// the check above can fail.
	bad := strings.Replace(string(ov), "set(", "set_no_such_function(", 1)
	require.NotEqual(t, string(ov), bad)
	require.NoError(t, os.WriteFile(over, []byte(bad), 0o600))
	cmd = exec.Command(collectorBin(t), "validate", "--config", base, "--config", over) //nolint:gosec // G204: a test tool: the command and its arguments are the test's own
	cmd.Env = env
	out, err = cmd.CombinedOutput()
	require.Error(t, err, "a statement with an unknown function passed validate: %s", out)
}
