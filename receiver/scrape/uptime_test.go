// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// uptimes returns every uptime point of a scrape by the resource's key: the
// container ID, the pod UID or "node".
func uptimes(m pmetric.Metrics) map[string]float64 {
	out := map[string]float64{}
	forEachResource(m, func(rm pmetric.ResourceMetrics) {
		a := rm.Resource().Attributes()
		key := "node"
		if v, ok := a.Get("container.id"); ok {
			key = v.Str()
		} else if v, ok := a.Get("k8s.pod.uid"); ok {
			key = v.Str()
		}
		sms := rm.ScopeMetrics()
		for i := 0; i < sms.Len(); i++ {
			ms := sms.At(i).Metrics()
			for j := 0; j < ms.Len(); j++ {
				switch ms.At(j).Name() {
				case "container.uptime", "k8s.pod.uptime", "k8s.node.uptime":
					out[key+" "+ms.At(j).Name()] = ms.At(j).Gauge().DataPoints().At(0).DoubleValue()
				}
			}
		}
	})
	return out
}

// TestUptimes: the node's from /proc/stat btime, each pod's from its
// sandbox's creation and each container's from its own, in whole seconds;
// none for a pod or container no runtime names, nor for a start in the
// future, nor for a node without btime.
func TestUptimes(t *testing.T) {
	root := copyFixture(t, "v1-cgroupfs")
	fi := fullIdentity()
	// cron-9 was created after the scrape's clock: a clock mismatch, no point.
	p := fi.pods[uidBe]
	p.StartTime = t0.Add(time.Hour)
	fi.pods[uidBe] = p
	// db-1 is known without a start time: no point.
	p = fi.pods[uidGu]
	p.StartTime = time.Time{}
	fi.pods[uidGu] = p
	clk := &fakeClock{now: t0.Add(1500 * time.Millisecond)}
	s := startScraper(t, root, false, clk, func(o *Options) { o.Identity = fi })
	got, err := s.Scrape(context.Background())
	require.NoError(t, err)
	up := uptimes(got)

	whole := func(start time.Time) float64 { return float64(clk.now.Sub(start) / time.Second) }
	assert.Equal(t, whole(time.Unix(1700000000, 0)), up["node k8s.node.uptime"], "btime 1700000000 of the fixture's /proc/stat")
	assert.Equal(t, whole(tStart.Add(4*time.Second)), up[uidBu+" k8s.pod.uptime"])
	assert.Equal(t, whole(tStart.Add(1*time.Second)), up[idA1+" container.uptime"])
	assert.Equal(t, whole(tStart.Add(2*time.Second)), up[idB2+" container.uptime"])
	assert.NotContains(t, up, uidBe+" k8s.pod.uptime", "created in the future")
	assert.NotContains(t, up, uidGu+" k8s.pod.uptime", "no start time")
	for k := range up {
		if id, ok := strings.CutSuffix(k, " container.uptime"); ok {
			assert.Contains(t, []string{idA1, idB2, idC3}, id, "no uptime for a container no runtime named")
		}
	}

	// Without btime the node has no uptime, never one counted from 1970.
	root2 := copyFixture(t, "v2-systemd")
	require.NoError(t, os.WriteFile(filepath.Join(root2, "proc", "stat"), []byte("cpu 1 2 3 4\n"), 0o600))
	s2 := startScraper(t, root2, false, &fakeClock{now: t0}, func(*Options) {})
	got, err = s2.Scrape(context.Background())
	require.NoError(t, err)
	assert.NotContains(t, uptimes(got), "node k8s.node.uptime")
}
