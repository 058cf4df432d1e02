// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

// Package deploy holds the DaemonSet manifest and the collector config it
// runs; this test keeps the two consistent.
package deploy

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path"
	"regexp"
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
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"sigs.k8s.io/yaml"

	containerstatsreceiver "github.com/containerstats/containerstatsreceiver"
)

// Image is the reference `make image` gives the archive (IMAGE_NAME at
// the default VERSION); the manifest must run that image.
const Image = "otelcol-containerstats:0.0.0-dev"

type manifest struct {
	configMap corev1.ConfigMap
	daemonSet appsv1.DaemonSet
}

// load decodes every document of daemonset.yaml strictly into its
// k8s.io/api type (decode: unknown, misspelled or duplicated
// fields fail).
func load(t *testing.T) manifest {
	t.Helper()
	var m manifest
	loadManifest(t, "daemonset.yaml", map[string]int{"Namespace": 1, "ConfigMap": 1, "DaemonSet": 1}, func(obj runtime.Object) string {
		switch o := obj.(type) {
		case *corev1.Namespace:
			return "Namespace"
		case *corev1.ConfigMap:
			m.configMap = *o
			return "ConfigMap"
		case *appsv1.DaemonSet:
			m.daemonSet = *o
			return "DaemonSet"
		}
		return fmt.Sprintf("%T", obj)
	})
	return m
}

func TestManifestMatchesConfig(t *testing.T) {
	m := load(t)
	ds := m.daemonSet

	// The ConfigMap carries deploy/config.yaml verbatim.
	cfg := readConfig(t, "config.yaml")
	require.Equal(t, string(cfg.raw), m.configMap.Data["config.yaml"], "ConfigMap config.yaml differs from deploy/config.yaml")
	assert.Equal(t, ds.Namespace, m.configMap.Namespace)
	rcfg := cfg.receiver

	spec := ds.Spec.Template.Spec
	require.Len(t, spec.Containers, 1)
	c := spec.Containers[0]
	assert.Equal(t, Image, c.Image)
	assert.True(t, spec.HostPID, "hostPID: GPU process attribution maps host PIDs")
	assert.Equal(t, ds.Spec.Selector.MatchLabels, ds.Spec.Template.Labels)

	volumes := volumesByName(spec)
	mountAt := func(p string) (corev1.VolumeMount, corev1.Volume) {
		t.Helper()
		return requireMount(t, c, volumes, p)
	}

	// root_path is the host's / mounted read-only.
	vm, v := mountAt(rcfg.RootPath)
	assert.True(t, vm.ReadOnly, "host root must be read-only")
	require.NotNil(t, v.HostPath)
	assert.Equal(t, "/", v.HostPath.Path)
	require.NotNil(t, vm.MountPropagation)
	assert.Equal(t, corev1.MountPropagationHostToContainer, *vm.MountPropagation, "new host mounts (cgroup, pod volumes) must stay visible")

	// The logs signal reads <root_path>/var/log/pods and /var/log/containers:
	// under the read-only host-root mount, not a mount of their own.
	for _, p := range []string{"/var/log/pods", "/var/log/containers"} {
		var under *corev1.VolumeMount
		for i := range c.VolumeMounts {
			m := &c.VolumeMounts[i]
			if strings.HasPrefix(path.Join(rcfg.RootPath, p), m.MountPath+"/") && (under == nil || len(m.MountPath) > len(under.MountPath)) {
				under = m
			}
		}
		require.NotNil(t, under, "%s is not mounted", p)
		assert.Equal(t, rcfg.RootPath, under.MountPath, "%s is read through the host-root mount", p)
		assert.True(t, under.ReadOnly, "%s must be read-only", p)
	}

	// CRI socket (the one the config names) and pod-resources socket
	// directory.
	assert.Equal(t, "/run/containerd/containerd.sock", rcfg.Runtime.CRIEndpoint)
	assert.Equal(t, rcfg.Runtime.CRIEndpoint, rcfg.Runtime.ContainerdEndpoint)
	_, v = mountAt(rcfg.Runtime.CRIEndpoint)
	require.NotNil(t, v.HostPath)
	assert.Equal(t, "/run/containerd/containerd.sock", v.HostPath.Path)
	require.NotNil(t, v.HostPath.Type)
	assert.Equal(t, corev1.HostPathSocket, *v.HostPath.Type)
	_, v = mountAt("/var/lib/kubelet/pod-resources")
	require.NotNil(t, v.HostPath)
	assert.Equal(t, "/var/lib/kubelet/pod-resources", v.HostPath.Path)

	requireConfigMounted(t, c, volumes, m.configMap)

	// The persistent sending queue: the exporter's storage is the
	// file_storage extension, enabled, whose directory (and compaction
	// directory) is a writable hostPath directory of the node, so the
	// queue outlives the pod.
	queueDir := requireQueue(t, cfg)
	vm, v = mountAt(queueDir)
	assert.False(t, vm.ReadOnly, "the queue directory %s must be writable", queueDir)
	require.NotNil(t, v.HostPath, "the queue must outlive the pod: a hostPath, not %+v", v.VolumeSource)
	require.NotNil(t, v.HostPath.Type)
	assert.Equal(t, corev1.HostPathDirectoryOrCreate, *v.HostPath.Type)

	// The OTLP push verifies the gateway (no insecure, no skipped
	// verification) against a CA file from the Secret the manifest mounts,
	// which must exist for the pod to start (optional: false).
	assert.Nil(t, cfg.conf.Get("exporters::otlp_grpc::tls::insecure"), "the OTLP push must use TLS")
	assert.Nil(t, cfg.conf.Get("exporters::otlp_grpc::tls::insecure_skip_verify"), "the OTLP push must verify the gateway")
	// Mutual TLS: the node shows a client certificate (the gateway of
	// deploy/gateway/ refuses a client without one of its CA).
	assert.Equal(t, map[string]string{
		"exporters::otlp_grpc::tls::ca_file":   "ca.crt",
		"exporters::otlp_grpc::tls::cert_file": "tls.crt",
		"exporters::otlp_grpc::tls::key_file":  "tls.key",
	}, requireSecretFiles(t, cfg, c, volumes, TLSSecret))

	// Every other mount is read-only (the root filesystem is too).
	requireReadOnlyBut(t, c, queueDir)

	// Every ${env:X} in the config is set on the container; the node name
	// comes from the downward API.
	env := requireEnvSet(t, cfg, c)
	assert.Equal(t, "${env:K8S_NODE_NAME}", rcfg.NodeName)
	require.NotNil(t, env["K8S_NODE_NAME"].ValueFrom)
	require.NotNil(t, env["K8S_NODE_NAME"].ValueFrom.FieldRef)
	assert.Equal(t, "spec.nodeName", env["K8S_NODE_NAME"].ValueFrom.FieldRef.FieldPath)

	// The default pays only for what it uses: one OTLP push, nothing that
	// converts for a reader who may not exist, nothing listening (no
	// container port; the Prometheus setups are deploy/prometheus-*/).
	assert.Equal(t, []string{"otlp_grpc"}, cfg.exporters(t), "exporters of the default config")
	assert.Equal(t, []any{"otlp_grpc"}, cfg.conf.Get("service::pipelines::metrics::exporters"))
	assert.Nil(t, cfg.conf.Get("receivers::otlp"), "the default config receives nothing")
	assert.Empty(t, c.Ports, "the default config listens on nothing: no container port")

	requireMemoryFor(t, cfg, c, 112)

	// Security: no privilege, read-only root, every capability dropped and
	// none added back (docs/deploy.md says why none is needed).
	sc := requireConfined(t, c)
	require.NotNil(t, sc.RunAsUser)
	assert.Equal(t, int64(0), *sc.RunAsUser, "the CRI and pod-resources sockets are root:root 0660")
}

// requireConfigMounted: the container's --config points into the mounted
// ConfigMap cm, at the key that holds the config.
func requireConfigMounted(t *testing.T, c corev1.Container, volumes map[string]corev1.Volume, cm corev1.ConfigMap) {
	t.Helper()
	i := slices.Index(c.Args, "--config")
	require.True(t, i >= 0 && i+1 < len(c.Args), "args %v lack --config <file>", c.Args)
	cfgPath := c.Args[i+1]
	_, v := requireMount(t, c, volumes, path.Dir(cfgPath))
	require.NotNil(t, v.ConfigMap, "config directory must be the ConfigMap")
	assert.Equal(t, cm.Name, v.ConfigMap.Name)
	assert.Contains(t, cm.Data, path.Base(cfgPath))
}

// requireReadOnlyBut: every mount of the container but the one at
// writable is read-only.
func requireReadOnlyBut(t *testing.T, c corev1.Container, writable string) {
	t.Helper()
	for _, vm := range c.VolumeMounts {
		if vm.MountPath != writable {
			assert.True(t, vm.ReadOnly, "mount %s must be read-only", vm.MountPath)
		}
	}
}

// volumesByName are a pod's volumes by name.
func volumesByName(spec corev1.PodSpec) map[string]corev1.Volume {
	volumes := map[string]corev1.Volume{}
	for _, v := range spec.Volumes {
		volumes[v.Name] = v
	}
	return volumes
}

// requireMount is the container's mount at p and its volume (of
// volumes); it fails when nothing is mounted there or the volume is
// missing.
func requireMount(t *testing.T, c corev1.Container, volumes map[string]corev1.Volume, p string) (corev1.VolumeMount, corev1.Volume) {
	t.Helper()
	for _, vm := range c.VolumeMounts {
		if vm.MountPath == p {
			v, ok := volumes[vm.Name]
			require.True(t, ok, "mount %s names volume %q that does not exist", p, vm.Name)
			return vm, v
		}
	}
	t.Fatalf("nothing mounted at %s", p)
	return corev1.VolumeMount{}, corev1.Volume{}
}

// requireConfined checks the container's security context: not
// privileged, no privilege escalation, a read-only root filesystem, every
// capability dropped and none added; it returns the context.
func requireConfined(t *testing.T, c corev1.Container) *corev1.SecurityContext {
	t.Helper()
	sc := c.SecurityContext
	require.NotNil(t, sc, "container %s has no securityContext", c.Name)
	require.NotNil(t, sc.ReadOnlyRootFilesystem)
	assert.True(t, *sc.ReadOnlyRootFilesystem)
	require.NotNil(t, sc.Privileged)
	assert.False(t, *sc.Privileged)
	require.NotNil(t, sc.AllowPrivilegeEscalation)
	assert.False(t, *sc.AllowPrivilegeEscalation)
	require.NotNil(t, sc.Capabilities)
	assert.Equal(t, []corev1.Capability{"ALL"}, sc.Capabilities.Drop)
	assert.Empty(t, sc.Capabilities.Add)
	return sc
}

// requireMemoryFor: the container's memory limit is the config's
// memory_limiter limit_mib plus headroom MiB (what is not Go heap: the
// binary's file-backed pages, ~52 MiB, stacks, the queue's page cache;
// docs/deploy.md, "Memory"), and spike_limit_mib is a quarter of
// limit_mib. (That the soft limit, limit_mib - spike_limit_mib, is above
// the heap at 1,000 containers is BENCHMARKS.md's "Dense node"
// measurement, not checked here.)
func requireMemoryFor(t *testing.T, cfg collectorConfig, c corev1.Container, headroom int64) {
	t.Helper()
	// The config is decoded through JSON: numbers are float64.
	limitF, ok := cfg.conf.Get("processors::memory_limiter::limit_mib").(float64)
	require.True(t, ok, "%s: memory_limiter without limit_mib", cfg.path)
	spikeF, ok := cfg.conf.Get("processors::memory_limiter::spike_limit_mib").(float64)
	require.True(t, ok, "%s: memory_limiter without spike_limit_mib", cfg.path)
	limit, spike := int(limitF), int(spikeF)
	mem := c.Resources.Limits.Memory()
	require.False(t, mem.IsZero(), "no memory limit")
	assert.Equal(t, (int64(limit)+headroom)<<20, mem.Value(), "%s: memory limit %s, want limit_mib %d + %d MiB", cfg.path, mem, limit, headroom)
	assert.Equal(t, limit/4, spike, "%s: spike_limit_mib is a quarter of limit_mib", cfg.path)
}

// The Secrets of the TLS setups (docs/deploy.md, "TLS"): the CA of the
// gateway's certificate for the OTLP push (deploy/daemonset.yaml), and the
// pull endpoint's certificate and client CA (prometheus-pull/).
const (
	TLSSecret     = "otelcol-containerstats-tls"      //nolint:gosec // G101: a Secret's name, not a credential
	PullTLSSecret = "otelcol-containerstats-pull-tls" //nolint:gosec // G101: a Secret's name, not a credential
)

// tlsFiles returns every file a tls section of the config names (keys
// ending in _file under a tls key), by key path.
func tlsFiles(cfg collectorConfig) map[string]string {
	out := map[string]string{}
	for _, k := range cfg.conf.AllKeys() {
		parts := strings.Split(k, "::")
		if len(parts) >= 2 && parts[len(parts)-2] == "tls" && strings.HasSuffix(parts[len(parts)-1], "_file") {
			if v, ok := cfg.conf.Get(k).(string); ok {
				out[k] = v
			}
		}
	}
	return out
}

// requireSecretFiles checks that every file the config's tls sections
// name is in a read-only mount of the container whose volume is the
// Secret secret, required (optional: false) and with no items (every key
// of the Secret is a file); it returns the Secret key each file reads, by
// config key.
func requireSecretFiles(t *testing.T, cfg collectorConfig, c corev1.Container, volumes map[string]corev1.Volume, secret string) map[string]string {
	t.Helper()
	files := tlsFiles(cfg)
	require.NotEmpty(t, files, "%s names no TLS file", cfg.path)
	out := map[string]string{}
	for k, f := range files {
		var vm *corev1.VolumeMount
		for i := range c.VolumeMounts {
			if path.Dir(f) == c.VolumeMounts[i].MountPath {
				vm = &c.VolumeMounts[i]
			}
		}
		require.NotNil(t, vm, "%s: %s = %s is in no mount of the container", cfg.path, k, f)
		assert.True(t, vm.ReadOnly, "%s must be read-only", vm.MountPath)
		v, ok := volumes[vm.Name]
		require.True(t, ok, "mount %s names volume %q that does not exist", vm.MountPath, vm.Name)
		require.NotNil(t, v.Secret, "%s: %s is not from a Secret", cfg.path, f)
		assert.Equal(t, secret, v.Secret.SecretName, "%s: %s", cfg.path, f)
		require.NotNil(t, v.Secret.Optional, "%s: the Secret must be required", cfg.path)
		assert.False(t, *v.Secret.Optional, "%s: the Secret must be required", cfg.path)
		assert.Empty(t, v.Secret.Items, "%s: every key of the Secret is a file", cfg.path)
		out[k] = path.Base(f)
	}
	return out
}

// collectorConfig is a collector configuration file of the deployment.
type collectorConfig struct {
	path     string
	raw      []byte
	conf     *confmap.Conf
	receiver *containerstatsreceiver.Config
}

// readConfig reads a collector config; its receiver section must be a
// valid config of this receiver (unknown keys fail as they would in the
// collector). The exporters' sections are checked by the collector itself
// in the end-to-end test (TestDeployConfigsValidate).
func readConfig(t *testing.T, path string) collectorConfig {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var whole map[string]any
	require.NoError(t, yaml.Unmarshal(raw, &whole), path)
	conf := confmap.NewFromStringMap(whole)
	sub, err := conf.Sub("receivers::container_stats")
	require.NoError(t, err, path)
	rcfg := containerstatsreceiver.NewFactory().CreateDefaultConfig().(*containerstatsreceiver.Config)
	require.NoError(t, sub.Unmarshal(rcfg), path)
	require.NoError(t, rcfg.Validate(), path)
	return collectorConfig{path: path, raw: raw, conf: conf, receiver: rcfg}
}

// exporters are the names of the exporters the config defines, sorted.
func (c collectorConfig) exporters(t *testing.T) []string {
	t.Helper()
	m, ok := c.conf.Get("exporters").(map[string]any)
	require.True(t, ok, "%s: no exporters section", c.path)
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// requireQueue checks that every exporter of the config with a sending
// queue keeps it in the file_storage extension, defined and enabled in
// the service, with its compaction directory the same as its directory,
// and that the config's push exporter has one; it returns the directory.
func requireQueue(t *testing.T, cfg collectorConfig) string {
	t.Helper()
	n := 0
	for _, e := range cfg.exporters(t) {
		if e == "prometheus" { // pull: nothing to queue
			continue
		}
		assert.Equal(t, "file_storage", cfg.conf.Get("exporters::"+e+"::sending_queue::storage"), "%s: exporter %s's queue is not persistent", cfg.path, e)
		assert.Equal(t, "30m", cfg.conf.Get("exporters::"+e+"::retry_on_failure::max_elapsed_time"), "%s: exporter %s", cfg.path, e)
		n++
	}
	require.Positive(t, n, "%s: no push exporter", cfg.path)
	assert.Equal(t, []any{"health_check", "file_storage"}, cfg.conf.Get("service::extensions"), "%s", cfg.path)
	dir, _ := cfg.conf.Get("extensions::file_storage::directory").(string)
	require.NotEmpty(t, dir, "%s: file_storage without a directory", cfg.path)
	// Compaction defaults to the OS temp directory: read-only in the pod.
	assert.Equal(t, dir, cfg.conf.Get("extensions::file_storage::compaction::directory"), "%s", cfg.path)
	return dir
}

// withoutExporters is the config as a map without what a Prometheus
// variant may change: the exporters, the pipeline's exporter list, the
// extensions but health_check (the pull endpoint queues nothing: no
// file_storage) and the memory limiter's size (checked against the pod's
// limit instead).
func (c collectorConfig) withoutExporters(t *testing.T) map[string]any {
	t.Helper()
	m := c.conf.ToStringMap()
	delete(m, "exporters")
	ext, _ := m["extensions"].(map[string]any)
	m["extensions"] = map[string]any{"health_check": ext["health_check"]}
	svc := m["service"].(map[string]any)
	if l, ok := svc["extensions"].([]any); ok {
		svc["extensions"] = slices.DeleteFunc(slices.Clone(l), func(e any) bool { return e == "file_storage" })
	}
	// The pull endpoint's memory limiter is larger (its pod's limit too:
	// TestPrometheusPullPatch).
	delete(m["processors"].(map[string]any), "memory_limiter")
	p, err := c.conf.Sub("service::pipelines::metrics")
	require.NoError(t, err, c.path)
	require.NotNil(t, p.Get("exporters"), "%s: pipeline without exporters", c.path)
	metrics := svc["pipelines"].(map[string]any)["metrics"].(map[string]any)
	delete(metrics, "exporters")
	return m
}

var envRef = regexp.MustCompile(`\$\{env:([A-Za-z_][A-Za-z0-9_]*)(:-[^}]*)?\}`)

// requireEnvSet checks that every ${env:X} of the config without a
// default (${env:X:-default}) is set on the container; it returns the
// container's environment by name.
func requireEnvSet(t *testing.T, cfg collectorConfig, c corev1.Container) map[string]corev1.EnvVar {
	t.Helper()
	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		env[e.Name] = e
	}
	refs := envRef.FindAllStringSubmatch(string(cfg.raw), -1)
	require.NotEmpty(t, refs, "%s reads no environment variable (the node name is one)", cfg.path)
	for _, sm := range refs {
		if sm[2] == "" {
			assert.Contains(t, env, sm[1], "%s reads ${env:%s}, the container does not set it", cfg.path, sm[1])
		}
	}
	return env
}

// TestPrometheusVariants: the two Prometheus setups (docs/deploy.md) are
// the default config with other exporters only: the same receiver and
// processors, one exporter each, every environment variable they need set
// by the manifest (or defaulted in the file).
func TestPrometheusVariants(t *testing.T) {
	m := load(t)
	c := m.daemonSet.Spec.Template.Spec.Containers[0]
	def := readConfig(t, "config.yaml")
	for _, v := range []struct{ dir, exporter string }{
		{"prometheus-pull", "prometheus"},
		{"prometheus-otlp", "otlp_http"},
	} {
		t.Run(v.dir, func(t *testing.T) {
			cfg := readConfig(t, path.Join(v.dir, "config.yaml"))
			assert.Equal(t, def.withoutExporters(t), cfg.withoutExporters(t), "%s differs from config.yaml in more than its exporters", cfg.path)
			assert.Equal(t, []string{v.exporter}, cfg.exporters(t))
			assert.Equal(t, []any{v.exporter}, cfg.conf.Get("service::pipelines::metrics::exporters"))
			requireEnvSet(t, cfg, c)
			if v.exporter != "prometheus" {
				assert.Equal(t, requireQueue(t, def), requireQueue(t, cfg), "the queue directory the manifest mounts")
			}
		})
	}
	// Prometheus 3's OTLP path: the exporter appends /v1/metrics to the
	// endpoint; Prometheus serves /api/v1/otlp/v1/metrics.
	ep, _ := readConfig(t, "prometheus-otlp/config.yaml").conf.Get("exporters::otlp_http::endpoint").(string)
	assert.Regexp(t, `^\$\{env:[A-Z_]+:-http://[^}]+/api/v1/otlp\}$`, ep)
}

// TestPrometheusPullPatch: deploy/prometheus-pull/daemonset-patch.yaml,
// strictly decoded and merged into the manifest's DaemonSet as kubectl
// patch merges it (strategic merge), adds the container port and nothing
// else, and that port is where the prometheus exporter of each pull
// config listens: the opt-in config beside the patch and
// config/cadvisor-compat.yaml.
func TestPrometheusPullPatch(t *testing.T) {
	m := load(t)
	raw, err := os.ReadFile("prometheus-pull/daemonset-patch.yaml")
	require.NoError(t, err)
	objs, err := decode(raw)
	require.NoError(t, err)
	require.Len(t, objs, 1)
	patch, ok := objs[0].(*appsv1.DaemonSet)
	require.True(t, ok, "the patch is a %T, not a DaemonSet", objs[0])
	assert.Equal(t, m.daemonSet.Name, patch.Name)
	assert.Equal(t, m.daemonSet.Namespace, patch.Namespace)

	orig, err := json.Marshal(m.daemonSet)
	require.NoError(t, err)
	pj, err := yaml.YAMLToJSON(raw)
	require.NoError(t, err)
	merged, err := strategicpatch.StrategicMergePatch(orig, pj, appsv1.DaemonSet{})
	require.NoError(t, err)
	var ds appsv1.DaemonSet
	require.NoError(t, json.Unmarshal(merged, &ds))

	require.Len(t, ds.Spec.Template.Spec.Containers, 1, "the patch names the manifest's container")
	c := ds.Spec.Template.Spec.Containers[0]
	require.NotEmpty(t, c.Ports)
	want := m.daemonSet.DeepCopy()
	want.Spec.Template.Spec.Containers[0].Ports = c.Ports
	want.Spec.Template.Spec.Containers[0].Resources.Limits = c.Resources.Limits
	volumes := map[string]corev1.Volume{}
	for i, v := range want.Spec.Template.Spec.Volumes {
		if v.Secret != nil && v.Secret.SecretName == TLSSecret {
			want.Spec.Template.Spec.Volumes[i].Secret.SecretName = PullTLSSecret
		}
	}
	for _, v := range ds.Spec.Template.Spec.Volumes {
		volumes[v.Name] = v
	}
	assert.Equal(t, want.Spec, ds.Spec, "the patch changes more than the container's ports, memory limit and the TLS volume's Secret")

	for _, f := range []string{"prometheus-pull/config.yaml", "../config/cadvisor-compat.yaml"} {
		cfg := readConfig(t, f)
		ep, _ := cfg.conf.Get("exporters::prometheus::endpoint").(string)
		_, port, err := net.SplitHostPort(ep)
		require.NoError(t, err, "%s: prometheus endpoint %q", f, ep)
		found := false
		for _, p := range c.Ports {
			if strconv.Itoa(int(p.ContainerPort)) == port && p.Protocol == corev1.ProtocolTCP {
				found = true
			}
		}
		assert.True(t, found, "%s: the prometheus exporter listens on %s, the patched container's ports are %v", f, ep, c.Ports)
		requireEnvSet(t, cfg, c)
		requireMemoryFor(t, cfg, c, 280)

		// Mutual TLS from the patched-in Secret: a server certificate
		// and the CA that client certificates must chain to.
		assert.Equal(t, map[string]string{
			"exporters::prometheus::tls::cert_file":      "tls.crt",
			"exporters::prometheus::tls::key_file":       "tls.key",
			"exporters::prometheus::tls::client_ca_file": "client-ca.crt",
		}, requireSecretFiles(t, cfg, c, volumes, PullTLSSecret), "%s: the pull endpoint's TLS", f)
		assert.Nil(t, cfg.conf.Get("exporters::prometheus::tls::enabled"), "%s", f)
	}
}

// TestGatewayConfig: deploy/gateway/config.yaml, the gateway of the
// OTLP push, receives OTLP/gRPC over mutual TLS on the port the
// DaemonSet's OTLP_ENDPOINT names, with its certificate, key and the CA of
// the clients' certificates from files (the Secret otel-gateway-tls), and
// exports what it receives.
func TestGatewayConfig(t *testing.T) {
	gw := readGatewayConfig(t)
	conf := gw.conf
	assert.Equal(t, map[string]string{
		"receivers::otlp::protocols::grpc::tls::cert_file":      "/etc/otelcol-tls/tls.crt",
		"receivers::otlp::protocols::grpc::tls::key_file":       "/etc/otelcol-tls/tls.key",
		"receivers::otlp::protocols::grpc::tls::client_ca_file": "/etc/otelcol-tls/ca.crt",
	}, tlsFiles(gw))
	assert.Equal(t, []any{"otlp"}, conf.Get("service::pipelines::metrics::receivers"))
	assert.NotEmpty(t, conf.Get("service::pipelines::metrics::exporters"))

	m := load(t)
	host, port := otlpEndpoint(t, m.daemonSet)
	assert.Equal(t, "otel-gateway.containerstats.svc", host, "the host the gateway's certificate must name (docs/deploy.md)")
	_, gwPort, err := net.SplitHostPort(conf.Get("receivers::otlp::protocols::grpc::endpoint").(string))
	require.NoError(t, err)
	assert.Equal(t, port, gwPort)
}
