// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape // import "github.com/containerstats/containerstatsreceiver/receiver/scrape"

import (
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/scraper/scrapererror"

	"github.com/containerstats/containerstatsreceiver/internal/cgroupfs"
	"github.com/containerstats/containerstatsreceiver/internal/metadata"
)

func (s *Scraper) scrapeNode(now time.Time, errs *scrapererror.ScrapeErrors) {
	start := s.bootTime
	if start == 0 {
		start = pcommon.NewTimestampFromTime(now)
	}
	st := s.get(seriesKey{kind: kindNode}, start)
	if !s.scrapeCgroup(now, entity{kind: kindNode, rel: "/", name: "node", st: st}, errs) {
		return
	}
	rb := s.mb.NewResourceBuilder()
	s.setNodeName(rb)
	s.mb.EmitForResource(metadata.WithResource(rb.Emit()), metadata.WithStartTimeOverride(st.start))
}

func (s *Scraper) scrapePod(now time.Time, pod *cgroupfs.Cgroup, errs *scrapererror.ScrapeErrors) {
	st := s.get(seriesKey{kind: kindPod, id: pod.PodUID}, pcommon.NewTimestampFromTime(now))
	if !s.scrapeCgroup(now, entity{kind: kindPod, rel: pod.Path, name: "pod " + pod.PodUID, pod: pod.PodUID, st: st}, errs) {
		return
	}
	rb := s.mb.NewResourceBuilder()
	s.setNodeName(rb)
	rb.SetK8sPodUID(pod.PodUID)
	rb.SetK8sPodQosClass(pod.QoS)
	s.mb.EmitForResource(metadata.WithResource(rb.Emit()), metadata.WithStartTimeOverride(st.start))
}

func (s *Scraper) scrapeContainer(now time.Time, c *cgroupfs.Cgroup, errs *scrapererror.ScrapeErrors) {
	st := s.get(seriesKey{kind: kindContainer, id: c.ContainerID}, pcommon.NewTimestampFromTime(now))
	if !s.scrapeCgroup(now, entity{kind: kindContainer, rel: c.Path, name: "container " + c.ContainerID, pod: c.PodUID, st: st}, errs) {
		return
	}
	rb := s.mb.NewResourceBuilder()
	s.setNodeName(rb)
	rb.SetContainerID(c.ContainerID)
	if c.Runtime != "" {
		rb.SetContainerRuntimeName(c.Runtime)
	}
	if c.PodUID != "" {
		rb.SetK8sPodUID(c.PodUID)
		rb.SetK8sPodQosClass(c.QoS)
	}
	s.recordContainerGPU(now, c.ContainerID)
	s.mb.EmitForResource(metadata.WithResource(rb.Emit()), metadata.WithStartTimeOverride(st.start))
}

// setNodeName sets k8s.node.name when known; an unknown name is omitted,
// never an empty string.
func (s *Scraper) setNodeName(rb *metadata.ResourceBuilder) {
	if s.opts.NodeName != "" {
		rb.SetK8sNodeName(s.opts.NodeName)
	}
}
