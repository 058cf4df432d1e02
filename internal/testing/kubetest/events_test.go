// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build linux

package kubetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A batch sent again (every record of it twice, as the gateway's file
// exporter writes it) is one event per record; one event detected twice
// fails, whether the second detection has the same UID (another
// timestamp) or another UID (two events, which the caller counts).
func TestDistinctEvents(t *testing.T) {
	at := time.Date(2026, 11, 27, 23, 0, 0, 151148586, time.UTC)
	res := map[string]any{"container.id": "c0ffee", "k8s.pod.name": "oom", "k8s.container.name": "hog"}
	oom := Event{
		Name: "k8s.container.oom_kill", Res: res, At: at, Sev: "WARN", Body: "container hog of pod work/oom: OOM killed (exit code 137)",
		Attr: map[string]any{RecordUID: "11111111-0000-5000-8000-000000000001", "k8s.container.oom_kill.source": "runtime"},
	}
	restart := Event{
		Name: "k8s.container.restart", Res: map[string]any{"container.id": "beef", "k8s.pod.name": "oom"}, At: at, Sev: "WARN",
		Attr: map[string]any{RecordUID: "11111111-0000-5000-8000-000000000002", "k8s.container.status.last_terminated_reason": "OOMKilled"},
	}

	t.Run("resent batch", func(t *testing.T) {
		d, copies, err := DistinctEvents([]Event{oom, restart, oom, restart})
		require.NoError(t, err)
		assert.Equal(t, []Event{oom, restart}, d)
		assert.Equal(t, 2, copies)
	})
	t.Run("once", func(t *testing.T) {
		d, copies, err := DistinctEvents([]Event{oom, restart})
		require.NoError(t, err)
		assert.Len(t, d, 2)
		assert.Zero(t, copies)
	})
	t.Run("detected twice, same uid", func(t *testing.T) {
		again := oom
		again.At = at.Add(10 * time.Second) // the next scrape's
		_, _, err := DistinctEvents([]Event{oom, restart, again})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "one event detected twice")
	})
	t.Run("detected twice, another uid", func(t *testing.T) {
		again := oom
		again.At = at.Add(10 * time.Second)
		again.Attr = map[string]any{RecordUID: "11111111-0000-5000-8000-000000000003", "k8s.container.oom_kill.source": "cgroup"}
		d, copies, err := DistinctEvents([]Event{oom, again})
		require.NoError(t, err)
		assert.Len(t, d, 2, "two events: the caller's count of one fails")
		assert.Zero(t, copies)
	})
	t.Run("no uid", func(t *testing.T) {
		bare := oom
		bare.Attr = map[string]any{"k8s.container.oom_kill.source": "runtime"}
		_, _, err := DistinctEvents([]Event{bare})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "without log.record.uid")
	})
}
