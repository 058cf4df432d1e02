// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build realmachine

package e2e

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/containerstats/containerstatsreceiver/internal/testing/machine"
)

// limiterConfig is deploy/config.yaml's pipeline (receiver, memory_limiter,
// batch) on this machine, with a memory_limiter far below what the
// collector uses (its soft limit 1 MiB), a debug exporter, and the
// collector's own metrics on a Prometheus endpoint (telemetryAddr).
const limiterConfig = `receivers:
  container_stats:
    root_path: /
    collection_interval: 1s
    node_name: e2e-limiter
    runtime:
      cri_enabled: false
      containerd_enabled: false
      pod_logs: false
processors:
  memory_limiter:
    check_interval: 100ms
    limit_mib: 2
    spike_limit_mib: 1
  batch:
    send_batch_max_size: 8192
exporters:
  debug:
    verbosity: basic
service:
  telemetry:
    metrics:
      level: normal
      readers:
        - pull:
            exporter:
              prometheus:
                host: 127.0.0.1
                port: %s
  pipelines:
    metrics:
      receivers: [container_stats]
      processors: [memory_limiter, batch]
      exporters: [debug]
`

// TestMemoryLimiterRefuses: when the memory limiter refuses data (here
// always: its limit is below the collector's heap), the collector says so
// in its log ("Refusing data"), its own metrics count the refused points
// (the limiter's otelcol_processor_memory_limiter_refused_metric_points
// and the receiver's otelcol_receiver_refused_metric_points, named
// container_stats), it keeps scraping and running (no panic), and it
// shuts down cleanly. docs/deploy.md, "Memory", names these for alerts.
func TestMemoryLimiterRefuses(t *testing.T) {
	machine.Lock(t) // a collector reading this machine's tree
	bin := collectorBin(t)
	addr := freeAddr(t)
	_, port, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	cfg := filepath.Join(t.TempDir(), "limiter.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf(limiterConfig, port)), 0o600))
	p := start(t, "limited", bin, nil, "--config", cfg)

	counter := func(page, name, attr string) float64 {
		re := regexp.MustCompile(`(?m)^` + name + `\{([^}]*)\} (\S+)$`)
		sum := 0.0
		for _, m := range re.FindAllStringSubmatch(page, -1) {
			if strings.Contains(m[1], attr) {
				v, parseFloatErr := strconv.ParseFloat(m[2], 64)
				require.NoError(t, parseFloatErr)
				sum += v
			}
		}
		return sum
	}
	own := func() (string, error) {
		p.alive(t)
		resp, getErr := http.Get("http://" + addr + "/metrics")
		if getErr != nil {
			return "", getErr
		}
		defer resp.Body.Close()
		b, getErr := io.ReadAll(resp.Body)
		return string(b), getErr
	}
	var page string
	eventually(t, time.Minute, "refused points in the collector's own metrics", func() error {
		if page, err = own(); err != nil {
			return err
		}
		if counter(page, "otelcol_processor_memory_limiter_refused_metric_points", `processor="memory_limiter"`) < 1 {
			return fmt.Errorf("no refused points counted yet")
		}
		return nil
	})
	// Still scraping: 3 more scrapes, all refused, and still running.
	refused := counter(page, "otelcol_processor_memory_limiter_refused_metric_points", `processor="memory_limiter"`)
	time.Sleep(3500 * time.Millisecond)
	page, err = own()
	require.NoError(t, err)
	after := counter(page, "otelcol_processor_memory_limiter_refused_metric_points", `processor="memory_limiter"`)
	assert.Greater(t, after, refused, "the limiter keeps refusing the scrapes that follow")
	recv := counter(page, "otelcol_receiver_refused_metric_points", `receiver="container_stats"`)
	assert.Positive(t, recv, "the receiver counts its refused points")
	t.Logf("refused metric points: memory_limiter %.0f, receiver container_stats %.0f", after, recv)

	require.NoError(t, syscall.Kill(p.cmd.Process.Pid, syscall.SIGTERM))
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		t.Fatal("the collector did not stop on SIGTERM")
	}
	assert.NoError(t, p.err, "exit status")
	log := p.tail(1 << 20)
	assert.Contains(t, log, "Refusing data", "the limiter logs its refusal")
	assert.NotContains(t, log, "panic")
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, "Refusing data") {
			t.Logf("its log: %s", l)
			break
		}
	}
}
