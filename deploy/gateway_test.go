// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package deploy

import (
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// GatewayTLSSecret is the gateway's Secret (docs/deploy.md, "TLS"): its
// certificate and key, and the CA of the nodes' client certificates.
const GatewayTLSSecret = "otel-gateway-tls" //nolint:gosec // G101: a Secret's name, not a credential

type gatewayManifest struct {
	configMap  corev1.ConfigMap
	deployment appsv1.Deployment
	service    corev1.Service
}

// loadGateway decodes gateway/gateway.yaml strictly (decode).
func loadGateway(t *testing.T) gatewayManifest {
	t.Helper()
	var m gatewayManifest
	loadManifest(t, "gateway/gateway.yaml", map[string]int{"ConfigMap": 1, "Deployment": 1, "Service": 1}, func(obj runtime.Object) string {
		switch o := obj.(type) {
		case *corev1.ConfigMap:
			m.configMap = *o
			return "ConfigMap"
		case *appsv1.Deployment:
			m.deployment = *o
			return "Deployment"
		case *corev1.Service:
			m.service = *o
			return "Service"
		}
		return fmt.Sprintf("%T", obj)
	})
	return m
}

// otlpEndpoint is the host and port of the DaemonSet's OTLP_ENDPOINT.
func otlpEndpoint(t *testing.T, ds appsv1.DaemonSet) (host, port string) {
	t.Helper()
	var endpoint string
	for _, e := range ds.Spec.Template.Spec.Containers[0].Env {
		if e.Name == "OTLP_ENDPOINT" {
			endpoint = e.Value
		}
	}
	host, port, err := net.SplitHostPort(endpoint)
	require.NoError(t, err, "OTLP_ENDPOINT %q", endpoint)
	return host, port
}

// readGatewayConfig reads gateway/config.yaml (it has no receiver of ours,
// which readConfig requires).
func readGatewayConfig(t *testing.T) collectorConfig {
	t.Helper()
	raw, err := os.ReadFile("gateway/config.yaml")
	require.NoError(t, err)
	var whole map[string]any
	require.NoError(t, yaml.Unmarshal(raw, &whole))
	return collectorConfig{path: "gateway/config.yaml", raw: raw, conf: confmap.NewFromStringMap(whole)}
}

// TestGatewayManifest: gateway/gateway.yaml runs gateway/config.yaml
// (verbatim in its ConfigMap) in a Deployment of the DaemonSet's image,
// behind the Service that the DaemonSet's OTLP_ENDPOINT names, on the port
// the receiver listens on; every file of the config's tls section comes
// from the Secret otel-gateway-tls (required); every ${env:X} is set; the
// queue's directory is the one writable mount; the pod runs without root
// and without capabilities, and is probed on the health check's port.
func TestGatewayManifest(t *testing.T) {
	gw := loadGateway(t)
	ds := load(t).daemonSet
	cfg := readGatewayConfig(t)
	require.Equal(t, string(cfg.raw), gw.configMap.Data["config.yaml"], "the ConfigMap's config.yaml differs from gateway/config.yaml")

	// The Service is what OTLP_ENDPOINT names (<name>.<namespace>.svc:<port>).
	host, port := otlpEndpoint(t, ds)
	for _, ns := range []string{gw.configMap.Namespace, gw.deployment.Namespace, gw.service.Namespace} {
		assert.Equal(t, ds.Namespace, ns, "the gateway's objects live in the DaemonSet's namespace")
	}
	assert.Equal(t, gw.service.Name+"."+gw.service.Namespace+".svc", host)
	require.Len(t, gw.service.Spec.Ports, 1)
	sp := gw.service.Spec.Ports[0]
	assert.Equal(t, port, strconv.Itoa(int(sp.Port)), "the Service's port is OTLP_ENDPOINT's")

	// The Service selects the Deployment's pods; its target is the
	// container port the receiver listens on.
	pod := gw.deployment.Spec.Template
	require.NotNil(t, gw.deployment.Spec.Selector)
	for k, v := range gw.deployment.Spec.Selector.MatchLabels {
		assert.Equal(t, v, pod.Labels[k], "the Deployment's selector %s", k)
	}
	require.NotEmpty(t, gw.service.Spec.Selector)
	for k, v := range gw.service.Spec.Selector {
		assert.Equal(t, v, pod.Labels[k], "the Service's selector %s", k)
	}
	require.Len(t, pod.Spec.Containers, 1)
	c := pod.Spec.Containers[0]
	assert.Equal(t, ds.Spec.Template.Spec.Containers[0].Image, c.Image, "the gateway runs the DaemonSet's image")
	_, listen, err := net.SplitHostPort(cfg.conf.Get("receivers::otlp::protocols::grpc::endpoint").(string))
	require.NoError(t, err)
	i := slices.IndexFunc(c.Ports, func(p corev1.ContainerPort) bool { return p.Name == sp.TargetPort.String() })
	require.GreaterOrEqual(t, i, 0, "the Service's targetPort %s is no port of the container (%v)", sp.TargetPort.String(), c.Ports)
	assert.Equal(t, listen, strconv.Itoa(int(c.Ports[i].ContainerPort)), "the Service's target is the receiver's port")

	volumes := volumesByName(pod.Spec)
	requireConfigMounted(t, c, volumes, gw.configMap)

	// Mutual TLS from the gateway's Secret: its certificate and the CA
	// of the clients'.
	assert.Equal(t, map[string]string{
		"receivers::otlp::protocols::grpc::tls::cert_file":      "tls.crt",
		"receivers::otlp::protocols::grpc::tls::key_file":       "tls.key",
		"receivers::otlp::protocols::grpc::tls::client_ca_file": "ca.crt",
	}, requireSecretFiles(t, cfg, c, volumes, GatewayTLSSecret))
	requireEnvSet(t, cfg, c)

	// The queue's directory is writable, every other mount read-only.
	queueDir := requireQueue(t, cfg)
	vm, _ := requireMount(t, c, volumes, queueDir)
	assert.False(t, vm.ReadOnly, "the queue directory %s must be writable", queueDir)
	requireReadOnlyBut(t, c, queueDir)
	// memory_limiter's percentages need a memory limit.
	assert.False(t, c.Resources.Limits.Memory().IsZero(), "the gateway has no memory limit for memory_limiter's limit_percentage")

	// No root, no capability, no token.
	sc := requireConfined(t, c)
	require.NotNil(t, sc.RunAsNonRoot)
	assert.True(t, *sc.RunAsNonRoot)
	require.NotNil(t, sc.RunAsUser)
	assert.NotZero(t, *sc.RunAsUser)
	require.NotNil(t, pod.Spec.AutomountServiceAccountToken)
	assert.False(t, *pod.Spec.AutomountServiceAccountToken)
	assert.False(t, pod.Spec.HostNetwork)

	// The probes ask the health check, on its port.
	hc, _ := cfg.conf.Get("extensions::health_check::endpoint").(string)
	_, hcPort, ok := strings.Cut(hc, "}:") // ${env:MY_POD_IP}:<port>
	require.True(t, ok, "health_check's endpoint %q", hc)
	for name, p := range map[string]*corev1.Probe{"liveness": c.LivenessProbe, "readiness": c.ReadinessProbe} {
		require.NotNil(t, p, "%s probe", name)
		require.NotNil(t, p.HTTPGet, "%s probe", name)
		assert.Equal(t, hcPort, p.HTTPGet.Port.String(), "%s probe", name)
	}
}
