// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package fsstats // import "github.com/containerstats/containerstatsreceiver/internal/fsstats"

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.uber.org/zap"

	"github.com/containerstats/containerstatsreceiver/internal/opt"
)

// Magic numbers (statfs f_type) of the memory-backed filesystems the
// kubelet mounts for volumes: tmpfs (medium Memory emptyDirs, secrets,
// projected and downwardAPI volumes) and hugetlbfs (medium HugePages).
const (
	TmpfsMagic     uint32 = 0x01021994
	HugetlbfsMagic uint32 = 0x958458f6
)

// The k8s.volume.type values (semantic conventions v1.44.0's enum).
const (
	TypePersistentVolumeClaim = "persistentVolumeClaim"
	TypeConfigMap             = "configMap"
	TypeDownwardAPI           = "downwardAPI"
	TypeEmptyDir              = "emptyDir"
	TypeSecret                = "secret"
	TypeLocal                 = "local"
)

// VolumeTypes are every k8s.volume.type value a Volume can have. metadata.yaml
// declares the attribute a plain string (mdatagen v0.159 generates a test
// that does not compile for an optional enum attribute), so TestSemconv
// holds this list to the conventions' values instead.
func VolumeTypes() []string {
	return []string{TypePersistentVolumeClaim, TypeConfigMap, TypeDownwardAPI, TypeEmptyDir, TypeSecret, TypeLocal}
}

// DefaultVolumeWalkBudget is the number of directory entries the volume
// walks of one collection may lstat when Config.VolumeWalkBudget is 0.
const DefaultVolumeWalkBudget = 1_000_000

// FileStat is what a walk needs of an lstat(2).
type FileStat struct {
	Dev, Ino, Nlink uint64
	Blocks          uint64 // st_blocks, 512-byte units
	Size            int64
	Dir, Regular    bool
}

// Volume is one pod volume: the directory
// <root>/var/lib/kubelet/pods/<uid>/volumes/<plugin>/<name>.
type Volume struct {
	// Name is the directory's name (k8s.volume.name).
	Name string
	// Plugin is the kubelet plugin, its directory name unescaped
	// (kubernetes.io/empty-dir).
	Plugin string
	// Type is the k8s.volume.type value; "" when none of the conventions'
	// values applies.
	Type string
	// Space is the statfs of the volume's path (a CSI volume's mount
	// subdirectory).
	Space opt.Value[Space]
	// Used and InodesUsed are the kubelet's usage: a du-like walk, or the
	// statfs for a volume with a filesystem of its own. Absent when the
	// walk failed or has not fit the budget yet.
	Used, InodesUsed opt.Value[uint64]
	// Memory: the volume is a tmpfs or hugetlbfs mount of its own; it is
	// counted as memory, not as ephemeral storage.
	Memory bool
	// Ephemeral: a local ephemeral volume the kubelet counts in the pod's
	// ephemeral storage (a disk-backed emptyDir, configMap, downwardAPI or
	// gitRepo volume).
	Ephemeral bool
}

// PodVolumes is one pod's volumes, sorted by plugin and name.
type PodVolumes struct {
	Volumes []Volume
	// EtcHosts is the allocated size of <uid>/etc-hosts (the kubelet counts
	// it in the pod's ephemeral storage); absent when the file does not
	// exist.
	EtcHosts opt.Value[uint64]
	// Ephemeral is the sum of the Ephemeral volumes' Used and EtcHosts;
	// absent when one of them is unknown or the volumes could not be
	// listed.
	Ephemeral opt.Value[uint64]
}

// How the kubelet measures a plugin's volumes (pkg/volume).
type measure uint8

const (
	measureNone   measure = iota // not reported: the kubelet has no metrics for it, or we do not know the plugin
	measureDu                    // MetricsDu: a walk of the directory
	measureStatfs                // MetricsStatFS: the statfs of the directory
	measureCSI                   // the CSI driver's NodeGetVolumeStats: the statfs of <dir>/mount
)

// pluginKind is what a kubelet volume plugin's volumes are.
type pluginKind struct {
	typ   string
	how   measure
	local bool // a local ephemeral volume (the kubelet's IsLocalEphemeralVolume) unless memory-backed
}

// pluginOf maps a kubelet plugin name to its kind.
func pluginOf(name string) pluginKind {
	switch name {
	case "kubernetes.io/empty-dir":
		return pluginKind{typ: TypeEmptyDir, how: measureDu, local: true}
	case "kubernetes.io/configmap":
		return pluginKind{typ: TypeConfigMap, how: measureDu, local: true}
	case "kubernetes.io/downward-api":
		return pluginKind{typ: TypeDownwardAPI, how: measureDu, local: true}
	case "kubernetes.io/git-repo":
		return pluginKind{how: measureDu, local: true}
	case "kubernetes.io/secret":
		return pluginKind{typ: TypeSecret, how: measureDu}
	case "kubernetes.io/projected":
		return pluginKind{how: measureDu}
	case "kubernetes.io/csi":
		return pluginKind{typ: TypePersistentVolumeClaim, how: measureCSI}
	case "kubernetes.io/local-volume":
		return pluginKind{typ: TypeLocal, how: measureStatfs}
	case "kubernetes.io/nfs", "kubernetes.io/iscsi", "kubernetes.io/fc", "kubernetes.io/rbd", "kubernetes.io/cephfs":
		return pluginKind{how: measureStatfs}
	}
	return pluginKind{}
}

// parsePluginDir unescapes a volume plugin directory name the way the
// kubelet escapes it (utilstrings.EscapeQualifiedName: "/" becomes "~"):
// kubernetes.io~empty-dir is kubernetes.io/empty-dir.
func parsePluginDir(name string) (string, error) {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") {
		return "", fmt.Errorf("volume plugin directory %q: not a plugin name", name)
	}
	return strings.ReplaceAll(name, "~", "/"), nil
}

// csiVolData is what we read of a CSI volume's vol_data.json, which the
// kubelet writes next to its mount directory.
type csiVolData struct {
	SpecVolID           string `json:"specVolID"`
	DriverName          string `json:"driverName"`
	VolumeLifecycleMode string `json:"volumeLifecycleMode"`
}

// parseCSIVolData parses a CSI volume's vol_data.json (a JSON object of
// strings).
func parseCSIVolData(b []byte) (csiVolData, error) {
	var d csiVolData
	if err := json.Unmarshal(b, &d); err != nil {
		return csiVolData{}, err
	}
	return d, nil
}

// readCSIVolData reads dir/vol_data.json.
func readCSIVolData(dir string) (csiVolData, error) {
	p := filepath.Join(dir, "vol_data.json")
	b, err := os.ReadFile(p)
	if err != nil {
		return csiVolData{}, err
	}
	d, err := parseCSIVolData(b)
	if err != nil {
		return csiVolData{}, fmt.Errorf("%s: %w", p, err)
	}
	return d, nil
}

// errBudget cuts a walk that has used up the collection's budget.
var errBudget = errors.New("over the volume walk budget")

// walker is the kubelet's du (pkg/volume/util/fs DiskUsage): the
// allocated blocks (st_blocks x 512) and the number of entries of a
// directory tree, the top directory included, by lstat (symbolic links
// are counted, not followed), hard links once, not entering another
// filesystem; entries that vanish during the walk are skipped. Each
// lstat costs one entry of the budget.
type walker struct {
	lstat   func(string) (FileStat, error)
	readDir func(string) ([]string, error)
	left    int // entries left in this collection
	seen    map[uint64]struct{}
}

type duSum struct{ bytes, inodes uint64 }

// du walks path; errBudget when the budget ran out before the end, any
// other error when a directory or entry could not be read. The sums of a
// walk that failed are not a total.
func (w *walker) du(ctx context.Context, path string) (duSum, error) {
	var d duSum
	if w.left <= 0 {
		return d, errBudget
	}
	w.left--
	top, err := w.lstat(path)
	if err != nil {
		return d, err
	}
	clear(w.seen)
	err = w.visit(ctx, path, top, top.Dev, &d)
	return d, err
}

func (w *walker) visit(ctx context.Context, path string, st FileStat, dev uint64, d *duSum) error {
	if st.Dev != dev {
		return nil // another filesystem: neither counted nor entered
	}
	if st.Nlink > 1 && !st.Dir {
		if _, dup := w.seen[st.Ino]; dup {
			return nil
		}
		w.seen[st.Ino] = struct{}{}
	}
	d.bytes += st.Blocks * 512
	d.inodes++
	if !st.Dir {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	names, err := w.readDir(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // removed since it was listed
	}
	if err != nil {
		return fmt.Errorf("walk %s: %w", path, err)
	}
	for _, n := range names {
		if w.left <= 0 {
			return errBudget
		}
		w.left--
		p := path + string(filepath.Separator) + n
		cst, err := w.lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("walk: %w", err)
		}
		if err := w.visit(ctx, p, cst, dev, d); err != nil {
			return err
		}
	}
	return nil
}

// duJob is one volume to walk.
type duJob struct {
	uid  string
	pv   *PodVolumes
	i    int // index in pv.Volumes
	path string
}

// volumes lists every pod's volumes under <root>/var/lib/kubelet/pods,
// statfs each and measures their usage as the kubelet does: walks within
// the collection's budget, starting where the last collection's budget
// ran out; a volume whose walk is cut keeps its value of prev (the last
// snapshot's) or has none.
func (c *Collector) volumes(ctx context.Context, prev map[string]*PodVolumes) map[string]*PodVolumes {
	out := map[string]*PodVolumes{}
	base := filepath.Join(c.cfg.Root, "var/lib/kubelet/pods")
	uids, err := c.readDir(base)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			c.logger.Debug("Volume stats: cannot list the pods' directories", zap.Error(err))
		}
		return out
	}
	slices.Sort(uids)
	var jobs []duJob
	complete := map[*PodVolumes]bool{}
	for _, uid := range uids {
		pdir := filepath.Join(base, uid)
		if st, err := c.lstat(pdir); err != nil || !st.Dir {
			continue
		}
		pv := &PodVolumes{}
		out[uid] = pv
		ok := c.podVolumes(pdir, uid, pv, &jobs)
		switch st, err := c.lstat(filepath.Join(pdir, "etc-hosts")); {
		case err == nil && !st.Dir:
			pv.EtcHosts = opt.Some(st.Blocks * 512)
		case err != nil && !errors.Is(err, fs.ErrNotExist):
			ok = false
		}
		complete[pv] = ok
	}
	c.runWalks(ctx, jobs, prev)
	for pv, ok := range complete {
		if !ok {
			continue
		}
		sum := pv.EtcHosts.V
		for i := range pv.Volumes {
			v := &pv.Volumes[i]
			if !v.Ephemeral {
				continue
			}
			if !v.Used.OK {
				ok = false
				break
			}
			sum += v.Used.V
		}
		if ok {
			pv.Ephemeral = opt.Some(sum)
		}
	}
	return out
}

// podVolumes lists one pod's volumes into pv, statfs each, and queues the
// walks; false when the volumes directory exists but cannot be listed.
func (c *Collector) podVolumes(pdir, uid string, pv *PodVolumes, jobs *[]duJob) bool {
	vdir := filepath.Join(pdir, "volumes")
	plugins, err := c.readDir(vdir)
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	if err != nil {
		c.logger.Debug("Volume stats: cannot list a pod's volumes", zap.String("pod", uid), zap.Error(err))
		return false
	}
	slices.Sort(plugins)
	ok := true
	for _, pl := range plugins {
		name, err := parsePluginDir(pl)
		if err != nil {
			continue
		}
		kind := pluginOf(name)
		if kind.how == measureNone {
			continue
		}
		pldir := filepath.Join(vdir, pl)
		plst, err := c.lstat(pldir)
		if err != nil || !plst.Dir {
			continue
		}
		names, err := c.readDir(pldir)
		if err != nil {
			c.logger.Debug("Volume stats: cannot list a pod's volumes", zap.String("pod", uid), zap.Error(err))
			ok = false
			continue
		}
		slices.Sort(names)
		for _, n := range names {
			if v, path, queue := c.volume(pldir, n, name, kind, plst); path != "" {
				pv.Volumes = append(pv.Volumes, v)
				if queue {
					*jobs = append(*jobs, duJob{uid: uid, pv: pv, i: len(pv.Volumes) - 1, path: path})
				}
			}
		}
	}
	return ok
}

// volume statfs one volume directory; path is "" when it is not a volume
// to report (not a directory, a CSI volume not mounted, statfs failed),
// queue true when its usage is a walk of path.
func (c *Collector) volume(pldir, name, plugin string, kind pluginKind, plst FileStat) (v Volume, path string, queue bool) {
	dir := filepath.Join(pldir, name)
	st, err := c.lstat(dir)
	if err != nil || !st.Dir {
		return v, "", false
	}
	v = Volume{Name: name, Plugin: plugin, Type: kind.typ}
	path = dir
	if kind.how == measureCSI {
		// The kubelet names the directory by the PV (persistent) or the
		// pod's volume (inline ephemeral); vol_data.json says which.
		if d, readCSIVolDataErr := readCSIVolData(dir); readCSIVolDataErr == nil && strings.EqualFold(d.VolumeLifecycleMode, "Ephemeral") {
			v.Type = ""
		} else if readCSIVolDataErr != nil && !errors.Is(readCSIVolDataErr, fs.ErrNotExist) {
			c.logger.Debug("Volume stats: cannot read a CSI volume's vol_data.json", zap.Error(readCSIVolDataErr))
		}
		path = filepath.Join(dir, "mount")
		if mst, lstatErr := c.lstat(path); lstatErr != nil || !mst.Dir {
			return v, "", false // not mounted (or a block volume): the driver has no stats either
		}
	}
	sp, err := c.statfs(path)
	if err != nil {
		c.logger.Debug("Volume stats: cannot statfs a volume", zap.Error(err))
		return v, "", false
	}
	v.Space = opt.Some(sp)
	v.Memory = (sp.Type == TmpfsMagic || sp.Type == HugetlbfsMagic) && st.Dev != plst.Dev
	v.Ephemeral = kind.local && !v.Memory
	if kind.how == measureDu {
		return v, path, true
	}
	v.Used = opt.Some(sp.Used)
	if sp.Inodes.OK && sp.InodesFree.OK && sp.Inodes.V >= sp.InodesFree.V {
		v.InodesUsed = opt.Some(sp.Inodes.V - sp.InodesFree.V)
	}
	return v, path, false
}

// runWalks walks the queued volumes within the budget, from where the
// last collection stopped (a volume that alone exceeds the budget is
// skipped next time, so it cannot starve the others).
func (c *Collector) runWalks(ctx context.Context, jobs []duJob, prev map[string]*PodVolumes) {
	budget := c.cfg.VolumeWalkBudget
	if budget <= 0 {
		budget = DefaultVolumeWalkBudget
	}
	w := &c.walk
	w.left = budget
	n := len(jobs)
	if n == 0 {
		return
	}
	start := c.walkNext % n
	cut := 0
	for k := range n {
		j := jobs[(start+k)%n]
		v := &j.pv.Volumes[j.i]
		d, err := w.du(ctx, j.path)
		switch {
		case err == nil:
			v.Used, v.InodesUsed = opt.Some(d.bytes), opt.Some(d.inodes)
			continue
		case errors.Is(err, errBudget):
			if cut == 0 {
				c.walkNext = (start + k) % n
				if k == 0 {
					c.walkNext = (start + 1) % n
				}
			}
			cut++
			if old, ok := lastUsage(prev, j.uid, v.Plugin, v.Name); ok {
				v.Used, v.InodesUsed = old.Used, old.InodesUsed
			}
		case ctx.Err() != nil:
			return
		default:
			c.logger.Debug("Volume stats: cannot walk a volume; no usage point", zap.String("pod", j.uid), zap.String("volume", v.Name), zap.Error(err))
		}
	}
	switch {
	case cut > 0 && !c.overBudget:
		c.overBudget = true
		c.logger.Warn("Volume stats: the volumes' files exceed the walk budget of one collection; the volumes not walked keep their last usage (none before their first walk)",
			zap.Int("budget_entries", budget), zap.Int("volumes_not_walked", cut), zap.Int("volumes", n))
	case cut > 0:
		c.logger.Debug("Volume stats: still over the walk budget", zap.Int("volumes_not_walked", cut))
	case c.overBudget:
		c.overBudget = false
		c.logger.Info("Volume stats: every volume fits the walk budget again")
	}
}

// lastUsage is the usage prev has for a pod's volume.
func lastUsage(prev map[string]*PodVolumes, uid, plugin, name string) (Volume, bool) {
	pv := prev[uid]
	if pv == nil {
		return Volume{}, false
	}
	for _, v := range pv.Volumes {
		if v.Plugin == plugin && v.Name == name && v.Used.OK {
			return v, true
		}
	}
	return Volume{}, false
}
