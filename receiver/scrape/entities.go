// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape // import "github.com/containerstats/containerstatsreceiver/receiver/scrape"

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/scraper/scrapererror"

	"github.com/containerstats/containerstatsreceiver/internal/cgroupfs"
	"github.com/containerstats/containerstatsreceiver/internal/identity"
	"github.com/containerstats/containerstatsreceiver/internal/metadata"
	"github.com/containerstats/containerstatsreceiver/internal/resource"
)

func (s *Scraper) scrapeNode(p *pass, errs *scrapererror.ScrapeErrors) {
	start := s.env.bootTime
	if start == 0 {
		start = pcommon.NewTimestampFromTime(p.now)
	}
	st := s.get(seriesKey{kind: kindNode}, "/", start)
	if !s.scrapeCgroup(p, entity{kind: kindNode, rel: "/", name: "node", st: st}, errs) {
		return
	}
	mb := s.env.mb
	rb := mb.NewResourceBuilder()
	s.env.setNodeName(rb)
	mb.EmitForResource(metadata.WithResource(rb.Emit()), metadata.WithStartTimeOverride(st.start))
}

func (s *Scraper) scrapePod(ps *pass, pod *cgroupfs.Cgroup, errs *scrapererror.ScrapeErrors) {
	p, known := s.env.ident.Pod(pod.PodUID)
	if !known && ps.deferred[pod.PodUID] && s.series[seriesKey{kind: kindPod, id: pod.PodUID}] == nil {
		return // a new pod whose container waits for its identity: so does the pod
	}
	if !s.opts.Filter.AllowPod(p.Namespace, p.Name) {
		return
	}
	start := pcommon.NewTimestampFromTime(ps.now)
	if !p.StartTime.IsZero() {
		start = pcommon.NewTimestampFromTime(p.StartTime)
	}
	st := s.get(seriesKey{kind: kindPod, id: pod.PodUID}, pod.Path, start)
	if !s.scrapeCgroup(ps, entity{kind: kindPod, rel: pod.Path, name: "pod " + pod.PodUID, id: pod.PodUID, pod: pod.PodUID, st: st, podStart: p.StartTime}, errs) {
		return
	}
	mb := s.env.mb
	rb := mb.NewResourceBuilder()
	s.env.setNodeName(rb)
	rb.SetK8sPodUID(pod.PodUID)
	rb.SetK8sPodQosClass(pod.QoS)
	resource.SetIf(rb.SetK8sPodName, p.Name)
	resource.SetIf(rb.SetK8sNamespaceName, p.Namespace)
	res := rb.Emit()
	if s.opts.PodLabels {
		resource.SetPodLabels(res, p.Labels)
	}
	mb.EmitForResource(metadata.WithResource(res), metadata.WithStartTimeOverride(st.start))
}

// scrapeContainer reports one container ID (discovery already merged the
// cgroup paths that show the same ID). Sandboxes, containers the runtime
// reports as exited, and filtered-out containers are skipped. The start time
// of its cumulative points is the runtime's creation time; without a runtime
// it is the time the container was first seen.
func (s *Scraper) scrapeContainer(p *pass, c *cgroupfs.Cgroup, errs *scrapererror.ScrapeErrors) {
	ct := &p.ctr // the families get it by pointer: the pass's, not one on the heap per container
	var pending, report bool
	*ct, pending, report = identity.Select(s.env.ident, c.ContainerID, c.PodUID, s.opts.IncludeSandboxes, s.opts.Filter)
	if pending {
		// New since the runtime's last listing: reported by the next
		// scrape, with its identity (a sandbox then not at all).
		if c.PodUID != "" {
			if p.deferred == nil {
				p.deferred = map[string]bool{}
			}
			p.deferred[c.PodUID] = true
		}
		return
	}
	if !report {
		return
	}
	start := pcommon.NewTimestampFromTime(p.now)
	if !ct.StartTime.IsZero() {
		start = pcommon.NewTimestampFromTime(ct.StartTime)
	}
	key := seriesKey{kind: kindContainer, id: c.ContainerID}
	st := s.get(key, c.Path, start)
	standalone := c.PodUID == "" && ct.PodUID == ""
	if standalone {
		st = s.trackRun(p, key, st, c)
	}
	if !ct.StartTime.IsZero() && !st.runtimeStart {
		// A runtime that answers late replaces the first-seen time, once:
		// after that the start time never moves, even when the identity
		// comes from another source whose creation time differs slightly
		// (containerd's CreatedAt vs CRI's, while CRI is down).
		st.start, st.runtimeStart = start, true
	}
	if !s.scrapeCgroup(p, entity{
		kind: kindContainer, rel: c.Path, name: "container " + c.ContainerID, id: c.ContainerID, pod: c.PodUID, st: st,
		standalone: standalone, ct: ct, cg: c,
	}, errs) {
		return
	}
	p.sources[ct.Source]++
	mb := s.env.mb
	res := resource.Container(mb.NewResourceBuilder(), s.opts.NodeName, c, ct, s.podLabels(c, ct))
	mb.EmitForResource(metadata.WithResource(res), metadata.WithStartTimeOverride(st.start))
}

// podLabels are the labels of the pod of container c (its path's pod UID,
// else its identity's) when pod_labels is on; nil otherwise or when the
// pod is unknown.
func (s *Scraper) podLabels(c *cgroupfs.Cgroup, ct *identity.Container) map[string]string {
	if !s.opts.PodLabels {
		return nil
	}
	return resource.PodLabels(s.env.ident, c, ct)
}

// setNodeName sets k8s.node.name when known; an unknown name is omitted,
// never an empty string.
func (v *env) setNodeName(rb *metadata.ResourceBuilder) {
	if v.nodeName != "" {
		rb.SetK8sNodeName(v.nodeName)
	}
}
