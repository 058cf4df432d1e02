// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package logs

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/fileconsumer/attrs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// TestUnparsablePathWarnsOnce: records of a file whose path does not follow
// the kubelet's layout are kept with the resource stanza parsed, their
// log.file.path made the host's, and the path is warned about once however
// many batches come from it.
func TestUnparsablePathWarnsOnce(t *testing.T) {
	core, logged := observer.New(zapcore.WarnLevel)
	sink := new(consumertest.LogsSink)
	root := t.TempDir()
	e := newEnricher(testOptions(root), zap.New(core), sink)
	assert.True(t, e.Capabilities().MutatesData, "the enricher rewrites resources")
	const hostPath = "/var/log/pods/not-a-pod-dir/app/0.log"
	for range 3 {
		ld := plog.NewLogs()
		rl := ld.ResourceLogs().AppendEmpty()
		rl.Resource().Attributes().PutStr("k8s.pod.name", "from-stanza")
		lr := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
		lr.Body().SetStr("a line")
		lr.Attributes().PutStr(attrs.LogFilePath, filepath.Join(root, hostPath))
		require.NoError(t, e.ConsumeLogs(context.Background(), ld))
	}
	require.Equal(t, 3, sink.LogRecordCount(), "no record dropped")
	rl := sink.AllLogs()[2].ResourceLogs().At(0)
	p, _ := rl.ScopeLogs().At(0).LogRecords().At(0).Attributes().Get(attrs.LogFilePath)
	assert.Equal(t, hostPath, p.Str())
	assert.Equal(t, map[string]any{"k8s.pod.name": "from-stanza"}, rl.Resource().Attributes().AsRaw())
	warned := logged.FilterMessageSnippet("does not follow the kubelet layout").All()
	require.Len(t, warned, 1, "one warning per path")
	assert.Equal(t, hostPath, warned[0].ContextMap()["path"])
}
