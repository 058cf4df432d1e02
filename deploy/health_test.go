// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package deploy

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

// The health_check extension's port, where the probes of
// deploy/daemonset.yaml, of the official Helm chart (its values.yaml's
// livenessProbe and readinessProbe) and of the Operator ask.
const healthPort = 13133

// healthEndpoint is the health_check endpoint of every config a pod runs:
// the pod's own IP, from the downward API, as the Helm chart's default
// config has it.
const healthEndpoint = "${env:MY_POD_IP}:13133"

// podConfigs are the collector configs we ship for a pod: the DaemonSet's
// default, its Prometheus setups, the cAdvisor-compatible view and the
// example gateway.
var podConfigs = []string{
	"config.yaml",
	"prometheus-otlp/config.yaml",
	"prometheus-pull/config.yaml",
	"gateway/config.yaml",
	"../config/cadvisor-compat.yaml",
	"../config/kubeletstats-compat.yaml",
}

// devConfigs are config/'s files that are not a pod's: `make run`'s and
// the e2e test's agent and sink (several on one host: no fixed port).
var devConfigs = []string{"../config/local.yaml", "../config/e2e-agent.yaml", "../config/e2e-sink.yaml"}

// hostOverlays are config/'s files layered over a pod config for a
// container on a Docker or Podman host (deploy/docker/compose.yaml): the
// collector's own network namespace, where the health check listens on
// every address of the container.
var hostOverlays = []string{"../config/docker-host.yaml"}

func loadConf(t *testing.T, path string) *confmap.Conf {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var whole map[string]any
	require.NoError(t, yaml.Unmarshal(raw, &whole), path)
	return confmap.NewFromStringMap(whole)
}

// TestHealthCheck: every collector config we ship enables the health_check
// extension (the official Helm chart's NOTES.txt fails an install without
// it, the Operator adds its probes only with it, and deploy/daemonset.yaml's
// probes ask it). A pod's configs serve it on the pod's IP (MY_POD_IP, set
// by the DaemonSet from status.podIP) at the port the probes ask, never on
// a port of the node: the pod is not on the host's network and declares no
// port. config/local.yaml (`make run` on a developer's host) serves it on
// loopback.
func TestHealthCheck(t *testing.T) {
	// A config added to config/ is a pod's unless listed as a developer's.
	files, err := filepath.Glob("../config/*.yaml")
	require.NoError(t, err)
	for _, f := range files {
		assert.True(t, slices.Contains(podConfigs, f) || slices.Contains(devConfigs, f) || slices.Contains(hostOverlays, f),
			"%s: neither in podConfigs, devConfigs nor hostOverlays", f)
	}
	for _, f := range hostOverlays {
		assert.Equal(t, "0.0.0.0:13133", loadConf(t, f).Get("extensions::health_check::endpoint"), "%s: health_check's endpoint (the base enables it)", f)
	}
	for _, f := range podConfigs {
		conf := loadConf(t, f)
		assert.Equal(t, healthEndpoint, conf.Get("extensions::health_check::endpoint"), "%s: health_check's endpoint", f)
		assert.Contains(t, conf.Get("service::extensions"), "health_check", "%s: health_check is not enabled", f)
	}
	local := loadConf(t, "../config/local.yaml")
	assert.Contains(t, local.Get("service::extensions"), "health_check", "config/local.yaml: health_check is not enabled")
	ep, _ := local.Get("extensions::health_check::endpoint").(string)
	host, _, err := net.SplitHostPort(ep)
	require.NoError(t, err, "config/local.yaml: health_check's endpoint %q", ep)
	assert.True(t, net.ParseIP(host).IsLoopback(), "config/local.yaml: health_check's endpoint %q is not on loopback", ep)

	m := load(t)
	spec := m.daemonSet.Spec.Template.Spec
	assert.False(t, spec.HostNetwork, "the pod has its own network namespace: the health check on its IP is no port of the node")
	c := spec.Containers[0]
	for _, p := range c.Ports {
		assert.NotEqual(t, int32(healthPort), p.ContainerPort, "the probes need no declared port")
		assert.Zero(t, p.HostPort, "no port on the node")
	}
	env := requireEnvSet(t, readConfig(t, "config.yaml"), c)
	require.NotNil(t, env["MY_POD_IP"].ValueFrom)
	require.NotNil(t, env["MY_POD_IP"].ValueFrom.FieldRef)
	assert.Equal(t, "status.podIP", env["MY_POD_IP"].ValueFrom.FieldRef.FieldPath)
	for name, p := range map[string]*corev1.Probe{"liveness": c.LivenessProbe, "readiness": c.ReadinessProbe} {
		require.NotNil(t, p, "no %s probe", name)
		require.NotNil(t, p.HTTPGet, "%s probe: not an HTTP GET", name)
		assert.Equal(t, "/", p.HTTPGet.Path, "%s probe", name)
		assert.Equal(t, intstr.FromInt32(healthPort), p.HTTPGet.Port, "%s probe", name)
		assert.Empty(t, p.HTTPGet.Host, "%s probe: the kubelet asks the pod's IP", name)
	}
	assert.Nil(t, c.StartupProbe, "the chart has no startup probe by default")
}
