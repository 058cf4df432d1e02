// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape // import "github.com/containerstats/containerstatsreceiver/receiver/scrape"

import (
	"fmt"
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

// wantNet reports whether a network metric of kind is enabled. Containers
// share their pod's namespace: network is reported at pod and node level.
func (s *Scraper) wantNet(k cgroupKind) bool {
	m := &s.opts.MetricsBuilderConfig.Metrics
	switch k {
	case kindNode:
		return m.K8sNodeNetworkIo.Enabled || m.K8sNodeNetworkPackets.Enabled || m.K8sNodeNetworkErrors.Enabled || m.K8sNodeNetworkDropped.Enabled
	case kindPod:
		return m.K8sPodNetworkIo.Enabled || m.K8sPodNetworkPackets.Enabled || m.K8sPodNetworkErrors.Enabled || m.K8sPodNetworkDropped.Enabled
	}
	return false
}

// readNet reads /proc/<pid>/net/dev of the host's PID 1 for the node, of
// one process of the pod's cgroup subtree for a pod. A pod without a
// process, or whose process exits before its file is read, has no data.
func (s *Scraper) readNet(e entity, n *netRead) {
	if !s.wantNet(e.kind) {
		return
	}
	pid := 1
	if e.kind == kindPod {
		p, ok, err := s.reader.AnyPID(e.rel)
		if err != nil || !ok {
			n.err = err
			return
		}
		pid = p
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
	if e.kind == kindNode {
		io, packets, errors, dropped = s.mb.RecordK8sNodeNetworkIoDataPoint, s.mb.RecordK8sNodeNetworkPacketsDataPoint,
			s.mb.RecordK8sNodeNetworkErrorsDataPoint, s.mb.RecordK8sNodeNetworkDroppedDataPoint
	} else {
		io, packets, errors, dropped = s.mb.RecordK8sPodNetworkIoDataPoint, s.mb.RecordK8sPodNetworkPacketsDataPoint,
			s.mb.RecordK8sPodNetworkErrorsDataPoint, s.mb.RecordK8sPodNetworkDroppedDataPoint
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
