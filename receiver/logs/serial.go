// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package logs // import "github.com/containerstats/containerstatsreceiver/receiver/logs"

import (
	"context"
	"sync"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/entry"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator/helper"
	"go.opentelemetry.io/collector/component"
)

// serialConfig builds an operator that passes entries on unchanged, one
// batch at a time. It sits in front of stanza's container parser (v0.159.0,
// still so in v0.165.1):
// the parser keeps the time layout of the format it detected in a field
// that ProcessBatch writes and then reads, and the file consumer calls it
// from one goroutine per file. Concurrent batches race on that field (the
// race detector reports it; with CRI-O and containerd/docker files on one
// node a timestamp could be parsed with the other format's layout).
// Reading and line splitting stay parallel; parsing is serialized.
type serialConfig struct {
	helper.TransformerConfig
}

func newSerialConfig(id string) *serialConfig {
	return &serialConfig{TransformerConfig: helper.NewTransformerConfig(id, "container_stats_serial")}
}

func (c *serialConfig) Build(set component.TelemetrySettings) (operator.Operator, error) {
	t, err := c.TransformerConfig.Build(set)
	if err != nil {
		return nil, err
	}
	return &serial{TransformerOperator: t}, nil
}

type serial struct {
	helper.TransformerOperator
	mu sync.Mutex
}

func (s *serial) ProcessBatch(ctx context.Context, entries []*entry.Entry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.WriteBatch(ctx, entries)
}

func (s *serial) Process(ctx context.Context, e *entry.Entry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.Write(ctx, e)
}
