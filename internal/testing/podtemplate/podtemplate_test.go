// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package podtemplate

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func daemonSet(t *testing.T) *appsv1.DaemonSet {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "deploy", "daemonset.yaml"))
	require.NoError(t, err)
	objs, err := Decode(raw)
	require.NoError(t, err)
	for _, o := range objs {
		if ds, ok := o.(*appsv1.DaemonSet); ok {
			return ds
		}
	}
	t.Fatal("no DaemonSet in deploy/daemonset.yaml")
	return nil
}

func TestDecodeStrict(t *testing.T) {
	for _, field := range []string{"hostPId", "hostPIDs"} {
		_, err := Decode([]byte("apiVersion: apps/v1\nkind: DaemonSet\nspec:\n  template:\n    spec:\n      " + field + ": true\n"))
		require.ErrorContains(t, err, field)
	}
	_, err := Decode([]byte("apiVersion: v1\nkind: ConfigMap\n---\napiVersion: v9\nkind: Nope\n"))
	require.ErrorContains(t, err, "document 2")
	objs, err := Decode([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: |\n    x\n---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: b\n"))
	require.NoError(t, err)
	require.Len(t, objs, 2)
	assert.Equal(t, "x\n", objs[0].(*corev1.ConfigMap).Data["k"], "a block scalar keeps its last newline across the separator")
}

// TestTranslateDaemonSet: the manifest's pod as CRI configs.
func TestTranslateDaemonSet(t *testing.T) {
	ds := daemonSet(t)
	n := Node{
		Name: "node-7", Namespace: "containerstats", PodName: "otelcol-x", PodUID: "11111111-2222-3333-4444-555555555555",
		HostPaths:   map[string]string{"/run/containerd/containerd.sock": "/tmp/t/cri.sock", "/var/lib/kubelet/pod-resources": "/tmp/t/pr"},
		ConfigMaps:  map[string]string{"otelcol-containerstats": "/tmp/t/cm"},
		HostNetwork: true,
	}
	p, err := Translate(ds.Spec.Template.Spec, n)
	require.NoError(t, err)

	sb := p.Sandbox
	assert.Equal(t, "/kubepods/burstable/pod"+n.PodUID, sb.Linux.CgroupParent)
	assert.Equal(t, runtimeapi.NamespaceMode_NODE, sb.Linux.SecurityContext.NamespaceOptions.Pid, "hostPID")
	assert.Equal(t, runtimeapi.NamespaceMode_NODE, sb.Linux.SecurityContext.NamespaceOptions.Network)
	assert.Equal(t, n.PodUID, sb.Metadata.Uid)
	assert.Equal(t, n.PodUID, sb.Labels["io.kubernetes.pod.uid"])

	c := p.Container
	assert.Equal(t, "otelcol-containerstats:0.0.0-dev", c.Image.Image)
	assert.Equal(t, []string{"--config", "/etc/otelcol/config.yaml"}, c.Args)
	assert.Empty(t, c.Command)
	assert.Equal(t, "otelcol", c.Labels["io.kubernetes.container.name"])
	env := map[string]string{}
	for _, kv := range c.Envs {
		env[kv.Key] = string(kv.Value)
	}
	assert.Equal(t, "node-7", env["K8S_NODE_NAME"])
	assert.Equal(t, "otel-gateway.containerstats.svc:4317", env["OTLP_ENDPOINT"])

	byPath := map[string]*runtimeapi.Mount{}
	for _, m := range c.Mounts {
		byPath[m.ContainerPath] = m
	}
	assert.Equal(t, &runtimeapi.Mount{ContainerPath: "/hostfs", HostPath: "/", Readonly: true,
		Propagation: runtimeapi.MountPropagation_PROPAGATION_HOST_TO_CONTAINER}, byPath["/hostfs"])
	assert.Equal(t, &runtimeapi.Mount{ContainerPath: "/run/containerd/containerd.sock", HostPath: "/tmp/t/cri.sock", Readonly: true}, byPath["/run/containerd/containerd.sock"])
	assert.Equal(t, &runtimeapi.Mount{ContainerPath: "/var/lib/kubelet/pod-resources", HostPath: "/tmp/t/pr", Readonly: true}, byPath["/var/lib/kubelet/pod-resources"])
	assert.Equal(t, &runtimeapi.Mount{ContainerPath: "/etc/otelcol", HostPath: "/tmp/t/cm", Readonly: true}, byPath["/etc/otelcol"])
	assert.Len(t, c.Mounts, 4)

	sc := c.Linux.SecurityContext
	assert.Equal(t, []string{"ALL"}, sc.Capabilities.DropCapabilities)
	assert.Empty(t, sc.Capabilities.AddCapabilities)
	assert.True(t, sc.ReadonlyRootfs)
	assert.True(t, sc.NoNewPrivs)
	assert.Equal(t, int64(0), sc.RunAsUser.Value)
	assert.Equal(t, runtimeapi.SecurityProfile_RuntimeDefault, sc.Seccomp.ProfileType)
	assert.Equal(t, runtimeapi.NamespaceMode_NODE, sc.NamespaceOptions.Pid)
	assert.Equal(t, int64(256<<20), c.Linux.Resources.MemoryLimitInBytes)
	assert.Equal(t, int64(51), c.Linux.Resources.CpuShares, "50m CPU request")
	assert.Zero(t, c.Linux.Resources.CpuQuota, "no CPU limit")
}

func TestTranslateRefuses(t *testing.T) {
	base := func() corev1.PodSpec {
		return corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Image: "i",
				VolumeMounts: []corev1.VolumeMount{{Name: "v", MountPath: "/m"}}}},
			Volumes: []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/h"}}}},
		}
	}
	tru := true
	cases := map[string]func(*corev1.PodSpec){
		"two containers": func(s *corev1.PodSpec) { s.Containers = append(s.Containers, s.Containers[0]) },
		"missing volume": func(s *corev1.PodSpec) { s.Volumes = nil },
		"emptyDir": func(s *corev1.PodSpec) {
			s.Volumes[0].VolumeSource = corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}
		},
		"unknown ConfigMap": func(s *corev1.PodSpec) {
			s.Volumes[0].VolumeSource = corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "x"}}}
		},
		"subPath":    func(s *corev1.PodSpec) { s.Containers[0].VolumeMounts[0].SubPath = "a" },
		"privileged": func(s *corev1.PodSpec) { s.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: &tru} },
		"secret env": func(s *corev1.PodSpec) {
			s.Containers[0].Env = []corev1.EnvVar{{Name: "E", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{}}}}
		},
		"fieldRef": func(s *corev1.PodSpec) {
			s.Containers[0].Env = []corev1.EnvVar{{Name: "E", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}}}
		},
	}
	for name, mut := range cases {
		t.Run(name, func(t *testing.T) {
			s := base()
			mut(&s)
			_, err := Translate(s, Node{})
			require.Error(t, err)
		})
	}
	_, err := Translate(base(), Node{})
	require.NoError(t, err)
}

func TestQoSAndResources(t *testing.T) {
	q := resource.MustParse
	g := corev1.Container{Resources: corev1.ResourceRequirements{
		Limits: corev1.ResourceList{corev1.ResourceCPU: q("500m"), corev1.ResourceMemory: q("64Mi")}}}
	assert.Equal(t, "guaranteed", qosClass(g))
	assert.Equal(t, "/kubepods/podu", cgroupParent("guaranteed", "u"))
	r := resources(g)
	assert.Equal(t, int64(50000), r.CpuQuota)
	assert.Equal(t, int64(100000), r.CpuPeriod)
	assert.Equal(t, int64(64<<20), r.MemoryLimitInBytes)
	assert.Equal(t, "besteffort", qosClass(corev1.Container{}))
	assert.Equal(t, int64(2), resources(corev1.Container{}).CpuShares)
	assert.Equal(t, "burstable", qosClass(corev1.Container{Resources: corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: q("100m")}}}))
}

// FuzzDecode: arbitrary manifests give objects of the two registered
// groups or an error, never a panic; a decoded DaemonSet translates or
// errors, never panics.
func FuzzDecode(f *testing.F) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "deploy", "daemonset.yaml"))
	require.NoError(f, err)
	f.Add(raw)
	f.Add([]byte("apiVersion: v1\nkind: ConfigMap\n---\n"))
	f.Add([]byte("---\n---\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		objs, err := Decode(b)
		if err != nil {
			return
		}
		for _, o := range objs {
			switch x := o.(type) {
			case *appsv1.DaemonSet:
				_, _ = Translate(x.Spec.Template.Spec, Node{})
			default:
				if gv := o.GetObjectKind().GroupVersionKind().GroupVersion().String(); gv != "v1" && gv != "apps/v1" {
					t.Fatalf("decoded %T from group %q", o, gv)
				}
			}
		}
	})
}
