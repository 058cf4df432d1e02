// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build linux && realmachine

// The manifests against a real kube-apiserver (internal/testing/kubetest,
// binaries from `make kube-bins`; run with `make kube-test`).

package deploy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/containerstats/containerstatsreceiver/internal/testing/kubetest"
)

// TestManifestsOnAPIServer applies every document of deploy/ as it is to a
// real kube-apiserver (server-side apply, fieldValidation=Strict), checks
// that strictness bites on a misspelled field, and records what Pod
// Security admission says of the DaemonSet's pod at the baseline and
// restricted levels (docs/kube.md quotes it; this test checks the quote).
func TestManifestsOnAPIServer(t *testing.T) {
	c := kubetest.Start(t, kubetest.BinDir())
	a := kubetest.NewApplier(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	docs := kubetest.Manifests(t, ".")
	dsDoc := applyAll(ctx, t, a, docs, "DaemonSet")
	require.NotNil(t, dsDoc, "no DaemonSet in deploy/")
	// The gateway, into the DaemonSet's namespace.
	gwDoc := applyAll(ctx, t, a, kubetest.Manifests(t, "gateway"), "Deployment")
	require.NotNil(t, gwDoc, "no Deployment in deploy/gateway/")
	var gw appsv1.Deployment
	require.NoError(t, yaml.UnmarshalStrict(gwDoc.Raw, &gw))

	// Read back through the typed client: what the API server stored is the
	// manifest's DaemonSet (a field lost on the way would show here).
	ds, err := a.Client.AppsV1().DaemonSets(dsDoc.Obj.GetNamespace()).Get(ctx, dsDoc.Obj.GetName(), metav1.GetOptions{})
	require.NoError(t, err)
	var want appsv1.DaemonSet
	require.NoError(t, yaml.UnmarshalStrict(dsDoc.Raw, &want))
	require.Equal(t, want.Spec.Template.Spec.Containers[0].Image, ds.Spec.Template.Spec.Containers[0].Image)
	require.Equal(t, want.Spec.Template.Spec.Containers[0].SecurityContext, ds.Spec.Template.Spec.Containers[0].SecurityContext)
	require.Equal(t, want.Spec.Template.Spec.Volumes[0].HostPath.Path, ds.Spec.Template.Spec.Volumes[0].HostPath.Path)

	// Strictness bites: one misspelled field in a copy is rejected.
	const field, typo = "readOnlyRootFilesystem", "readOnlyRootFileSystem"
	require.Contains(t, string(dsDoc.Raw), field)
	bad := bytes.Replace(dsDoc.Raw, []byte(field), []byte(typo), 1)
	_, err = a.Apply(ctx, dsDoc.Obj, bad, "", true)
	require.Error(t, err, "a misspelled field was accepted by apply")
	var st apierrors.APIStatus
	require.ErrorAs(t, err, &st, "not an API status: %v", err)
	t.Logf("apply of a misspelled field rejected (HTTP %d, %s): %v", st.Status().Code, st.Status().Reason, err)
	require.Contains(t, err.Error(), `.securityContext.`+typo+`: field not declared in schema`)
	// The same copy through create with fieldValidation=Strict (what
	// `kubectl create` does): rejected too, with the decoder's wording.
	var badObj map[string]any
	require.NoError(t, yaml.Unmarshal(bad, &badObj))
	m, err := a.Mapper.RESTMapping(dsDoc.Obj.GroupVersionKind().GroupKind(), dsDoc.Obj.GroupVersionKind().Version)
	require.NoError(t, err)
	_, err = a.Dynamic.Resource(m.Resource).Namespace(dsDoc.Obj.GetNamespace()).Create(ctx, &unstructured.Unstructured{Object: badObj},
		metav1.CreateOptions{FieldManager: kubetest.FieldManager, FieldValidation: "Strict", DryRun: []string{metav1.DryRunAll}})
	require.Error(t, err, "a misspelled field was accepted by create")
	require.True(t, apierrors.IsBadRequest(err), "want 400 BadRequest, got %v", err)
	require.Contains(t, err.Error(), `unknown field "spec.template.spec.containers[0].securityContext.`+typo+`"`)
	t.Logf("create of a misspelled field rejected: %v", err)

	// Pod Security admission: a namespace per level with enforce and warn
	// labels. The DaemonSet (server-side dry-run) gets the warn verdict
	// (enforce applies to pods only); a pod with the DaemonSet's template
	// (dry-run create) gets the enforce verdict.
	doc, err := os.ReadFile(filepath.Join("..", "docs", "kube.md"))
	require.NoError(t, err)
	for _, level := range []string{"baseline", "restricted"} {
		ns := "pss-" + level
		_, err := a.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
			Name: ns,
			Labels: map[string]string{
				"pod-security.kubernetes.io/enforce": level,
				"pod-security.kubernetes.io/warn":    level,
			},
		}}, metav1.CreateOptions{})
		require.NoError(t, err)
		// No controller-manager runs in this test: make the default ServiceAccount
		// its controller would, which the ServiceAccount admission of a pod
		// looks up.
		_, err = a.Client.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
		require.NoError(t, err)

		// The DaemonSet as it is but for its namespace.
		moved := dsDoc.Obj.DeepCopy()
		moved.SetNamespace(ns)
		movedRaw, err := moved.MarshalJSON()
		require.NoError(t, err)
		_, err = a.Apply(ctx, moved, movedRaw, ns, true)
		require.NoError(t, err, "%s: the DaemonSet itself is admitted (warn only)", level)
		warnings := a.TakeWarnings()
		require.NotEmpty(t, warnings, "%s: no Pod Security warning for the DaemonSet", level)
		for _, w := range warnings {
			t.Logf("%s: DaemonSet warning: %s", level, w)
			if !bytes.Contains(doc, []byte(w)) {
				t.Errorf("docs/kube.md does not quote the %s warning verbatim:\n%s", level, w)
			}
		}

		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "otelcol-containerstats-pss", Namespace: ns, Labels: want.Spec.Template.Labels},
			Spec:       want.Spec.Template.Spec,
		}
		_, err = a.Client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: "Strict"})
		require.Error(t, err, "%s: the DaemonSet's pod was admitted", level)
		require.True(t, apierrors.IsForbidden(err), "%s: want 403 Forbidden, got %v", level, err)
		require.Contains(t, err.Error(), "violates PodSecurity")
		t.Logf("%s: pod rejected: %v", level, err)
		if msg := err.Error(); !bytes.Contains(doc, []byte(msg)) {
			t.Errorf("docs/kube.md does not quote the %s rejection verbatim:\n%s", level, msg)
		}
		a.TakeWarnings()

		// The gateway's pod needs nothing of the node: admitted at
		// both levels, without a warning.
		gwPod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "otel-gateway-pss", Namespace: ns, Labels: gw.Spec.Template.Labels},
			Spec:       gw.Spec.Template.Spec,
		}
		_, err = a.Client.CoreV1().Pods(ns).Create(ctx, gwPod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: "Strict"})
		require.NoError(t, err, "%s: the gateway's pod", level)
		assert.Empty(t, a.TakeWarnings(), "%s: the gateway's pod", level)
	}
}

// TestDaemonSetScheduled runs the controller-manager and the scheduler too:
// applied as it is, the DaemonSet makes its pod for a node (a Node object:
// no kubelet runs yet, so the pod is bound, never started), the scheduler
// binds it there, and the pod the controller made is the manifest's.
func TestDaemonSetScheduled(t *testing.T) {
	bin := kubetest.BinDir()
	c := kubetest.Start(t, bin)
	c.StartControllers(t, bin)
	a := kubetest.NewApplier(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{
		Name:   "kubetest-node",
		Labels: map[string]string{"kubernetes.io/hostname": "kubetest-node", "kubernetes.io/os": "linux"},
	}}
	node, err := a.Client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	require.NoError(t, err)
	// What a kubelet would report. A merge patch of the status: the node
	// lifecycle controller may have changed the node since its creation.
	res := `{"cpu": "2", "memory": "4Gi", "pods": "110"}`
	_, err = a.Client.CoreV1().Nodes().Patch(ctx, node.Name, types.MergePatchType,
		[]byte(`{"status": {"capacity": `+res+`, "allocatable": `+res+`}}`), metav1.PatchOptions{}, "status")
	require.NoError(t, err)

	var ds *kubetest.Doc
	docs := kubetest.Manifests(t, ".")
	for i, d := range docs {
		_, applyErr := a.Apply(ctx, d.Obj, d.Raw, "", false)
		require.NoError(t, applyErr, "apply %s", d)
		if d.Obj.GetKind() == "DaemonSet" {
			ds = &docs[i]
		}
	}
	require.NotNil(t, ds)
	var want appsv1.DaemonSet
	require.NoError(t, yaml.UnmarshalStrict(ds.Raw, &want))

	// Wait (bounded) for the controller's pod, bound to the node.
	sel := metav1.FormatLabelSelector(want.Spec.Selector)
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	var pod *corev1.Pod
	for pod == nil {
		pods, listErr := a.Client.CoreV1().Pods(want.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
		require.NoError(t, listErr)
		for i := range pods.Items {
			if pods.Items[i].Spec.NodeName == node.Name {
				pod = &pods.Items[i]
			}
		}
		if pod != nil {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no pod of the DaemonSet bound to %s: %+v\ncontroller-manager:\n%s\nscheduler:\n%s", node.Name, pods.Items,
				c.Log("kube-controller-manager"), c.Log("kube-scheduler"))
		case <-tick.C:
		}
	}
	t.Logf("pod %s/%s (uid %s) bound to %s", pod.Namespace, pod.Name, pod.UID, pod.Spec.NodeName)
	require.Len(t, pod.OwnerReferences, 1)
	require.Equal(t, "DaemonSet", pod.OwnerReferences[0].Kind)
	require.Equal(t, want.Name, pod.OwnerReferences[0].Name)
	require.Len(t, pod.Spec.Containers, 1)
	got, wc := pod.Spec.Containers[0], want.Spec.Template.Spec.Containers[0]
	require.Equal(t, wc.Image, got.Image)
	require.Equal(t, wc.Args, got.Args)
	require.Equal(t, wc.SecurityContext, got.SecurityContext)
	require.Equal(t, wc.VolumeMounts, got.VolumeMounts)
	// Env as the manifest has it, the API server's defaulting aside
	// (fieldRef.apiVersion: v1).
	require.Len(t, got.Env, len(wc.Env))
	for i, e := range wc.Env {
		require.Equal(t, e.Name, got.Env[i].Name)
		require.Equal(t, e.Value, got.Env[i].Value)
		if e.ValueFrom != nil {
			require.Equal(t, e.ValueFrom.FieldRef.FieldPath, got.Env[i].ValueFrom.FieldRef.FieldPath)
		}
	}
	require.Equal(t, want.Spec.Template.Spec.HostPID, pod.Spec.HostPID)
	require.NotNil(t, pod.Spec.Priority, "priority class not resolved")
	require.Equal(t, int32(2000001000), *pod.Spec.Priority, "system-node-critical")
	require.Equal(t, "default", pod.Spec.ServiceAccountName)
	// automountServiceAccountToken: false holds: no projected token volume.
	for _, v := range pod.Spec.Volumes {
		require.Nil(t, v.Projected, "volume %s: a service-account token was mounted", v.Name)
	}
	// The ServiceAccount controller made the namespace's default account.
	_, err = a.Client.CoreV1().ServiceAccounts(want.Namespace).Get(ctx, "default", metav1.GetOptions{})
	require.NoError(t, err)
}

// operatorCRD is the OpenTelemetry Operator's CRD for
// OpenTelemetryCollector (OTEL_OPERATOR_CRD; default the copy beside the
// repository, ../shared/crds/); a missing one fails the test.
func operatorCRD(t *testing.T) []byte {
	t.Helper()
	p := os.Getenv("OTEL_OPERATOR_CRD")
	if p == "" {
		p = filepath.Join("..", "..", "shared", "crds", "opentelemetry.io_opentelemetrycollectors.yaml")
	}
	raw, err := os.ReadFile(p) //nolint:gosec // G703: a test: a path of the test's own (temp dir, repository, /proc, guest share), not input
	if err != nil {
		t.Fatalf("the OpenTelemetry Operator's CRD (set OTEL_OPERATOR_CRD to the operator's config/crd/bases/opentelemetry.io_opentelemetrycollectors.yaml): %v", err)
	}
	return raw
}

// TestOperatorOnAPIServer creates the OpenTelemetry Operator's CRD on a
// real kube-apiserver, waits for it to be Established, and applies
// deploy/operator/collector.yaml (in deploy/daemonset.yaml's Namespace) by
// server-side apply with fieldValidation=Strict: the server accepts the
// ServiceAccount and the OpenTelemetryCollector under the CRD's schema,
// stores the example's spec, and rejects a copy with a misspelled field.
// The Operator itself does not run (deploy's TestOperatorExample holds the
// example's pod to the manifest's).
func TestOperatorOnAPIServer(t *testing.T) {
	crdRaw := operatorCRD(t)
	c := kubetest.Start(t, kubetest.BinDir())
	a := kubetest.NewApplier(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	var crdMap map[string]any
	require.NoError(t, yaml.Unmarshal(crdRaw, &crdMap))
	crd := &unstructured.Unstructured{Object: crdMap}
	require.Equal(t, "CustomResourceDefinition", crd.GetKind())
	_, err := a.Apply(ctx, crd, crdRaw, "", false)
	require.NoError(t, err, "create the CRD %s", crd.GetName())
	crdRes := a.Dynamic.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for established := false; !established; {
		got, getErr := crdRes.Get(ctx, crd.GetName(), metav1.GetOptions{})
		require.NoError(t, getErr)
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		for _, cond := range conds {
			m, _ := cond.(map[string]any)
			if m["type"] == "Established" && m["status"] == "True" {
				established = true
			}
		}
		if established {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the CRD %s is not Established: %v", crd.GetName(), conds)
		case <-tick.C:
		}
	}
	t.Logf("CRD %s Established", crd.GetName())

	// The Namespace of deploy/daemonset.yaml, then the example, through
	// an applier that has discovered the new kind.
	for _, d := range kubetest.Manifests(t, ".") {
		if d.Obj.GetKind() == "Namespace" {
			_, applyErr := a.Apply(ctx, d.Obj, d.Raw, "", false)
			require.NoError(t, applyErr, "apply %s", d)
		}
	}
	a = kubetest.NewApplier(t, c)
	docs := kubetest.Manifests(t, "operator")
	colDoc := applyAll(ctx, t, a, docs, "OpenTelemetryCollector")
	require.NotNil(t, colDoc, "no OpenTelemetryCollector in deploy/operator/")
	require.Equal(t, "opentelemetry.io/v1beta1", colDoc.Obj.GetAPIVersion())

	// Stored as applied: every field of the example's spec is read back
	// as it is (the schema pruned nothing); the CRD's defaults come on top.
	m, err := a.Mapper.RESTMapping(colDoc.Obj.GroupVersionKind().GroupKind(), "v1beta1")
	require.NoError(t, err)
	stored, err := a.Dynamic.Resource(m.Resource).Namespace(colDoc.Obj.GetNamespace()).Get(ctx, colDoc.Obj.GetName(), metav1.GetOptions{})
	require.NoError(t, err)
	wantSpec, _ := colDoc.Obj.Object["spec"].(map[string]any)
	gotSpec, _ := stored.Object["spec"].(map[string]any)
	require.NotEmpty(t, wantSpec)
	for k, v := range wantSpec {
		w, marshalErr := json.Marshal(v)
		require.NoError(t, marshalErr)
		g, marshalErr := json.Marshal(gotSpec[k])
		require.NoError(t, marshalErr)
		require.JSONEq(t, string(w), string(g), "spec.%s as stored", k)
	}
	var defaulted []string
	for k, v := range gotSpec {
		if _, ok := wantSpec[k]; !ok {
			defaulted = append(defaulted, fmt.Sprintf("%s=%v", k, v))
		}
	}
	sort.Strings(defaulted)
	t.Logf("stored with the CRD's defaults: %s", strings.Join(defaulted, ", "))

	// Strictness bites: one misspelled field in a copy is rejected.
	const field, typo = "\n  hostPID: true", "\n  hostPId: true"
	require.Contains(t, string(colDoc.Raw), field)
	bad := bytes.Replace(colDoc.Raw, []byte(field), []byte(typo), 1)
	_, err = a.Apply(ctx, colDoc.Obj, bad, "", true)
	require.Error(t, err, "a misspelled field was accepted by apply")
	require.Contains(t, err.Error(), `.spec.hostPId: field not declared in schema`)
	t.Logf("apply of a misspelled field rejected: %v", err)
}

// applyAll applies every document as it is (server-side apply, strict),
// sees each stored under its name with no warning, and returns the one of
// kind (nil: none).
func applyAll(ctx context.Context, t *testing.T, a *kubetest.Applier, docs []kubetest.Doc, kind string) *kubetest.Doc {
	t.Helper()
	var found *kubetest.Doc
	for i, d := range docs {
		got, err := a.Apply(ctx, d.Obj, d.Raw, "", false)
		require.NoError(t, err, "apply %s", d)
		require.Equal(t, d.Obj.GetName(), got.GetName())
		require.NotEmpty(t, got.GetUID(), "%s", d)
		if w := a.TakeWarnings(); len(w) > 0 {
			t.Errorf("apply %s: warnings %q", d, w)
		}
		t.Logf("applied %s (uid %s)", d, got.GetUID())
		if d.Obj.GetKind() == kind {
			found = &docs[i]
		}
	}
	return found
}
