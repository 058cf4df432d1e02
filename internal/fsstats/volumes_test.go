// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package fsstats

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/containerstats/containerstatsreceiver/internal/opt"
)

// fakeBlocks is an lstat with deterministic allocation, whatever the test
// machine's filesystem: a regular file takes whole 4 KiB blocks, a
// directory one, a symbolic link none. Paths under one of mounts get
// another device number (a filesystem mounted there).
func fakeBlocks(mounts ...string) func(string) (FileStat, error) {
	return func(p string) (FileStat, error) {
		st, err := Lstat(p)
		if err != nil {
			return st, err
		}
		switch {
		case st.Regular:
			st.Blocks = uint64((st.Size+4095)/4096) * 8
		case st.Dir:
			st.Blocks = 8
		default:
			st.Blocks = 0
		}
		for _, m := range mounts {
			if p == m || strings.HasPrefix(p, m+"/") {
				st.Dev += 1000
			}
		}
		return st, nil
	}
}

// atomicDir writes the kubelet's AtomicWriter layout of configMap, secret,
// downwardAPI and projected volumes: ..<ts>/ holds the files, ..data links
// to it, each key links to ..data/<key>.
func atomicDir(tb testing.TB, dir string, files map[string]int) {
	tb.Helper()
	ts := filepath.Join(dir, "..2026_11_26_16_00_00.000000001")
	for name, n := range files {
		writeFile(tb, filepath.Join(ts, name), n)
	}
	require.NoError(tb, os.Symlink(filepath.Base(ts), filepath.Join(dir, "..data")))
	for name := range files {
		require.NoError(tb, os.Symlink(filepath.Join("..data", name), filepath.Join(dir, name)))
	}
}

func newWalker(left int) *walker {
	return &walker{lstat: fakeBlocks(), readDir: readDirNames, left: left, seen: map[uint64]struct{}{}}
}

// TestDu: allocated blocks and entries as the kubelet's du counts them:
// the top directory counts, a hard link once, a symbolic link as itself
// (not followed, even to a directory), an empty file as one entry.
func TestDu(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a"), 5000)       // 2 blocks
	writeFile(t, filepath.Join(dir, "sub/b"), 4096)   // 1 block
	writeFile(t, filepath.Join(dir, "sub/empty"), 0)  // 0 blocks
	writeFile(t, filepath.Join(dir, "sub/deep/c"), 1) // 1 block
	require.NoError(t, os.Link(filepath.Join(dir, "a"), filepath.Join(dir, "sub/a-again")))
	require.NoError(t, os.Symlink(filepath.Join(dir, "sub"), filepath.Join(dir, "link-to-dir")))
	outside := t.TempDir()
	writeFile(t, filepath.Join(outside, "big"), 1<<20)
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "link-out")))

	w := newWalker(1000)
	d, err := w.du(context.Background(), dir)
	require.NoError(t, err)
	// dirs: top, sub, sub/deep (3 x 4096); files: a (8192), b (4096), empty, c (4096); links: 0.
	assert.Equal(t, uint64(3*4096+8192+4096+4096), d.bytes)
	// top, a, sub, b, empty, deep, c, link-to-dir, link-out: the hard link once.
	assert.Equal(t, uint64(9), d.inodes)
	assert.Equal(t, 1000-10, w.left, "one lstat per entry, the hard link's included")
}

// TestDuConfigMap: the ..data symlink farm counts once: the timestamped
// directory and its files, and every link as an entry of no size.
func TestDuConfigMap(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "app-config")
	atomicDir(t, dir, map[string]int{"app.yaml": 311, "log-level": 6})
	d, err := newWalker(1000).du(context.Background(), dir)
	require.NoError(t, err)
	assert.Equal(t, uint64(2*4096+2*4096), d.bytes, "two directories, two files of one block")
	assert.Equal(t, uint64(1+1+2+1+2), d.inodes, "top, ..<ts>, its 2 files, ..data, 2 key links")
}

// TestDuMatchesGNUDu: on the machine's real filesystem (real st_blocks),
// the walk gives what du -x (one filesystem, hard links once, links not
// followed) gives: bytes and inodes.
func TestDuMatchesGNUDu(t *testing.T) {
	if _, err := exec.LookPath("du"); err != nil {
		t.Skip("no du")
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a"), 10<<20)
	writeFile(t, filepath.Join(dir, "s/b"), 123)
	writeFile(t, filepath.Join(dir, "s/t/c"), 70000)
	require.NoError(t, os.Link(filepath.Join(dir, "a"), filepath.Join(dir, "s/a2")))
	require.NoError(t, os.Symlink("../a", filepath.Join(dir, "s/l")))
	atomicDir(t, filepath.Join(dir, "cm"), map[string]int{"k": 9000})
	w := &walker{lstat: Lstat, readDir: readDirNames, left: 1000, seen: map[uint64]struct{}{}}
	d, err := w.du(context.Background(), dir)
	require.NoError(t, err)
	gnu := func(args ...string) uint64 {
		out, err := exec.Command("du", append(args, dir)...).Output() //nolint:gosec // G204: a test tool: the command and its arguments are the test's own
		if err != nil {
			t.Skipf("du %v: %v", args, err)
		}
		n, err := strconv.ParseUint(strings.Fields(string(out))[0], 10, 64)
		require.NoError(t, err)
		return n
	}
	assert.Equal(t, gnu("-sx", "-B1"), d.bytes)
	assert.Equal(t, gnu("-sx", "--inodes"), d.inodes)
	assert.GreaterOrEqual(t, d.bytes, uint64(10<<20), "the 10 MiB file's blocks")
}

// TestDuOtherFilesystem: a directory on another device (a mount inside the
// volume) is neither counted nor entered.
func TestDuOtherFilesystem(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a"), 1)
	writeFile(t, filepath.Join(dir, "mnt/huge"), 1<<20)
	w := newWalker(1000)
	w.lstat = fakeBlocks(filepath.Join(dir, "mnt"))
	d, err := w.du(context.Background(), dir)
	require.NoError(t, err)
	assert.Equal(t, uint64(4096+4096), d.bytes)
	assert.Equal(t, uint64(2), d.inodes)
}

// TestDuVanishing: an entry removed between the listing and its lstat,
// and a directory removed before it is listed, are skipped.
func TestDuVanishing(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "stays"), 1)
	writeFile(t, filepath.Join(dir, "goes"), 1<<20)
	writeFile(t, filepath.Join(dir, "gonedir/x"), 1<<20)
	w := newWalker(1000)
	base := w.lstat
	w.lstat = func(p string) (FileStat, error) {
		if filepath.Base(p) == "goes" {
			require.NoError(t, os.Remove(p))
		}
		return base(p)
	}
	w.readDir = func(p string) ([]string, error) {
		if filepath.Base(p) == "gonedir" {
			require.NoError(t, os.RemoveAll(p))
		}
		return readDirNames(p)
	}
	d, err := w.du(context.Background(), dir)
	require.NoError(t, err)
	assert.Equal(t, uint64(4096+4096+4096), d.bytes, "top, stays, gonedir itself (listed, then gone)")
	assert.Equal(t, uint64(3), d.inodes)
}

// TestDuPermissionDenied: a directory that cannot be listed fails the
// walk, naming it: no partial sum.
func TestDuPermissionDenied(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "locked/x"), 1)
	w := newWalker(1000)
	w.readDir = func(p string) ([]string, error) {
		if filepath.Base(p) == "locked" {
			return nil, &fs.PathError{Op: "open", Path: p, Err: syscall.EACCES}
		}
		return readDirNames(p)
	}
	_, err := w.du(context.Background(), dir)
	require.ErrorIs(t, err, fs.ErrPermission)
	assert.Contains(t, err.Error(), filepath.Join(dir, "locked"))
}

// TestDuBudget: a walk stops when the budget is spent, with errBudget.
func TestDuBudget(t *testing.T) {
	dir := t.TempDir()
	for i := range 20 {
		writeFile(t, filepath.Join(dir, "f"+strconv.Itoa(i)), 1)
	}
	w := newWalker(21)
	d, err := w.du(context.Background(), dir)
	require.NoError(t, err, "21 entries fit 21")
	assert.Equal(t, uint64(21), d.inodes)
	w = newWalker(20)
	_, err = w.du(context.Background(), dir)
	require.ErrorIs(t, err, errBudget)
	_, err = w.du(context.Background(), dir)
	require.ErrorIs(t, err, errBudget, "nothing left")
}

// volumeSpace is the injected statfs: each path its own distinct values;
// paths under tmpfs are tmpfs.
func volumeSpace(tmpfs ...string) func(string) (Space, error) {
	return func(p string) (Space, error) {
		if _, err := os.Stat(p); err != nil {
			return Space{}, err
		}
		n := uint64(len(p))
		sp := Space{Type: 0xEF53, Capacity: 1<<30 + n*4096, Available: 1<<29 + n*4096, Used: 1<<28 + n*4096, Inodes: opt.Some(100000 + n), InodesFree: opt.Some(90000 + n)}
		for _, m := range tmpfs {
			if p == m {
				sp.Type = TmpfsMagic
			}
		}
		return sp, nil
	}
}

func podsDir(root string) string { return filepath.Join(root, "var/lib/kubelet/pods") }

// TestVolumes: every kind of volume directory of a pod, with an injected
// statfs and deterministic blocks: types, how each is measured, which
// count in the pod's ephemeral storage, and the sum.
func TestVolumes(t *testing.T) {
	root := t.TempDir()
	pod := filepath.Join(podsDir(root), "uid-1")
	vols := filepath.Join(pod, "volumes")
	writeFile(t, filepath.Join(pod, "etc-hosts"), 210)
	writeFile(t, filepath.Join(vols, "kubernetes.io~empty-dir/cache/data"), 10000) // 3 blocks
	writeFile(t, filepath.Join(vols, "kubernetes.io~empty-dir/mem/buf"), 5000)
	atomicDir(t, filepath.Join(vols, "kubernetes.io~configmap/cfg"), map[string]int{"k": 10})
	atomicDir(t, filepath.Join(vols, "kubernetes.io~secret/creds"), map[string]int{"password": 17})
	atomicDir(t, filepath.Join(vols, "kubernetes.io~downward-api/info"), map[string]int{"labels": 40})
	atomicDir(t, filepath.Join(vols, "kubernetes.io~projected/token"), map[string]int{"token": 900})
	writeFile(t, filepath.Join(vols, "kubernetes.io~csi/pv-1/mount/x"), 1)
	writeFile(t, filepath.Join(vols, "kubernetes.io~csi/pv-1/vol_data.json"), 0)
	require.NoError(t, os.WriteFile(filepath.Join(vols, "kubernetes.io~csi/pv-1/vol_data.json"), []byte(`{"specVolID":"pv-1","volumeLifecycleMode":"Persistent"}`), 0o600))
	writeFile(t, filepath.Join(vols, "kubernetes.io~csi/inline/mount/x"), 1)
	require.NoError(t, os.WriteFile(filepath.Join(vols, "kubernetes.io~csi/inline/vol_data.json"), []byte(`{"volumeLifecycleMode":"Ephemeral"}`), 0o600))
	writeFile(t, filepath.Join(vols, "kubernetes.io~csi/not-mounted/vol_data.json"), 2)
	writeFile(t, filepath.Join(vols, "kubernetes.io~local-volume/local-pv/x"), 1)
	writeFile(t, filepath.Join(vols, "vendor~driver/v/x"), 1)
	writeFile(t, filepath.Join(podsDir(root), "uid-2/etc-hosts"), 0)
	writeFile(t, filepath.Join(podsDir(root), "not-a-dir"), 1)

	ed := filepath.Join(vols, "kubernetes.io~empty-dir")
	mem := []string{
		filepath.Join(ed, "mem"), filepath.Join(vols, "kubernetes.io~secret/creds"),
		filepath.Join(vols, "kubernetes.io~downward-api/info"), filepath.Join(vols, "kubernetes.io~projected/token"),
	}
	c := New(Config{Root: root, Statfs: volumeSpace(mem...), Lstat: fakeBlocks(mem...)})
	c.Collect(context.Background(), nil)
	got := c.Snapshot().Volumes
	require.Len(t, got, 2)
	pv := got["uid-1"]
	require.NotNil(t, pv)
	byName := map[string]Volume{}
	for _, v := range pv.Volumes {
		byName[v.Name] = v
	}
	assert.Len(t, pv.Volumes, 9, "not-mounted CSI and the unknown plugin are left out")
	sp := func(p string) opt.Value[Space] {
		s, err := volumeSpace(mem...)(p)
		require.NoError(t, err)
		return opt.Some(s)
	}
	for _, c := range []struct {
		name, plugin, typ string
		path              string
		used, inodes      uint64
		memory, eph       bool
	}{
		{"cache", "kubernetes.io/empty-dir", TypeEmptyDir, "kubernetes.io~empty-dir/cache", 4096 + 3*4096, 2, false, true},
		{"mem", "kubernetes.io/empty-dir", TypeEmptyDir, "kubernetes.io~empty-dir/mem", 4096 + 2*4096, 2, true, false},
		{"cfg", "kubernetes.io/configmap", TypeConfigMap, "kubernetes.io~configmap/cfg", 2*4096 + 4096, 5, false, true},
		{"creds", "kubernetes.io/secret", TypeSecret, "kubernetes.io~secret/creds", 2*4096 + 4096, 5, true, false},
		{"info", "kubernetes.io/downward-api", TypeDownwardAPI, "kubernetes.io~downward-api/info", 2*4096 + 4096, 5, true, false},
		{"token", "kubernetes.io/projected", "", "kubernetes.io~projected/token", 2*4096 + 4096, 5, true, false},
	} {
		v, ok := byName[c.name]
		require.True(t, ok, c.name)
		assert.Equal(t, c.plugin, v.Plugin, c.name)
		assert.Equal(t, c.typ, v.Type, c.name)
		assert.Equal(t, sp(filepath.Join(vols, c.path)), v.Space, c.name)
		assert.Equal(t, opt.Some(c.used), v.Used, c.name)
		assert.Equal(t, opt.Some(c.inodes), v.InodesUsed, c.name)
		assert.Equal(t, c.memory, v.Memory, c.name)
		assert.Equal(t, c.eph, v.Ephemeral, c.name)
	}
	// Volumes with their own filesystem: statfs.
	for _, c := range []struct{ name, typ, path string }{
		{"pv-1", TypePersistentVolumeClaim, "kubernetes.io~csi/pv-1/mount"},
		{"inline", "", "kubernetes.io~csi/inline/mount"},
		{"local-pv", TypeLocal, "kubernetes.io~local-volume/local-pv"},
	} {
		v := byName[c.name]
		s := sp(filepath.Join(vols, c.path))
		assert.Equal(t, c.typ, v.Type, c.name)
		assert.Equal(t, s, v.Space, c.name)
		assert.Equal(t, opt.Some(s.V.Used), v.Used, c.name)
		assert.Equal(t, opt.Some(s.V.Inodes.V-s.V.InodesFree.V), v.InodesUsed, c.name)
		assert.False(t, v.Ephemeral, c.name)
	}
	assert.Equal(t, opt.Some[uint64](4096), pv.EtcHosts)
	assert.Equal(t, opt.Some[uint64](4096+(4096+3*4096)+(2*4096+4096)), pv.Ephemeral, "etc-hosts, the disk emptyDir and the configMap")
	assert.Equal(t, &PodVolumes{EtcHosts: opt.Some[uint64](0), Ephemeral: opt.Some[uint64](0)}, got["uid-2"], "no volumes directory: etc-hosts only")

	assert.Empty(t, New(Config{Root: filepath.Join(root, "none")}).volumes(context.Background(), nil))
}

// TestVolumesWalkFails: a volume that cannot be walked keeps its statfs,
// has no usage, and makes the pod's ephemeral storage unknown.
func TestVolumesWalkFails(t *testing.T) {
	root := t.TempDir()
	vols := filepath.Join(podsDir(root), "uid-1/volumes")
	writeFile(t, filepath.Join(vols, "kubernetes.io~empty-dir/locked/sub/x"), 1)
	writeFile(t, filepath.Join(vols, "kubernetes.io~empty-dir/ok/x"), 1)
	core, logs := observer.New(zap.DebugLevel)
	c := New(Config{Root: root, Statfs: volumeSpace(), Lstat: fakeBlocks(), Logger: zap.New(core)})
	base := c.readDir
	c.readDir = func(p string) ([]string, error) {
		if filepath.Base(p) == "sub" {
			return nil, &fs.PathError{Op: "open", Path: p, Err: syscall.EACCES}
		}
		return base(p)
	}
	c.walk.readDir = c.readDir
	c.Collect(context.Background(), nil)
	pv := c.Snapshot().Volumes["uid-1"]
	require.Len(t, pv.Volumes, 2)
	assert.Equal(t, "locked", pv.Volumes[0].Name)
	assert.True(t, pv.Volumes[0].Space.OK)
	assert.False(t, pv.Volumes[0].Used.OK, "no partial sum")
	assert.False(t, pv.Volumes[0].InodesUsed.OK)
	assert.True(t, pv.Volumes[1].Used.OK)
	assert.False(t, pv.Ephemeral.OK)
	assert.Equal(t, 1, logs.FilterMessageSnippet("cannot walk a volume").Len())
}

// TestVolumesBudget: walks over the budget keep their last value or have
// none; the next collection starts where the budget ran out, so every
// volume is measured in turn; a volume larger than the whole budget never
// has a usage and does not starve the others; one warning for the run.
func TestVolumesBudget(t *testing.T) {
	root := t.TempDir()
	vols := filepath.Join(podsDir(root), "uid-1/volumes/kubernetes.io~empty-dir")
	for _, v := range []string{"a", "b", "c"} {
		for i := range 4 {
			writeFile(t, filepath.Join(vols, v, "f"+strconv.Itoa(i)), 1) // 5 entries
		}
	}
	core, logs := observer.New(zap.DebugLevel)
	c := New(Config{Root: root, Statfs: volumeSpace(), Lstat: fakeBlocks(), VolumeWalkBudget: 11, Logger: zap.New(core)})
	used := func() (out [3]bool) {
		for i, v := range c.Snapshot().Volumes["uid-1"].Volumes {
			out[i] = v.Used.OK
			if v.Used.OK {
				assert.Equal(t, uint64(5), v.InodesUsed.V, v.Name)
			}
		}
		return out
	}
	c.Collect(context.Background(), nil)
	assert.Equal(t, [3]bool{true, true, false}, used(), "a and b fit 11 entries, c does not")
	assert.False(t, c.Snapshot().Volumes["uid-1"].Ephemeral.OK, "c unknown: no ephemeral sum")
	c.Collect(context.Background(), nil)
	assert.Equal(t, [3]bool{true, true, true}, used(), "c first, then a; b keeps its last value")
	assert.True(t, c.Snapshot().Volumes["uid-1"].Ephemeral.OK)
	assert.Equal(t, 1, logs.FilterMessageSnippet("exceed the walk budget").Len(), "one warning for the run")

	writeFile(t, filepath.Join(vols, "a", "big", "f"), 1) // a: 7 entries
	for i := range 10 {
		writeFile(t, filepath.Join(vols, "a", "big", "g"+strconv.Itoa(i)), 1) // a: 17 entries, over 11 alone
	}
	for range 4 {
		c.Collect(context.Background(), nil)
		v := c.Snapshot().Volumes["uid-1"].Volumes
		assert.Equal(t, uint64(5), v[0].InodesUsed.V, "a keeps its last value, never a partial count")
	}
	assert.True(t, used()[1] && used()[2])

	fresh := New(Config{Root: root, Statfs: volumeSpace(), Lstat: fakeBlocks(), VolumeWalkBudget: 11})
	for range 3 {
		fresh.Collect(context.Background(), nil)
	}
	v := fresh.Snapshot().Volumes["uid-1"].Volumes
	assert.False(t, v[0].Used.OK, "a never fits: no value, never a partial one")
	assert.True(t, v[1].Used.OK && v[2].Used.OK, "b and c are measured all the same")

	c.cfg.VolumeWalkBudget = 0 // the default
	c.Collect(context.Background(), nil)
	assert.Equal(t, uint64(17), c.Snapshot().Volumes["uid-1"].Volumes[0].InodesUsed.V)
	assert.Equal(t, 1, logs.FilterMessageSnippet("fits the walk budget again").Len())
}

// TestVolumesCancelled: a collection cancelled during the walks is not
// published.
func TestVolumesCancelled(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(podsDir(root), "uid-1/volumes/kubernetes.io~empty-dir/v/sub/x"), 1)
	ctx, cancel := context.WithCancel(context.Background())
	c := New(Config{Root: root, Statfs: volumeSpace()})
	c.readDir = func(p string) ([]string, error) {
		if filepath.Base(p) == "sub" {
			cancel()
		}
		return readDirNames(p)
	}
	c.walk.readDir = c.readDir
	c.Collect(ctx, nil)
	assert.Same(t, emptySnapshot, c.Snapshot())
}

func TestParsePluginDir(t *testing.T) {
	for in, want := range map[string]string{
		"kubernetes.io~empty-dir": "kubernetes.io/empty-dir",
		"kubernetes.io~csi":       "kubernetes.io/csi",
		"vendor~driver":           "vendor/driver",
		"plain":                   "plain",
	} {
		got, err := parsePluginDir(in)
		require.NoError(t, err)
		assert.Equal(t, want, got)
	}
	for _, bad := range []string{"", ".", "..", "a/b", "a\x00b"} {
		_, err := parsePluginDir(bad)
		require.Error(t, err, "%q", bad)
		assert.Contains(t, err.Error(), "volume plugin directory")
	}
	assert.Equal(t, TypeEmptyDir, pluginOf("kubernetes.io/empty-dir").typ)
	assert.Equal(t, measureNone, pluginOf("vendor/driver").how)
}

// FuzzParsePluginDir: never panics; a name it accepts escapes back to
// itself (the kubelet's EscapeQualifiedName) and has no "~" left.
func FuzzParsePluginDir(f *testing.F) {
	for _, s := range []string{"kubernetes.io~empty-dir", "kubernetes.io~csi", "a~b~c", "~", "", "..", "a/b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := parsePluginDir(s)
		if err != nil {
			return
		}
		assert.NotContains(t, got, "~")
		assert.Equal(t, s, strings.ReplaceAll(got, "/", "~"))
	})
}

func TestParseCSIVolData(t *testing.T) {
	d, err := parseCSIVolData([]byte(`{"attachmentID":"csi-1","driverName":"ebs.csi.aws.com","nodeName":"n","specVolID":"pvc-1","volumeHandle":"vol-1","volumeLifecycleMode":"Persistent"}`))
	require.NoError(t, err)
	assert.Equal(t, csiVolData{SpecVolID: "pvc-1", DriverName: "ebs.csi.aws.com", VolumeLifecycleMode: "Persistent"}, d)
	_, err = parseCSIVolData([]byte(`{"specVolID":`))
	require.Error(t, err)

	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "vol_data.json"), []byte("not json"), 0o600))
	_, err = readCSIVolData(dir)
	require.Error(t, err)
	assert.Contains(t, err.Error(), filepath.Join(dir, "vol_data.json"))
	_, err = readCSIVolData(filepath.Join(dir, "none"))
	require.ErrorIs(t, err, fs.ErrNotExist)
}

// FuzzParseCSIVolData: never panics; what it parses marshals back to an
// object it parses to the same values.
func FuzzParseCSIVolData(f *testing.F) {
	f.Add([]byte(`{"specVolID":"pvc-1","driverName":"d","volumeLifecycleMode":"Ephemeral"}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"specVolID":1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := parseCSIVolData(b)
		if err != nil {
			assert.Equal(t, csiVolData{}, d)
			return
		}
		j, err := json.Marshal(d)
		require.NoError(t, err)
		again, err := parseCSIVolData(j)
		require.NoError(t, err, string(j))
		assert.Equal(t, d, again)
	})
}
