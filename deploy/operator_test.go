// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package deploy

import (
	"bytes"
	"errors"
	"os"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// OperatorFile is the OpenTelemetry Operator example: a ServiceAccount and
// an OpenTelemetryCollector.
const OperatorFile = "operator/collector.yaml"

// operatorCollector is the part of the Operator's OpenTelemetryCollector
// (v1beta1) the example uses, with the k8s.io/api types the CRD's schema
// takes them from. Decoded strictly: a field of the example missing here
// fails the test, so every field the example sets is compared below.
type operatorCollector struct {
	metav1.TypeMeta `json:",inline"`
	Metadata        metav1.ObjectMeta `json:"metadata"`
	Spec            struct {
		Mode                    string                         `json:"mode"`
		Image                   string                         `json:"image"`
		ImagePullPolicy         corev1.PullPolicy              `json:"imagePullPolicy"`
		ServiceAccount          string                         `json:"serviceAccount"`
		HostPID                 bool                           `json:"hostPID"`
		PriorityClassName       string                         `json:"priorityClassName"`
		Tolerations             []corev1.Toleration            `json:"tolerations"`
		DaemonSetUpdateStrategy appsv1.DaemonSetUpdateStrategy `json:"daemonSetUpdateStrategy"`
		Env                     []corev1.EnvVar                `json:"env"`
		Resources               corev1.ResourceRequirements    `json:"resources"`
		SecurityContext         *corev1.SecurityContext        `json:"securityContext"`
		VolumeMounts            []corev1.VolumeMount           `json:"volumeMounts"`
		Volumes                 []corev1.Volume                `json:"volumes"`
		Config                  map[string]any                 `json:"config"`
	} `json:"spec"`
}

// loadOperator decodes the example's two documents strictly.
func loadOperator(t *testing.T) (*corev1.ServiceAccount, operatorCollector) {
	t.Helper()
	raw, err := os.ReadFile(OperatorFile)
	require.NoError(t, err)
	docs := bytes.Split(raw, []byte("\n---\n"))
	require.Len(t, docs, 2, "%s: a ServiceAccount and an OpenTelemetryCollector", OperatorFile)
	objs, err := decode(docs[0])
	require.NoError(t, err)
	require.Len(t, objs, 1)
	sa, ok := objs[0].(*corev1.ServiceAccount)
	require.True(t, ok, "%s: the first document is a %T, not a ServiceAccount", OperatorFile, objs[0])
	// Case-sensitive and strict, as the API server decodes it (sigs.k8s.io/yaml's
	// UnmarshalStrict matches field names regardless of case).
	j, err := yaml.YAMLToJSON(docs[1])
	require.NoError(t, err)
	var col operatorCollector
	strict, err := kjson.UnmarshalStrict(j, &col, kjson.DisallowDuplicateFields, kjson.DisallowUnknownFields)
	require.NoError(t, err)
	require.NoError(t, errors.Join(strict...), "%s", OperatorFile)
	require.Equal(t, "opentelemetry.io/v1beta1", col.APIVersion)
	require.Equal(t, "OpenTelemetryCollector", col.Kind)
	return sa, col
}

// withoutNamed returns the mounts (or volumes) but the one named
// name: the config's, which the Operator makes itself (its ConfigMap at
// /conf, --config=/conf/collector.yaml).
func withoutNamed[T any](l []T, name string, nameOf func(T) string) []T {
	return slices.DeleteFunc(slices.Clone(l), func(e T) bool { return nameOf(e) == name })
}

// TestOperatorExample: deploy/operator/collector.yaml gives the pod of
// deploy/daemonset.yaml, field by field: the image and its pull policy,
// hostPID, the priority class, the tolerations, the update strategy, the
// environment, requests and limits, the security context, every volume
// and mount but the config's (the Operator mounts its own ConfigMap), and
// deploy/config.yaml as the config (health_check in it: the Operator adds
// the probes on its port only then). Differences, each by design:
//   - no API token: the CR has no automountServiceAccountToken, so it
//     names a ServiceAccount of the file's own that has it off (the
//     manifest sets it off on the pod, as the namespace's default account);
//   - the container's name, args and config mount are the Operator's;
//   - the probes are the Operator's, from the health_check endpoint's port
//     (GET / on it, as the manifest's);
//   - enableServiceLinks: no field in the CR (the Operator's default).
func TestOperatorExample(t *testing.T) {
	sa, col := loadOperator(t)
	m := load(t)
	ds := m.daemonSet
	spec := ds.Spec.Template.Spec
	c := spec.Containers[0]
	s := col.Spec

	assert.Equal(t, "daemonset", s.Mode)
	assert.Equal(t, ds.Namespace, col.Metadata.Namespace)
	assert.Equal(t, ds.Namespace, sa.Namespace)
	assert.Equal(t, c.Image, s.Image)
	assert.Equal(t, c.ImagePullPolicy, s.ImagePullPolicy)
	assert.Equal(t, spec.HostPID, s.HostPID)
	assert.Equal(t, spec.PriorityClassName, s.PriorityClassName)
	assert.Equal(t, spec.Tolerations, s.Tolerations)
	assert.Equal(t, ds.Spec.UpdateStrategy, s.DaemonSetUpdateStrategy)
	assert.Equal(t, c.Env, s.Env)
	assert.Equal(t, c.Resources, s.Resources)
	assert.Equal(t, c.SecurityContext, s.SecurityContext)

	// Every volume and mount but the config's.
	var cfgVolume string
	for _, vm := range c.VolumeMounts {
		if vm.MountPath == "/etc/otelcol" {
			cfgVolume = vm.Name
		}
	}
	require.NotEmpty(t, cfgVolume, "the manifest mounts no config at /etc/otelcol")
	mountName := func(vm corev1.VolumeMount) string { return vm.Name }
	volName := func(v corev1.Volume) string { return v.Name }
	assert.Equal(t, withoutNamed(c.VolumeMounts, cfgVolume, mountName), s.VolumeMounts)
	assert.Equal(t, withoutNamed(spec.Volumes, cfgVolume, volName), s.Volumes)

	// No token: the pod's ServiceAccount has it off.
	require.NotNil(t, spec.AutomountServiceAccountToken)
	require.False(t, *spec.AutomountServiceAccountToken, "the manifest mounts no token")
	assert.Equal(t, sa.Name, s.ServiceAccount)
	require.NotNil(t, sa.AutomountServiceAccountToken, "%s: the ServiceAccount must turn the token off", OperatorFile)
	assert.False(t, *sa.AutomountServiceAccountToken, "%s: the ServiceAccount must turn the token off", OperatorFile)

	// The config is deploy/config.yaml, health_check in it.
	assert.Equal(t, readConfig(t, "config.yaml").conf.ToStringMap(), normalizeJSON(t, s.Config), "%s's config differs from config.yaml", OperatorFile)
	assert.Equal(t, healthEndpoint, s.Config["extensions"].(map[string]any)["health_check"].(map[string]any)["endpoint"])
}

// normalizeJSON round-trips v through YAML as readConfig decodes a file
// (numbers float64), so that two decodings compare equal.
func normalizeJSON(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := yaml.Marshal(v)
	require.NoError(t, err)
	var out map[string]any
	require.NoError(t, yaml.Unmarshal(b, &out))
	return out
}
