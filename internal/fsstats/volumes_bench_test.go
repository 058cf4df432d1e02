// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package fsstats

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// BenchmarkVolumeWalk is the background cost of measuring one volume the
// kubelet's way (a du-like walk: one directory listing per directory, one
// lstat per entry) on the machine's real filesystem: an emptyDir of 100
// and of 1000 files of 1 KiB (in 10 subdirectories), and a configMap of 3
// keys in the kubelet's ..data layout. entries/op is what it costs of the
// collection's walk budget.
func BenchmarkVolumeWalk(b *testing.B) {
	emptyDir := func(n int) func(testing.TB, string) {
		return func(tb testing.TB, dir string) {
			for i := range n {
				writeFile(tb, filepath.Join(dir, "d"+strconv.Itoa(i%10), "f"+strconv.Itoa(i)), 1024)
			}
		}
	}
	for _, c := range []struct {
		name string
		make func(testing.TB, string)
	}{
		{"emptyDir-100", emptyDir(100)},
		{"emptyDir-1000", emptyDir(1000)},
		{"configMap-3", func(tb testing.TB, dir string) {
			atomicDir(tb, dir, map[string]int{"app.yaml": 2048, "log-level": 5, "features.json": 700})
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			dir := filepath.Join(b.TempDir(), "vol")
			c.make(b, dir)
			w := &walker{lstat: Lstat, readDir: readDirNames, seen: map[uint64]struct{}{}}
			var entries uint64
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				w.left = DefaultVolumeWalkBudget
				d, err := w.du(context.Background(), dir)
				require.NoError(b, err)
				entries = d.inodes
			}
			b.ReportMetric(float64(entries), "entries/op")
		})
	}
}

// BenchmarkVolumeCollection is one collection of the volumes of 30 pods,
// each with an emptyDir of 20 files, a configMap and a projected volume
// (statfs real, one per volume): listing, statfs and walks.
func BenchmarkVolumeCollection(b *testing.B) {
	root := b.TempDir()
	for p := range 30 {
		vols := filepath.Join(podsDir(root), "uid-"+strconv.Itoa(p), "volumes")
		for i := range 20 {
			writeFile(b, filepath.Join(vols, "kubernetes.io~empty-dir/cache/f"+strconv.Itoa(i)), 512)
		}
		atomicDir(b, filepath.Join(vols, "kubernetes.io~configmap/cfg"), map[string]int{"a": 100, "b": 200})
		atomicDir(b, filepath.Join(vols, "kubernetes.io~projected/kube-api-access"), map[string]int{"token": 900, "ca.crt": 1100, "namespace": 7})
		writeFile(b, filepath.Join(podsDir(root), "uid-"+strconv.Itoa(p), "etc-hosts"), 200)
	}
	c := New(Config{Root: root})
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		v := c.volumes(context.Background(), nil)
		require.Len(b, v, 30)
	}
}
