// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build realmachine

// The official OpenTelemetry Collector Helm chart with deploy/helm/values.yaml,
// rendered by helm (`make helm`) and compared with deploy/daemonset.yaml
// (run with `make kube-test`, which builds helm first).

package deploy

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/containerstats/containerstatsreceiver/internal/testing/kubetest"
)

// HelmValues is the values file for the official chart.
const HelmValues = "helm/values.yaml"

// ChartVersion is the version of the official chart the values file is
// written for (Makefile OTEL_COLLECTOR_CHART_VERSION).
const ChartVersion = "0.170.0"

// helmKubeVersion is the Kubernetes version helm renders for: the test
// cluster's (Makefile KUBE_VERSION).
const helmKubeVersion = "v1.37.2"

// helmRelease is the release name the docs install the chart as.
const helmRelease = "containerstats"

// fromEnv is the environment variable's value, or def.
func fromEnv(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// helmBin is the helm of `make helm` (HELM_BIN); a missing one fails the
// test, naming the target.
func helmBin(t *testing.T) string {
	t.Helper()
	bin, err := filepath.Abs(fromEnv("HELM_BIN", filepath.Join("..", "bin", "helm", "helm")))
	require.NoError(t, err)
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("helm not found (%v): run `make helm`, or set HELM_BIN", err)
	}
	return bin
}

// chartDir is the official chart (OTEL_COLLECTOR_CHART; default the copy
// beside the repository), at ChartVersion.
func chartDir(t *testing.T) string {
	t.Helper()
	dir := fromEnv("OTEL_COLLECTOR_CHART", filepath.Join("..", "..", "shared", "charts", "opentelemetry-collector"))
	raw, err := os.ReadFile(filepath.Join(dir, "Chart.yaml"))
	if err != nil {
		t.Fatalf("the OpenTelemetry Collector chart %s: %v (set OTEL_COLLECTOR_CHART to a copy: helm pull open-telemetry/opentelemetry-collector --version %s --untar)", ChartVersion, err, ChartVersion)
	}
	var chart struct{ Name, Version string }
	require.NoError(t, yaml.Unmarshal(raw, &chart))
	require.Equal(t, "opentelemetry-collector", chart.Name, "%s", dir)
	require.Equal(t, ChartVersion, chart.Version, "%s: deploy/helm/values.yaml is written for chart %s", dir, ChartVersion)
	return dir
}

// helmTemplate renders the chart with the values file and extra helm
// arguments into namespace ns.
func helmTemplate(t *testing.T, ns string, args ...string) ([]byte, error) {
	t.Helper()
	return kubetest.Helm(t, helmBin(t), append([]string{
		"template", helmRelease, chartDir(t),
		"--namespace", ns, "--kube-version", helmKubeVersion, "--values", HelmValues,
	}, args...)...)
}

// chartOnlyEnv are the variables the chart sets on every collector for its
// own default config (the collector's telemetry resource); ours reads none.
var chartOnlyEnv = []string{"OTEL_K8S_NODE_NAME", "OTEL_K8S_NODE_IP", "OTEL_K8S_NAMESPACE", "OTEL_K8S_POD_NAME", "OTEL_K8S_POD_IP"}

// TestHelmChart renders the official chart with deploy/helm/values.yaml and
// holds what it renders to deploy/daemonset.yaml: only the ConfigMap and
// the DaemonSet (no Service, ServiceAccount or RBAC), the config equal to
// deploy/config.yaml, and the DaemonSet's pod spec equal to the manifest's
// field by field once the differences listed (and logged) below are
// taken out, each of which is checked to be exactly what it is said to
// be. A change to one side only (the values file, the manifest, the
// config, or a chart whose defaults changed) fails it. And the chart's
// NOTES.txt check bites: without health_check in the config, it refuses to
// render.
func TestHelmChart(t *testing.T) {
	m := load(t)
	want := m.daemonSet
	out, err := helmTemplate(t, want.Namespace)
	require.NoError(t, err)
	objs, err := decode(out)
	require.NoError(t, err, "the rendered chart, strictly decoded")
	var cm *corev1.ConfigMap
	var got *appsv1.DaemonSet
	for _, o := range objs {
		switch o := o.(type) {
		case *corev1.ConfigMap:
			require.Nil(t, cm, "two ConfigMaps")
			cm = o
		case *appsv1.DaemonSet:
			require.Nil(t, got, "two DaemonSets")
			got = o
		default:
			t.Errorf("the chart renders a %T: the manifest has none", o)
		}
	}
	require.NotNil(t, cm, "no ConfigMap rendered")
	require.NotNil(t, got, "no DaemonSet rendered")

	// The config is deploy/config.yaml.
	cfg := readConfig(t, "config.yaml")
	var relay map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(cm.Data["relay"]), &relay))
	assert.Equal(t, cfg.conf.ToStringMap(), relay, "the chart's config (%s's config) differs from config.yaml", HelmValues)
	for _, e := range chartOnlyEnv {
		require.NotContains(t, string(cfg.raw), "${env:"+e, "config.yaml reads %s: the manifest must set it too", e)
	}

	var diffs []string
	allow := func(field, chart, manifest, why string) {
		diffs = append(diffs, fmt.Sprintf("%s: chart %s, manifest %s (%s)", field, chart, manifest, why))
	}

	// The DaemonSet.
	assert.Equal(t, want.Namespace, got.Namespace)
	assert.Equal(t, want.Spec.UpdateStrategy, got.Spec.UpdateStrategy)
	assert.Equal(t, want.Name+"-agent", got.Name)
	allow("metadata.name", got.Name, want.Name, "the chart appends -agent to fullnameOverride")
	require.NotNil(t, got.Spec.RevisionHistoryLimit)
	assert.Nil(t, want.Spec.RevisionHistoryLimit)
	assert.Equal(t, int32(10), *got.Spec.RevisionHistoryLimit)
	allow("spec.revisionHistoryLimit", "10", "unset", "the API server's default is 10")
	for k, v := range want.Spec.Template.Labels {
		assert.Equal(t, v, got.Spec.Template.Labels[k], "the pods' label %s", k)
		assert.Equal(t, v, got.Spec.Selector.MatchLabels[k], "the selector's label %s", k)
	}
	allow("labels", fmt.Sprint(got.Spec.Template.Labels), fmt.Sprint(want.Spec.Template.Labels), "the chart's release and component labels on top of ours")
	assert.Contains(t, got.Spec.Template.Annotations, "checksum/config")
	allow("template annotations", "checksum/config", "none", "the chart rolls the pods when its config changes")

	ws := want.Spec.Template.Spec.DeepCopy()
	gs := got.Spec.Template.Spec.DeepCopy()
	require.Len(t, gs.Containers, 1)
	wc, gc := &ws.Containers[0], &gs.Containers[0]

	assert.Equal(t, "opentelemetry-collector", gc.Name)
	allow("container name", gc.Name, wc.Name, "the chart names it after itself")
	gc.Name = wc.Name

	// The config's file: the chart's ConfigMap (key relay) at /conf.
	const cfgName = "opentelemetry-collector-configmap"
	assert.Equal(t, []string{"--config=/conf/relay.yaml"}, gc.Args)
	assert.Equal(t, []string{"--config", "/etc/otelcol/config.yaml"}, wc.Args)
	allow("args", fmt.Sprint(gc.Args), fmt.Sprint(wc.Args), "the chart's config file")
	gc.Args = wc.Args
	gm := slices.IndexFunc(gc.VolumeMounts, func(v corev1.VolumeMount) bool { return v.Name == cfgName })
	require.GreaterOrEqual(t, gm, 0, "the chart mounts no config")
	assert.Equal(t, corev1.VolumeMount{Name: cfgName, MountPath: "/conf"}, gc.VolumeMounts[gm])
	gc.VolumeMounts = slices.Delete(gc.VolumeMounts, gm, gm+1)
	gv := slices.IndexFunc(gs.Volumes, func(v corev1.Volume) bool { return v.Name == cfgName })
	require.GreaterOrEqual(t, gv, 0)
	assert.Equal(t, corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: cm.Name},
		Items:                []corev1.KeyToPath{{Key: "relay", Path: "relay.yaml"}},
	}}, gs.Volumes[gv].VolumeSource)
	gs.Volumes = slices.Delete(gs.Volumes, gv, gv+1)
	wm := slices.IndexFunc(wc.VolumeMounts, func(v corev1.VolumeMount) bool { return v.MountPath == "/etc/otelcol" })
	require.GreaterOrEqual(t, wm, 0)
	wcfg := wc.VolumeMounts[wm].Name
	wc.VolumeMounts = slices.Delete(wc.VolumeMounts, wm, wm+1)
	ws.Volumes = slices.DeleteFunc(ws.Volumes, func(v corev1.Volume) bool { return v.Name == wcfg })
	allow("config volume", cfgName+" (ConfigMap "+cm.Name+", key relay) at /conf, readOnly unset",
		wcfg+" (ConfigMap "+m.configMap.Name+", key config.yaml) at /etc/otelcol, readOnly",
		"the chart's ConfigMap; a ConfigMap volume is read-only whatever the mount says")

	// The chart's own variables (its default config's telemetry
	// resource); ours reads none of them (checked above).
	var chartEnv []string
	gc.Env = slices.DeleteFunc(gc.Env, func(e corev1.EnvVar) bool {
		if slices.Contains(chartOnlyEnv, e.Name) {
			chartEnv = append(chartEnv, e.Name)
			return true
		}
		return false
	})
	assert.Equal(t, chartOnlyEnv, chartEnv)
	allow("env", strings.Join(chartEnv, ", "), "none", "the chart sets them for its default config's telemetry resource; ours reads none")

	assert.Equal(t, &corev1.PodSecurityContext{}, gs.SecurityContext)
	gs.SecurityContext = ws.SecurityContext
	allow("pod securityContext", "{}", "unset", "the same: nothing set")
	assert.Equal(t, "default", gs.ServiceAccountName)
	assert.Empty(t, ws.ServiceAccountName)
	gs.ServiceAccountName = ws.ServiceAccountName
	allow("serviceAccountName", "default", "unset", "the namespace's default account either way, its token not mounted")
	assert.Nil(t, gs.EnableServiceLinks)
	require.NotNil(t, ws.EnableServiceLinks)
	gs.EnableServiceLinks = ws.EnableServiceLinks
	allow("enableServiceLinks", "unset (true)", "false", "the chart has no value for it: the namespace's Services as variables, which our config does not read")

	// Everything else, field by field: image, pull policy, args, env,
	// mounts, security context, resources, probes, volumes, hostPID,
	// hostNetwork, the token, priority, tolerations, ports (none).
	assert.Equal(t, *ws, *gs, "the chart's pod (%s) differs from deploy/daemonset.yaml's beyond the differences allowed", HelmValues)
	t.Logf("allowed differences, chart (%s) against deploy/daemonset.yaml:\n  %s", HelmValues, strings.Join(diffs, "\n  "))

	// The chart's NOTES.txt refuses a config without health_check.
	_, err = helmTemplate(t, want.Namespace, "--set", "config.service.extensions={file_storage}")
	require.Error(t, err, "the chart rendered a config without health_check")
	require.Contains(t, err.Error(), "requires that the health_check extension")
	t.Logf("without health_check: %v", err)
}
