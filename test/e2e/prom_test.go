// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build realmachine

package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// prometheus is a real Prometheus (Debian's 2.42) on loopback with its
// remote-write receiver on and no scrape targets: everything in it came
// from the collector's prometheus_remote_write exporter.
type prometheus struct {
	addr string
	proc *process
}

func startPrometheus(t *testing.T) *prometheus {
	t.Helper()
	return startPrometheusWith(t, "global:\n  scrape_interval: 1h\n")
}

// startPrometheusWith starts Prometheus with config as its prometheus.yml
// (rule files, scrape targets of the test's own).
func startPrometheusWith(t *testing.T, config string) *prometheus {
	t.Helper()
	return startPrometheusOn(t, freeAddr(t), config)
}

// startPrometheusOn is startPrometheusWith listening on addr (host:port).
func startPrometheusOn(t *testing.T, addr, config string) *prometheus {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		need(t, "prometheus not installed (apt-get install --no-install-recommends prometheus)")
	}
	return launchPrometheus(t, "prometheus", bin, addr, config, "--web.enable-remote-write-receiver")
}

// launchPrometheus starts the Prometheus binary bin as name with config as
// its prometheus.yml, temp storage, listening on addr, with extra flags,
// and waits until it is ready.
func launchPrometheus(t *testing.T, name, bin, addr, config string, extra ...string) *prometheus {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, []byte(config), 0o600); err != nil { //nolint:gosec // G703: a test: a path of the test's own (temp dir, repository, /proc, guest share), not input
		t.Fatal(err)
	}
	p := &prometheus{addr: addr}
	p.proc = start(t, name, bin, nil, append([]string{
		"--config.file=" + cfg,
		"--storage.tsdb.path=" + filepath.Join(dir, "data"),
		"--web.listen-address=" + p.addr,
		"--log.level=warn",
	}, extra...)...)
	eventually(t, 30*time.Second, "prometheus ready", func() error {
		p.proc.alive(t)
		resp, err := http.Get("http://" + p.addr + "/-/ready")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("/-/ready: %s", resp.Status)
		}
		return nil
	})
	return p
}

func (p *prometheus) remoteWriteURL() string { return "http://" + p.addr + "/api/v1/write" }

// sample is one series of an instant query's vector result.
type sample struct {
	Labels map[string]string
	Value  float64
	At     time.Time
}

// query runs an instant PromQL query through the HTTP API.
func (p *prometheus) query(promql string) ([]sample, error) {
	return p.queryAt(promql, time.Time{})
}

// queryAt runs an instant PromQL query evaluated at a given time (the
// server's now when at is zero).
func (p *prometheus) queryAt(promql string, at time.Time) ([]sample, error) {
	q := url.Values{"query": {promql}}
	if !at.IsZero() {
		q.Set("time", strconv.FormatFloat(float64(at.UnixMilli())/1000, 'f', 3, 64))
	}
	resp, err := http.Get("http://" + p.addr + "/api/v1/query?" + q.Encode())
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string `json:"resultType"`
			Result     []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("query %q: %w: %.200s", promql, err, body)
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("query %q: %s", promql, r.Error)
	}
	if r.Data.ResultType != "vector" {
		return nil, fmt.Errorf("query %q: result type %s, want vector", promql, r.Data.ResultType)
	}
	out := make([]sample, 0, len(r.Data.Result))
	for _, s := range r.Data.Result {
		ts, _ := s.Value[0].(float64)
		vs, _ := s.Value[1].(string)
		v, err := strconv.ParseFloat(vs, 64)
		if err != nil {
			return nil, fmt.Errorf("query %q: value %v: %w", promql, s.Value[1], err)
		}
		out = append(out, sample{Labels: s.Metric, Value: v, At: time.Unix(0, int64(ts*1e9))})
	}
	return out, nil
}

// one runs promql and requires exactly one series back.
func (p *prometheus) one(promql string) (sample, error) {
	s, err := p.query(promql)
	if err != nil {
		return sample{}, err
	}
	if len(s) != 1 {
		return sample{}, fmt.Errorf("%s: %d series, want exactly 1: %v", promql, len(s), s)
	}
	return s[0], nil
}
