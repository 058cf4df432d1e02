// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build realmachine

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/containerstats/containerstatsreceiver/internal/testing/kubetest"
)

// seriesWindow is the window in which every family of ours has reported
// at least once: the filesystem's 1-minute interval and a scrape.
const seriesWindow = 70 * time.Second

// helmChart: the official OpenTelemetry Collector chart
// (OTEL_COLLECTOR_CHART, rendered by `make helm`'s helm with
// deploy/helm/values.yaml for this cluster's version) in place of
// deploy/daemonset.yaml's DaemonSet on the same node: its documents
// applied as the manifests are (server-side, strict, no warning, the same
// overlay: daemonSetOverlay), the manifests' DaemonSet deleted, and the
// same series arrive: in a seriesWindow of each collector, every metric
// name of the node, its system containers and the workloads' containers
// and pods (by namespace, pod and container), and of the collector's own
// pod and container (seriesKeys). Last: the node keeps the chart's
// collector.
func (k *cluster) helmChart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	root := repoRoot(t)
	bin := envOr("HELM_BIN", filepath.Join(root, "bin", "helm", "helm"))
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("helm: %v (make helm, or set HELM_BIN)", err)
	}
	chart := envOr("OTEL_COLLECTOR_CHART", filepath.Join(root, "..", "shared", "charts", "opentelemetry-collector"))
	sv, err := k.cs.Discovery().ServerVersion()
	require.NoError(t, err)
	out, err := kubetest.Helm(t, bin, "template", "containerstats", chart, "--namespace", collectorNS,
		"--kube-version", sv.GitVersion, "--values", filepath.Join(root, "deploy", "helm", "values.yaml"))
	require.NoError(t, err)
	docs := kubetest.Docs(t, "helm template", out)
	var kinds []string
	for _, d := range docs {
		kinds = append(kinds, d.Obj.GetKind())
	}
	require.ElementsMatch(t, []string{"ConfigMap", "DaemonSet"}, kinds, "the chart renders")

	// The manifests' collector, long enough Ready for a full window.
	sel := "app.kubernetes.io/name=" + dsName
	old := k.waitLabelled(t, collectorNS, sel, "")
	if d := time.Until(podReadyAt(old).Add(seriesWindow + 5*time.Second)); d > 0 {
		t.Logf("helm chart: waiting %.0f s for a full window of the manifests' collector %s", d.Seconds(), old.Name)
		time.Sleep(d)
	}
	t1 := time.Now()
	bg := metav1.DeletePropagationBackground
	require.NoError(t, k.cs.AppsV1().DaemonSets(collectorNS).Delete(ctx, dsName, metav1.DeleteOptions{PropagationPolicy: &bg}))
	eventually(t, 2*time.Minute, "the manifests' collector pod gone", func() error {
		_, err := k.cs.CoreV1().Pods(collectorNS).Get(ctx, old.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("pod %s still there (%w)", old.Name, err)
	})
	for _, d := range docs {
		raw := d.Raw
		if d.Obj.GetKind() == "DaemonSet" {
			raw = daemonSetOverlay(t, d.Obj, k.gateway, k.queueDir)
		}
		_, err := k.a.Apply(ctx, d.Obj, raw, collectorNS, false)
		require.NoError(t, err, "apply %s %s", d.Obj.GetKind(), d.Obj.GetName())
		if w := k.a.TakeWarnings(); len(w) > 0 {
			t.Errorf("apply %s %s: warnings %q", d.Obj.GetKind(), d.Obj.GetName(), w)
		}
	}
	p := k.waitLabelled(t, collectorNS, sel, old.UID)
	require.NotEmpty(t, p.OwnerReferences)
	require.Equal(t, dsName+"-agent", p.OwnerReferences[0].Name, "the new collector pod is the chart's DaemonSet's")
	checkCollectorConfinement(t, containerPID(t, p), "/conf")
	t2 := podReadyAt(p).Add(seriesWindow + 5*time.Second)
	t.Logf("helm chart: the chart's collector %s Ready %.1f s after the manifests' DaemonSet was deleted; windows of %s ending %s (manifests) and %s (chart)",
		p.Name, podReadyAt(p).Sub(t1).Seconds(), seriesWindow, t1.Format(time.RFC3339), t2.Format(time.RFC3339))
	time.Sleep(time.Until(t2.Add(15 * time.Second))) // the last points through the gateway

	before, nb := k.seriesKeys(t, t1, old.Name)
	after, na := k.seriesKeys(t, t2, p.Name)
	var lost, gained []string
	for key := range before {
		if !after[key] {
			lost = append(lost, key)
		}
	}
	for key := range after {
		if !before[key] {
			gained = append(gained, key)
		}
	}
	sort.Strings(lost)
	sort.Strings(gained)
	t.Logf("helm chart: %d series (%d keys: metric name, namespace, pod, container) from the manifests' collector, %d (%d keys) from the chart's",
		nb, len(before), na, len(after))
	require.Greater(t, len(before), 100, "too few series to compare")
	require.Empty(t, lost, "series the manifests' collector sent and the chart's did not")
	require.Empty(t, gained, "series the chart's collector sent and the manifests' did not")
}

// seriesKeys are the series of this node that Prometheus holds points of
// in the seriesWindow before at (its series API), as keys of metric name,
// namespace, pod and container: the node's and its system containers'
// (no namespace), the workloads' and the collector pod's (its pod and
// container named "<collector>"), whose other series (the gateway's, a test's pods of the
// collector's namespace) come and go. Also the number of series.
func (k *cluster) seriesKeys(t *testing.T, at time.Time, collector string) (map[string]bool, int) {
	t.Helper()
	q := url.Values{
		"match[]": {fmt.Sprintf(`{k8s_node_name=%q}`, kubetest.NodeName)},
		"start":   {strconv.FormatFloat(float64(at.Add(-seriesWindow).UnixMilli())/1000, 'f', 3, 64)},
		"end":     {strconv.FormatFloat(float64(at.UnixMilli())/1000, 'f', 3, 64)},
	}
	resp, err := http.Get("http://" + k.prom.addr + "/api/v1/series?" + q.Encode())
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var r struct {
		Data []map[string]string `json:"data"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&r))
	keys := map[string]bool{}
	for _, s := range r.Data {
		ns, pod, ctr := s["k8s_namespace_name"], s["k8s_pod_name"], s["k8s_container_name"]
		switch {
		case ns == "" || ns == workNS:
		case ns == collectorNS && pod == collector:
			// The chart names the container after itself
			// (docs/deploy.md, "Helm").
			pod = "<collector>"
			if ctr != "" {
				ctr = "<collector>"
			}
		default:
			continue
		}
		keys[strings.Join([]string{s["__name__"], ns, pod, ctr}, " ")] = true
	}
	return keys, len(r.Data)
}
