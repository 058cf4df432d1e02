// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

// Package deploy holds the DaemonSet manifest and the collector config it
// runs; this test keeps the two consistent.
package deploy

import (
	"os"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	containerstatsreceiver "github.com/containerstats/containerstatsreceiver"
)

// Image is the reference `make image` gives the archive (see
// deploy/image/build.sh); the manifest must run that image.
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
	raw, err := os.ReadFile("daemonset.yaml")
	require.NoError(t, err)
	objs, err := decode(raw)
	require.NoError(t, err)
	var m manifest
	kinds := map[string]int{}
	for _, obj := range objs {
		switch o := obj.(type) {
		case *corev1.Namespace:
			kinds["Namespace"]++
		case *corev1.ConfigMap:
			kinds["ConfigMap"]++
			m.configMap = *o
		case *appsv1.DaemonSet:
			kinds["DaemonSet"]++
			m.daemonSet = *o
		default:
			t.Fatalf("unexpected object %T in daemonset.yaml", obj)
		}
	}
	require.Equal(t, map[string]int{"Namespace": 1, "ConfigMap": 1, "DaemonSet": 1}, kinds)
	return m
}

func TestManifestMatchesConfig(t *testing.T) {
	m := load(t)
	ds := m.daemonSet

	// The ConfigMap carries deploy/config.yaml verbatim.
	cfgFile, err := os.ReadFile("config.yaml")
	require.NoError(t, err)
	require.Equal(t, string(cfgFile), m.configMap.Data["config.yaml"], "ConfigMap config.yaml differs from deploy/config.yaml")
	assert.Equal(t, ds.Namespace, m.configMap.Namespace)

	// The receiver's section is a valid config of this receiver (unknown
	// keys fail as they would in the collector).
	var whole map[string]any
	require.NoError(t, yaml.Unmarshal(cfgFile, &whole))
	conf := confmap.NewFromStringMap(whole)
	sub, err := conf.Sub("receivers::container_stats")
	require.NoError(t, err)
	rcfg := containerstatsreceiver.NewFactory().CreateDefaultConfig().(*containerstatsreceiver.Config)
	require.NoError(t, sub.Unmarshal(rcfg))
	require.NoError(t, rcfg.Validate())

	spec := ds.Spec.Template.Spec
	require.Len(t, spec.Containers, 1)
	c := spec.Containers[0]
	assert.Equal(t, Image, c.Image)
	assert.True(t, spec.HostPID, "hostPID: GPU process attribution maps host PIDs")
	assert.Equal(t, ds.Spec.Selector.MatchLabels, ds.Spec.Template.Labels)

	volumes := map[string]corev1.Volume{}
	for _, v := range spec.Volumes {
		volumes[v.Name] = v
	}
	mountAt := func(p string) (corev1.VolumeMount, corev1.Volume) {
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
	vm, v = mountAt(rcfg.Runtime.CRIEndpoint)
	require.NotNil(t, v.HostPath)
	assert.Equal(t, "/run/containerd/containerd.sock", v.HostPath.Path)
	require.NotNil(t, v.HostPath.Type)
	assert.Equal(t, corev1.HostPathSocket, *v.HostPath.Type)
	vm, v = mountAt("/var/lib/kubelet/pod-resources")
	require.NotNil(t, v.HostPath)
	assert.Equal(t, "/var/lib/kubelet/pod-resources", v.HostPath.Path)

	// --config points into the mounted ConfigMap, at the key that holds the config.
	i := slices.Index(c.Args, "--config")
	require.True(t, i >= 0 && i+1 < len(c.Args), "args %v lack --config <file>", c.Args)
	cfgPath := c.Args[i+1]
	vm, v = mountAt(path.Dir(cfgPath))
	require.NotNil(t, v.ConfigMap, "config directory must be the ConfigMap")
	assert.Equal(t, m.configMap.Name, v.ConfigMap.Name)
	assert.Contains(t, m.configMap.Data, path.Base(cfgPath))

	// Every mount is read-only (the root filesystem is too).
	for _, vm := range c.VolumeMounts {
		assert.True(t, vm.ReadOnly, "mount %s must be read-only", vm.MountPath)
	}

	// Every ${env:X} in the config is set on the container; the node name
	// comes from the downward API.
	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		env[e.Name] = e
	}
	for _, sm := range regexp.MustCompile(`\$\{env:([A-Za-z_][A-Za-z0-9_]*)`).FindAllStringSubmatch(string(cfgFile), -1) {
		assert.Contains(t, env, sm[1], "config reads ${env:%s}, the container does not set it", sm[1])
	}
	assert.Equal(t, "${env:K8S_NODE_NAME}", rcfg.NodeName)
	require.NotNil(t, env["K8S_NODE_NAME"].ValueFrom)
	require.NotNil(t, env["K8S_NODE_NAME"].ValueFrom.FieldRef)
	assert.Equal(t, "spec.nodeName", env["K8S_NODE_NAME"].ValueFrom.FieldRef.FieldPath)

	// The Prometheus exporter's port is the container port.
	pe, err := conf.Sub("exporters::prometheus")
	require.NoError(t, err)
	ep, _ := pe.Get("endpoint").(string)
	require.NotEmpty(t, c.Ports)
	assert.True(t, strings.HasSuffix(ep, ":9464") && c.Ports[0].ContainerPort == 9464, "prometheus endpoint %q vs port %d", ep, c.Ports[0].ContainerPort)

	// Security: no privilege, read-only root, every capability dropped and
	// none added back (docs/deploy.md says why none is needed).
	sc := c.SecurityContext
	require.NotNil(t, sc)
	require.NotNil(t, sc.ReadOnlyRootFilesystem)
	assert.True(t, *sc.ReadOnlyRootFilesystem)
	require.NotNil(t, sc.Privileged)
	assert.False(t, *sc.Privileged)
	require.NotNil(t, sc.AllowPrivilegeEscalation)
	assert.False(t, *sc.AllowPrivilegeEscalation)
	require.NotNil(t, sc.Capabilities)
	assert.Equal(t, []corev1.Capability{"ALL"}, sc.Capabilities.Drop)
	assert.Empty(t, sc.Capabilities.Add)
	require.NotNil(t, sc.RunAsUser)
	assert.Equal(t, int64(0), *sc.RunAsUser, "the CRI and pod-resources sockets are root:root 0660")
}
