// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape // import "github.com/containerstats/containerstatsreceiver/receiver/scrape"

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/scraper/scrapererror"
	"go.uber.org/zap"

	"github.com/containerstats/containerstatsreceiver/internal/cgroupfs"
	"github.com/containerstats/containerstatsreceiver/internal/metadata"
	"github.com/containerstats/containerstatsreceiver/internal/procfs"
)

// The node's system containers are the kubelet's Node.SystemContainers
// of the Summary API (pkg/kubelet/server/stats): a few cgroups outside the
// pods, each reported as its own resource with
// k8s.node.system_container.name, and read as any cgroup is, through the
// CPU and memory families (kind kindSystem). docs/system-containers.md
// says what each is and how it differs from the kubelet's.
//
// Their indexes in systemContainers' arrays, and their names.
const (
	sysKubelet = iota // the kubelet process's cgroup (--kubelet-cgroups)
	sysRuntime        // the container runtime's (--runtime-cgroups)
	sysPods           // the pods' root cgroup (kubepods, kubepods.slice)
	sysMisc           // --system-cgroups: only when configured
	numSys
)

var sysNames = [numSys]string{sysKubelet: "kubelet", sysRuntime: "runtime", sysPods: "pods", sysMisc: "misc"}

// sysConfigKeys name each configurable system container's key, for logs.
var sysConfigKeys = [numSys]string{sysKubelet: "system_containers.kubelet_cgroup", sysRuntime: "system_containers.runtime_cgroup", sysMisc: "system_containers.misc_cgroup"}

// sysComms are the process names (/proc/<pid>/comm) detection looks for:
// the kubelet, and the container runtimes in order of preference when
// several run (docker runs containerd too: the kubelet of such a node
// talks to containerd unless the user says otherwise with runtime_cgroup).
// Exact names: containerd's and CRI-O's shims (containerd-shim, conmon)
// are not the runtime.
var sysComms = [2][]string{sysKubelet: {"kubelet"}, sysRuntime: {"containerd", "crio", "dockerd"}}

// sysDetectEvery is how often the kubelet's and the runtime's cgroups are
// detected again (a restart may have moved them), besides at Start and
// after a scrape found a detected one gone. Detection reads /proc/<pid>/comm
// of every process only when a process found before is no longer there.
const sysDetectEvery = time.Minute

// SystemCgroups are the configured cgroup paths of the system containers
// (config system_containers): "" detects the kubelet's and the runtime's
// from where their processes run, and leaves misc out.
type SystemCgroups struct {
	Kubelet, Runtime, Misc string
}

// sysProc is what detection found for the kubelet or the runtime.
type sysProc struct {
	pid int    // the process (0: none found)
	rel string // its cgroup, "" when there is none to report (the root cgroup, unreadable)
}

// systemContainers finds the system containers' cgroups and keeps what
// the scrapes need between them. nil when no system container metric is
// enabled or node series are off.
type systemContainers struct {
	v      *env
	cfg    [numSys]string // configured paths (pods: never)
	detect [2]bool        // the kubelet's, the runtime's cgroup is detected
	found  [2]sysProc     // what the last detection found
	last   time.Time      // when it ran
	// stale: a detected cgroup vanished; detect again at the next scrape.
	stale bool
	// logged is what was last logged about each detected name, so each
	// outcome is logged once (and again when it changes).
	logged [2]string
	// origin is where each name's series came from: its cgroup, and for a
	// detected one its process. Another origin is another counter: the
	// series starts again (new start time, no rate across).
	origin [numSys]string
	pids   []int
}

func newSystemContainers(v *env, m *metadata.MetricsConfig, noNodeSeries bool, c SystemCgroups, now time.Time) *systemContainers {
	c1, m1 := cpuTable(m)[kindSystem], memoryTable(m)[kindSystem] // a system container's metrics: CPU and memory
	if noNodeSeries || !c1.time.on && !c1.usage.on && !m1.usage.on && !m1.workingSet.on {
		return nil
	}
	sc := &systemContainers{v: v, cfg: [numSys]string{sysKubelet: c.Kubelet, sysRuntime: c.Runtime, sysMisc: c.Misc}}
	sc.detect = [2]bool{sysKubelet: c.Kubelet == "", sysRuntime: c.Runtime == ""}
	if sc.detect != [2]bool{} {
		sc.detectNow(now)
	}
	return sc
}

// refresh detects again when due: a detected cgroup vanished, or
// sysDetectEvery passed (or the clock went back).
func (sc *systemContainers) refresh(now time.Time) {
	if sc.detect == [2]bool{} {
		return
	}
	if d := now.Sub(sc.last); !sc.stale && d >= 0 && d < sysDetectEvery {
		return
	}
	sc.detectNow(now)
}

// detectNow finds the kubelet's and the runtime's processes and their
// cgroups. A process found last time that still has its name is kept
// without listing /proc; otherwise every process's comm is read.
func (sc *systemContainers) detectNow(now time.Time) {
	sc.last, sc.stale = now, false
	var pid [2]int
	scan := false
	for i := range pid {
		if !sc.detect[i] {
			continue
		}
		if p := sc.found[i].pid; p > 0 {
			if comm, err := sc.v.proc.Comm(p); err == nil && slices.Contains(sysComms[i], comm) {
				pid[i] = p
			}
		}
		scan = scan || pid[i] == 0
	}
	if scan {
		pid = sc.scan(pid)
	}
	for i := range pid {
		if sc.detect[i] {
			sc.found[i] = sc.locate(i, pid[i])
		}
	}
}

// scan lists /proc and fills in the names of pid still 0: the kubelet
// with the lowest PID, the runtime first by preference, then lowest PID.
func (sc *systemContainers) scan(pid [2]int) [2]int {
	want := [2]bool{sc.detect[0] && pid[0] == 0, sc.detect[1] && pid[1] == 0}
	pids, err := sc.v.proc.PIDs(sc.pids[:0])
	sc.pids = pids
	if err != nil {
		for i := range want {
			if want[i] {
				sc.note(i, "list:"+err.Error(), func(l *zap.Logger) {
					l.Warn("Cannot list processes to find the system container's cgroup: it is not reported; set its cgroup in the configuration",
						zap.String("system_container", sysNames[i]), zap.String("key", sysConfigKeys[i]), zap.Error(err))
				})
			}
		}
		return pid
	}
	rank := [2]int{len(sysComms[0]), len(sysComms[1])} // preference of pid[i] (lower is better)
	for _, p := range pids {
		comm, err := sc.v.proc.Comm(p)
		if err != nil {
			continue // exited since the listing, or not a process we can name: not one of ours
		}
		for i := range want {
			if !want[i] {
				continue
			}
			r := slices.Index(sysComms[i], comm)
			if r >= 0 && (r < rank[i] || r == rank[i] && p < pid[i]) {
				pid[i], rank[i] = p, r
			}
		}
	}
	return pid
}

// locate returns the cgroup of process pid (0: none found) for system
// container i, logging each outcome once.
func (sc *systemContainers) locate(i, pid int) sysProc {
	name := sysNames[i]
	if pid == 0 {
		sc.note(i, "none", func(l *zap.Logger) {
			l.Info("No process of the system container found: it is not reported; set its cgroup in the configuration if it runs under another name",
				zap.String("system_container", name), zap.Strings("process_names", sysComms[i]), zap.String("key", sysConfigKeys[i]))
		})
		return sysProc{}
	}
	lines, err := sc.v.proc.Cgroup(pid)
	var rel string
	if err == nil {
		rel, err = processCgroup(sc.v.layout, lines)
	}
	if err != nil {
		sc.note(i, "error:"+err.Error(), func(l *zap.Logger) {
			l.Warn("Cannot tell the system container's cgroup from its process: it is not reported; set its cgroup in the configuration",
				zap.String("system_container", name), zap.Int("pid", pid), zap.String("key", sysConfigKeys[i]), zap.Error(err))
		})
		return sysProc{pid: pid}
	}
	if rel == "/" {
		sc.note(i, "root", func(l *zap.Logger) {
			l.Info("The system container's process runs in the root cgroup, which is the node's (k8s.node.*): the system container is not reported",
				zap.String("system_container", name), zap.Int("pid", pid))
		})
		return sysProc{pid: pid}
	}
	sc.note(i, "found:"+rel, func(l *zap.Logger) {
		l.Info("Found the system container's cgroup", zap.String("system_container", name), zap.Int("pid", pid), zap.String("cgroup", rel))
	})
	return sysProc{pid: pid, rel: rel}
}

// note logs with fn when outcome differs from the last one logged for
// system container i.
func (sc *systemContainers) note(i int, outcome string, fn func(*zap.Logger)) {
	if sc.logged[i] != outcome {
		sc.logged[i] = outcome
		fn(sc.v.logger)
	}
}

// cgroup returns system container i's cgroup in this scrape ("" for none),
// where its series comes from, and whether it was detected.
func (sc *systemContainers) cgroup(i int, tree *cgroupfs.Tree) (rel, origin string, detected bool) {
	switch {
	case sc.cfg[i] != "":
		return sc.cfg[i], sc.cfg[i], false
	case i == sysPods:
		return tree.Kubepods, tree.Kubepods, false
	case i < len(sc.detect) && sc.detect[i] && sc.found[i].rel != "":
		f := sc.found[i]
		return f.rel, fmt.Sprintf("%s pid %d", f.rel, f.pid), true
	}
	return "", "", false
}

// scrapeSystem reports the node's system containers: each known cgroup
// read through the families as kind kindSystem, on its own resource. A
// cgroup that vanished costs its points in a partial error, and a
// detected one is detected again at the next scrape.
func (s *Scraper) scrapeSystem(p *pass, tree *cgroupfs.Tree, errs *scrapererror.ScrapeErrors) {
	sc := s.sys
	if sc == nil {
		return
	}
	sc.refresh(p.now)
	for i, name := range sysNames {
		rel, origin, detected := sc.cgroup(i, tree)
		if rel == "" {
			continue
		}
		key := seriesKey{kind: kindSystem, id: name}
		if sc.origin[i] != origin {
			delete(s.series, key) // another cgroup or process: another counter
			sc.origin[i] = origin
		}
		st := s.get(key, rel, pcommon.NewTimestampFromTime(p.now))
		if !s.scrapeCgroup(p, entity{kind: kindSystem, rel: rel, name: "system container " + name + " (" + rel + ")", id: name, st: st}, errs) {
			sc.stale = sc.stale || detected
			continue
		}
		mb := s.env.mb
		rb := mb.NewResourceBuilder()
		s.env.setNodeName(rb)
		rb.SetK8sNodeSystemContainerName(name)
		mb.EmitForResource(metadata.WithResource(rb.Emit()), metadata.WithStartTimeOverride(st.start))
	}
}

// processCgroup is the cgroup a process's CPU and memory are accounted in,
// from its /proc/<pid>/cgroup lines, as the reader reads them on layout l:
// on v2 the "0::" line; on v1 and hybrid nodes (whose CPU and memory come
// from v1 controllers) the paths of the cpuacct and memory hierarchies the
// node has, which must agree (the kubelet's getContainer requires the
// same). The path is checked to exist under root_path.
//
// A process outside the reader's cgroup namespace (the collector in a
// container with a private cgroup namespace) shows a path relative to the
// namespace's root, "/../../system.slice/kubelet.service": the leading
// ".." go up to the host's root when the process is outside the
// collector's own branch, which is where system containers are (never
// under kubepods); the existence check rejects a path that does not
// resolve so.
func processCgroup(l *cgroupfs.Layout, lines []procfs.CgroupLine) (string, error) {
	var rel, hier string
	if !l.StatsV1() {
		for _, ln := range lines {
			if ln.HierarchyID == 0 && ln.Controllers == nil {
				rel, hier = ln.Path, l.Unified
				break
			}
		}
		if hier == "" {
			return "", errors.New(`no "0::" (cgroup v2) line`)
		}
	} else {
		for _, ctrl := range [...]string{cgroupfs.CtrlCPUAcct, cgroupfs.CtrlMemory} {
			if l.V1[ctrl] == "" {
				continue
			}
			i := slices.IndexFunc(lines, func(ln procfs.CgroupLine) bool { return slices.Contains(ln.Controllers, ctrl) })
			if i < 0 {
				return "", fmt.Errorf("no line of the %s controller", ctrl)
			}
			switch p := lines[i].Path; {
			case hier == "":
				rel, hier = p, l.V1[ctrl]
			case p != rel:
				return "", fmt.Errorf("the cpuacct (%s) and memory (%s) cgroups differ: CPU and memory are not accounted in one cgroup", rel, p)
			}
		}
		if hier == "" {
			return "", errors.New("the node has no cpuacct or memory hierarchy")
		}
	}
	if strings.HasPrefix(rel, "/..") {
		for rel == "/.." || strings.HasPrefix(rel, "/../") {
			rel = rel[len("/.."):]
		}
		if rel == "" {
			rel = "/"
		}
	}
	if rel != "/" {
		dir := filepath.Join(hier, rel)
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return "", fmt.Errorf("cgroup %s: no directory %s", rel, dir)
		}
	}
	return rel, nil
}
