// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package deploy

import (
	"bytes"
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
)

// decode decodes a multi-document YAML manifest (documents separated by a
// line "---") into k8s.io/api objects (core/v1 and apps/v1 kinds) strictly,
// the way the API server's strict field validation does: an unknown,
// misspelled (case-sensitive) or duplicated field is an error naming it.
// The unit tests' check of deploy/ without an API server (make kube-test
// applies the manifests to a real one).
func decode(raw []byte) ([]runtime.Object, error) {
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := appsv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	dec := kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, scheme, scheme,
		kjson.SerializerOptions{Yaml: true, Strict: true})
	var out []runtime.Object
	docs := bytes.Split(raw, []byte("\n---\n"))
	for i, doc := range docs {
		if i < len(docs)-1 {
			doc = append(doc, '\n') // the separator took the document's last newline
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		obj, _, err := dec.Decode(doc, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i+1, err)
		}
		out = append(out, obj)
	}
	return out, nil
}

// loadManifest decodes the manifest file strictly (decode) and gives each
// object to take, which keeps it and names its kind (an unexpected
// object: its Go type); the kinds named must be want, with their counts.
func loadManifest(t *testing.T, file string, want map[string]int, take func(runtime.Object) string) {
	t.Helper()
	raw, err := os.ReadFile(file)
	require.NoError(t, err)
	objs, err := decode(raw)
	require.NoError(t, err, file)
	kinds := map[string]int{}
	for _, obj := range objs {
		kinds[take(obj)]++
	}
	require.Equal(t, want, kinds, "the objects of %s", file)
}

func TestDecodeStrict(t *testing.T) {
	for _, field := range []string{"hostPId", "hostPIDs"} {
		_, err := decode([]byte("apiVersion: apps/v1\nkind: DaemonSet\nspec:\n  template:\n    spec:\n      " + field + ": true\n"))
		require.ErrorContains(t, err, field)
	}
	_, err := decode([]byte("apiVersion: v1\nkind: ConfigMap\n---\napiVersion: v9\nkind: Nope\n"))
	require.ErrorContains(t, err, "document 2")
	objs, err := decode([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: |\n    x\n---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: b\n"))
	require.NoError(t, err)
	require.Len(t, objs, 2)
	assert.Equal(t, "x\n", objs[0].(*corev1.ConfigMap).Data["k"], "a block scalar keeps its last newline across the separator")
}
