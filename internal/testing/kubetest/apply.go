// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build linux

package kubetest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"
)

// FieldManager is the field manager of the tests' server-side applies.
const FieldManager = "containerstats-test"

// Doc is one YAML document of a manifest file.
type Doc struct {
	File string
	Raw  []byte
	Obj  *unstructured.Unstructured
}

func (d Doc) String() string {
	return d.File + ": " + d.Obj.GetKind() + " " + d.Obj.GetNamespace() + "/" + d.Obj.GetName()
}

// Manifests reads every document of every dir/*.yaml but config.yaml
// (deploy/'s collector configuration, which reaches the API server as the
// ConfigMap's config.yaml: deploy's TestManifestMatchesConfig checks it is
// verbatim), in file order.
func Manifests(tb testing.TB, dir string) []Doc {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		tb.Fatal(err)
	}
	sort.Strings(files)
	var out []Doc
	for _, f := range files {
		if filepath.Base(f) == "config.yaml" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, Docs(tb, filepath.Base(f), b)...)
	}
	if len(out) == 0 {
		tb.Fatalf("no manifests in %s", dir)
	}
	return out
}

// Docs are the documents of the multi-document YAML b (what `helm
// template` prints, or a manifest file), named file; documents of
// comments only are left out, one without a kind fails.
func Docs(tb testing.TB, file string, b []byte) []Doc {
	tb.Helper()
	var out []Doc
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(b)))
	for {
		raw, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			tb.Fatalf("%s: %v", file, err)
		}
		var m map[string]any
		if err := yaml.Unmarshal(raw, &m); err != nil {
			tb.Fatalf("%s: %v", file, err)
		}
		if len(m) == 0 {
			continue // comments only
		}
		u := &unstructured.Unstructured{Object: m}
		if u.GetKind() == "" {
			tb.Fatalf("%s: a document without kind", file)
		}
		out = append(out, Doc{File: file, Raw: raw, Obj: u})
	}
}

// Applier applies raw documents by server-side apply with strict field
// validation, collecting the API server's warnings.
type Applier struct {
	Mapper  meta.RESTMapper
	Dynamic dynamic.Interface
	Client  kubernetes.Interface

	mu       sync.Mutex
	warnings []string
}

// HandleWarningHeader collects a warning (rest.WarningHandler).
func (a *Applier) HandleWarningHeader(_ int, _ string, text string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.warnings = append(a.warnings, text)
}

// TakeWarnings returns the warnings collected since the last call.
func (a *Applier) TakeWarnings() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	w := a.warnings
	a.warnings = nil
	return w
}

// NewApplier returns an Applier on the cluster's admin config.
func NewApplier(tb testing.TB, c *Cluster) *Applier {
	tb.Helper()
	a := &Applier{}
	cfg := rest.CopyConfig(c.Config)
	cfg.WarningHandler = a
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	groups, err := restmapper.GetAPIGroupResources(dc)
	if err != nil {
		tb.Fatal(err)
	}
	a.Mapper = restmapper.NewDiscoveryRESTMapper(groups)
	if a.Dynamic, err = dynamic.NewForConfig(cfg); err != nil {
		tb.Fatal(err)
	}
	if a.Client, err = kubernetes.NewForConfig(cfg); err != nil {
		tb.Fatal(err)
	}
	return a
}

// Apply sends raw (YAML or JSON, as it is) as a server-side apply patch of
// obj, in namespace ns when obj is namespaced ("" keeps the document's
// own).
func (a *Applier) Apply(ctx context.Context, obj *unstructured.Unstructured, raw []byte, ns string, dryRun bool) (*unstructured.Unstructured, error) {
	gvk := obj.GroupVersionKind()
	m, err := a.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, err
	}
	if ns == "" {
		ns = obj.GetNamespace()
	}
	var ri dynamic.ResourceInterface = a.Dynamic.Resource(m.Resource)
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		ri = a.Dynamic.Resource(m.Resource).Namespace(ns)
	}
	opts := metav1.PatchOptions{FieldManager: FieldManager, FieldValidation: "Strict"}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	return ri.Patch(ctx, obj.GetName(), types.ApplyPatchType, raw, opts)
}
