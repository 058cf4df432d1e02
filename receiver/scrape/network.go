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

	"github.com/containerstats/containerstatsreceiver/internal/metadata"
	"github.com/containerstats/containerstatsreceiver/internal/procfs"
)

// netPoints is what a failed network read costs: an unknown number of
// interfaces; counted as one interface's 4 metrics x 2 directions.
const netPoints = 8

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

// netRead is one network namespace's interfaces in one scrape.
type netRead struct {
	devs []procfs.NetDev
	ok   bool
	err  error
}

// netnsState is the host's network namespace (PID 1's), read at most once
// per scrape, the first time a standalone container needs it.
type netnsState struct {
	gen    uint64 // the scrape it was read in
	host   string
	byLink bool // the method: the ns/net link, else the net/dev inode (procfs.NetNS)
	ok     bool
	err    error
}

// wantNet reports whether a network metric of kind is enabled. A pod's
// containers share its namespace: their network is reported at pod level;
// only standalone containers (in no pod) have container-level network.
func (s *Scraper) wantNet(k cgroupKind) bool {
	m := &s.opts.MetricsBuilderConfig.Metrics
	switch k {
	case kindNode:
		return m.K8sNodeNetworkIo.Enabled || m.K8sNodeNetworkPackets.Enabled || m.K8sNodeNetworkErrors.Enabled || m.K8sNodeNetworkDropped.Enabled
	case kindPod:
		return m.K8sPodNetworkIo.Enabled || m.K8sPodNetworkPackets.Enabled || m.K8sPodNetworkErrors.Enabled || m.K8sPodNetworkDropped.Enabled
	}
	return m.ContainerNetworkIo.Enabled || m.ContainerNetworkPackets.Enabled || m.ContainerNetworkErrors.Enabled || m.ContainerNetworkDropped.Enabled
}

// hostNetNS returns the host's network namespace (of PID 1 under
// root_path), read once per scrape: its /proc/1/ns/net link, or where that
// is refused (EACCES, EPERM: no ptrace access to PID 1, as in some
// sandboxes) the inode of /proc/1/net/dev; containers are compared by the
// same method.
func (s *Scraper) hostNetNS() (string, bool, error) {
	if s.netns.gen != s.gen {
		s.netns.gen, s.netns.byLink = s.gen, true
		s.netns.host, s.netns.ok, s.netns.err = s.proc.NetNS(1, true)
		if errors.Is(s.netns.err, fs.ErrPermission) {
			s.netns.byLink = false
			s.netns.host, s.netns.ok, s.netns.err = s.proc.NetNS(1, false)
		}
	}
	return s.netns.host, s.netns.ok, s.netns.err
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
func (s *Scraper) readNet(e entity, n *netRead) {
	if !s.wantNet(e.kind) || e.kind == kindContainer && !e.standalone {
		return
	}
	pid := 1
	if e.kind != kindNode {
		p, ok, err := s.reader.AnyPID(e.rel)
		if err != nil || !ok {
			n.err = err
			return
		}
		pid = p
	}
	if e.kind == kindContainer {
		host, ok, err := s.hostNetNS()
		if err != nil || !ok {
			if err != nil {
				n.err = fmt.Errorf("the host's network namespace: %w", err)
			}
			return
		}
		ns, ok, err := s.proc.NetNS(pid, s.netns.byLink)
		if err != nil || !ok || ns == host {
			n.err = err
			return
		}
	}
	n.devs, n.ok, n.err = s.proc.NetDev(pid, nil)
}

// recordNet records bytes, packets, errors and drops per interface and
// direction, interfaces cAdvisor ignores left out.
func (s *Scraper) recordNet(ts pcommon.Timestamp, e entity, n *netRead, errs *scrapererror.ScrapeErrors) {
	if n.err != nil {
		errs.AddPartial(netPoints, fmt.Errorf("%s: network: %w", e.name, n.err))
		return
	}
	if !n.ok {
		return
	}
	type rec = func(pcommon.Timestamp, int64, string, metadata.AttributeNetworkIoDirection)
	var io, packets, errors, dropped rec
	switch e.kind {
	case kindNode:
		io, packets, errors, dropped = s.mb.RecordK8sNodeNetworkIoDataPoint, s.mb.RecordK8sNodeNetworkPacketsDataPoint,
			s.mb.RecordK8sNodeNetworkErrorsDataPoint, s.mb.RecordK8sNodeNetworkDroppedDataPoint
	case kindPod:
		io, packets, errors, dropped = s.mb.RecordK8sPodNetworkIoDataPoint, s.mb.RecordK8sPodNetworkPacketsDataPoint,
			s.mb.RecordK8sPodNetworkErrorsDataPoint, s.mb.RecordK8sPodNetworkDroppedDataPoint
	default:
		io, packets, errors, dropped = s.mb.RecordContainerNetworkIoDataPoint, s.mb.RecordContainerNetworkPacketsDataPoint,
			s.mb.RecordContainerNetworkErrorsDataPoint, s.mb.RecordContainerNetworkDroppedDataPoint
	}
	rx, tx := metadata.AttributeNetworkIoDirectionReceive, metadata.AttributeNetworkIoDirectionTransmit
	for i := range n.devs {
		d := &n.devs[i]
		if ignoredNetDev(d.Name) {
			continue
		}
		io(ts, clampInt64(d.RxBytes), d.Name, rx)
		io(ts, clampInt64(d.TxBytes), d.Name, tx)
		packets(ts, clampInt64(d.RxPackets), d.Name, rx)
		packets(ts, clampInt64(d.TxPackets), d.Name, tx)
		errors(ts, clampInt64(d.RxErrors), d.Name, rx)
		errors(ts, clampInt64(d.TxErrors), d.Name, tx)
		dropped(ts, clampInt64(d.RxDropped), d.Name, rx)
		dropped(ts, clampInt64(d.TxDropped), d.Name, tx)
	}
}
