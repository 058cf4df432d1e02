// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build realmachine

package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"
)

// otlpSink is a second otelcol-containerstats whose OTLP/gRPC receiver
// writes everything to a file exporter (config/e2e-sink.yaml).
type otlpSink struct {
	endpoint string
	file     string
	proc     *process
}

func startSink(t *testing.T, bin string) *otlpSink {
	t.Helper()
	s := &otlpSink{endpoint: freeAddr(t), file: filepath.Join(t.TempDir(), "otlp.json")}
	s.proc = start(t, "otlp-sink", bin,
		[]string{"E2E_OTLP_ENDPOINT=" + s.endpoint, "E2E_OTLP_FILE=" + s.file},
		"--config", filepath.Join(repoRoot(t), "config", "e2e-sink.yaml"))
	return s
}

// point is one data point read back from the OTLP file.
type point struct {
	resource map[string]any
	metric   string
	attrs    map[string]any
	value    float64
	at       time.Time
}

// read parses every complete line of the file (one JSON
// ExportMetricsServiceRequest each) into points.
func (s *otlpSink) read() ([]point, error) {
	b, err := os.ReadFile(s.file)
	if err != nil {
		return nil, err
	}
	var out []point
	var u pmetric.JSONUnmarshaler
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for n := 1; sc.Scan(); n++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		md, err := u.UnmarshalMetrics(sc.Bytes())
		if err != nil {
			if !bytes.HasSuffix(b, []byte("\n")) {
				break // the last line is still being written
			}
			return nil, fmt.Errorf("%s line %d: %w", s.file, n, err)
		}
		out = append(out, metricPoints(md)...)
	}
	return out, sc.Err()
}

// metricPoints are md's number data points (sums and gauges), each with
// its resource, metric name, attributes, value and time.
func metricPoints(md pmetric.Metrics) []point {
	var out []point
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		res := rms.At(i).Resource().Attributes().AsRaw()
		sms := rms.At(i).ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			ms := sms.At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				m := ms.At(k)
				var dps pmetric.NumberDataPointSlice
				switch m.Type() {
				case pmetric.MetricTypeSum:
					dps = m.Sum().DataPoints()
				case pmetric.MetricTypeGauge:
					dps = m.Gauge().DataPoints()
				default:
					continue
				}
				for d := 0; d < dps.Len(); d++ {
					dp := dps.At(d)
					v := dp.DoubleValue()
					if dp.ValueType() == pmetric.NumberDataPointValueTypeInt {
						v = float64(dp.IntValue())
					}
					out = append(out, point{
						resource: res, metric: m.Name(), attrs: dp.Attributes().AsRaw(),
						value: v, at: dp.Timestamp().AsTime(),
					})
				}
			}
		}
	}
	return out
}
