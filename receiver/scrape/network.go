// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape // import "github.com/containerstats/containerstatsreceiver/receiver/scrape"

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/scraper/scrapererror"

	"github.com/containerstats/containerstatsreceiver/internal/calc"
	"github.com/containerstats/containerstatsreceiver/internal/metadata"
	"github.com/containerstats/containerstatsreceiver/internal/procfs"
)

// ignoredNetDevPrefixes are the interfaces cAdvisor (and so the kubelet)
// leaves out of a network namespace's stats: loopback, the host ends of
// pod veth pairs, and container-engine bridges.
var ignoredNetDevPrefixes = [...]string{"lo", "veth", "docker", "nerdctl"}

func ignoredNetDev(name string) bool {
	for _, p := range ignoredNetDevPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

type netRecorder = func(*metadata.MetricsBuilder, pcommon.Timestamp, int64, string, metadata.AttributeNetworkIoDirection)

// netRecorders are the network metrics of one entity kind.
type netRecorders struct {
	io, packets, errors, dropped recorder[netRecorder]
}

func netTable(m *metadata.MetricsConfig) [numKinds]netRecorders {
	return [numKinds]netRecorders{
		kindNode: {
			io:      rec(m.K8sNodeNetworkIo.Enabled, mbT.RecordK8sNodeNetworkIoDataPoint),
			packets: rec(m.K8sNodeNetworkPacketCount.Enabled, mbT.RecordK8sNodeNetworkPacketCountDataPoint),
			errors:  rec(m.K8sNodeNetworkErrors.Enabled, mbT.RecordK8sNodeNetworkErrorsDataPoint),
			dropped: rec(m.K8sNodeNetworkPacketDropped.Enabled, mbT.RecordK8sNodeNetworkPacketDroppedDataPoint),
		},
		kindPod: {
			io:      rec(m.K8sPodNetworkIo.Enabled, mbT.RecordK8sPodNetworkIoDataPoint),
			packets: rec(m.K8sPodNetworkPacketCount.Enabled, mbT.RecordK8sPodNetworkPacketCountDataPoint),
			errors:  rec(m.K8sPodNetworkErrors.Enabled, mbT.RecordK8sPodNetworkErrorsDataPoint),
			dropped: rec(m.K8sPodNetworkPacketDropped.Enabled, mbT.RecordK8sPodNetworkPacketDroppedDataPoint),
		},
		kindContainer: {
			io:      rec(m.ContainerNetworkIo.Enabled, mbT.RecordContainerNetworkIoDataPoint),
			packets: rec(m.ContainerNetworkPacketCount.Enabled, mbT.RecordContainerNetworkPacketCountDataPoint),
			errors:  rec(m.ContainerNetworkErrors.Enabled, mbT.RecordContainerNetworkErrorsDataPoint),
			dropped: rec(m.ContainerNetworkPacketDropped.Enabled, mbT.RecordContainerNetworkPacketDroppedDataPoint),
		},
	}
}

// networkFamily is a network namespace's interfaces: bytes, packets,
// errors and drops per interface and direction, from /proc/<pid>/net/dev.
// A pod's containers share its namespace: their network is reported at pod
// level; only standalone containers (in no pod) have container-level
// network. The number of interfaces varies per entity: a vanished one
// costs what it recorded last time.
type networkFamily struct {
	noSums
	v     *env
	slot  int
	rec   [numKinds]netRecorders
	on    [numKinds]bool
	ifPts [numKinds]int // one interface's points (a failed read's cost: the count of interfaces is unknown)
	netns netnsState    // the host's network namespace, per scrape

	devs []procfs.NetDev
	ok   bool
	err  error
}

func newNetworkFamily(v *env, m *metadata.MetricsConfig, slot int) family {
	f := &networkFamily{v: v, slot: slot, rec: netTable(m)}
	for k := range f.rec {
		r := &f.rec[k]
		f.ifPts[k] = 2 * count(r.io.on, r.packets.on, r.errors.on, r.dropped.on) // receive and transmit
		f.on[k] = f.ifPts[k] > 0
	}
	if f.on == [numKinds]bool{} {
		return nil
	}
	return f
}

func (f *networkFamily) readErr() error { return f.err }

func (f *networkFamily) points(_ cgroupKind, st *series) int { return lastPts(st, f.slot) }

// netnsState is the host's network namespace (PID 1's), read at most once
// per scrape, the first time a standalone container needs it.
type netnsState struct {
	gen    uint64 // the scrape it was read in
	host   string
	byLink bool // the method: the ns/net link, else the net/dev inode (procfs.NetNS)
	ok     bool
	err    error
}

// hostNetNS returns the host's network namespace (of PID 1 under
// root_path), read once per scrape (pass p): its /proc/1/ns/net link, or where that
// is refused (EACCES, EPERM: no ptrace access to PID 1, as in some
// sandboxes) the inode of /proc/1/net/dev; containers are compared by the
// same method.
func (f *networkFamily) hostNetNS(p *pass) (string, bool, error) {
	v, ns := f.v, &f.netns
	if gen := p.gen; ns.gen != gen {
		ns.gen, ns.byLink = gen, true
		ns.host, ns.ok, ns.err = v.proc.NetNS(1, true)
		if errors.Is(ns.err, fs.ErrPermission) {
			ns.byLink = false
			ns.host, ns.ok, ns.err = v.proc.NetNS(1, false)
		}
	}
	return ns.host, ns.ok, ns.err
}

// readNet reads /proc/<pid>/net/dev of the host's PID 1 for the node, of
// one process of the pod's cgroup subtree for a pod. A pod without a
// process, or whose process exits before its file is read, has no data.
//
// A standalone container's is read from one of its processes only when
// that process's network namespace differs from the host's: a container
// sharing the host's namespace (host networking) gets no container points,
// its traffic is the node's. Pods' containers get none (the pod's points
// cover their namespace).
func (f *networkFamily) read(e *entity) {
	f.devs, f.ok, f.err = f.devs[:0], false, nil
	if !f.on[e.kind] || e.kind == kindContainer && !e.standalone {
		return
	}
	v := f.v
	if e.kind == kindPod {
		// A thread of one of the pod's containers, listed by this scrape a
		// moment ago, is in the pod's network namespace: no second listing.
		// Gone since (it exited): look for a process as below.
		if tid, ok := e.pass.podThread[e.id]; ok {
			devs, ok, err := v.proc.NetDev(tid, f.devs[:0])
			if err == nil && ok {
				f.devs, f.ok = devs, true
				return
			}
		}
	}
	pid := 1
	if e.kind != kindNode {
		p, ok, err := v.reader.AnyPID(e.rel)
		if err != nil || !ok {
			f.err = err
			return
		}
		pid = p
	}
	if e.kind == kindContainer {
		host, ok, err := f.hostNetNS(e.pass)
		if err != nil || !ok {
			if err != nil {
				f.err = fmt.Errorf("the host's network namespace: %w", err)
			}
			return
		}
		ns, ok, err := v.proc.NetNS(pid, f.netns.byLink)
		if err != nil || !ok || ns == host {
			f.err = err
			return
		}
	}
	f.devs, f.ok, f.err = v.proc.NetDev(pid, f.devs[:0])
}

// record records bytes, packets, errors and drops per interface and
// direction, interfaces cAdvisor ignores left out.
func (f *networkFamily) record(e *entity, errs *scrapererror.ScrapeErrors) {
	if f.err != nil {
		errs.AddPartial(f.ifPts[e.kind], fmt.Errorf("%s: network: %w", e.name, f.err))
		return
	}
	if !f.ok {
		e.st.fam[f.slot].pts = 0
		return
	}
	rec, mb, ts := &f.rec[e.kind], f.v.mb, e.ts
	rx, tx := metadata.AttributeNetworkIoDirectionReceive, metadata.AttributeNetworkIoDirectionTransmit
	n := 0
	for i := range f.devs {
		d := &f.devs[i]
		if ignoredNetDev(d.Name) {
			continue
		}
		rec.io.record(mb, ts, calc.ClampInt64(d.RxBytes), d.Name, rx)
		rec.io.record(mb, ts, calc.ClampInt64(d.TxBytes), d.Name, tx)
		rec.packets.record(mb, ts, calc.ClampInt64(d.RxPackets), d.Name, rx)
		rec.packets.record(mb, ts, calc.ClampInt64(d.TxPackets), d.Name, tx)
		rec.errors.record(mb, ts, calc.ClampInt64(d.RxErrors), d.Name, rx)
		rec.errors.record(mb, ts, calc.ClampInt64(d.TxErrors), d.Name, tx)
		rec.dropped.record(mb, ts, calc.ClampInt64(d.RxDropped), d.Name, rx)
		rec.dropped.record(mb, ts, calc.ClampInt64(d.TxDropped), d.Name, tx)
		n++
	}
	e.st.fam[f.slot].pts = n * f.ifPts[e.kind] // what this entity's vanishing costs next time
}

// notePodThread keeps tid, a thread of a container of pod, for the pod's
// network read (the first of this scrape).
func (p *pass) notePodThread(pod string, tid int) {
	if _, ok := p.podThread[pod]; ok {
		return
	}
	if p.podThread == nil {
		p.podThread = map[string]int{}
	}
	p.podThread[pod] = tid
}
