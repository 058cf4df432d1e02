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

// A request sent again (every record of it twice, as the gateway's file
// exporter writes it, one line per export request) is one event per
// record; one record twice inside one export request fails, and so does a
// request that repeats earlier records without being an earlier request
// again; one event detected twice fails, whether the second detection has
// the same UID (another timestamp) or another UID (two events, which the
// caller counts).
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
	other := Event{
		Name: "k8s.container.restart", Res: map[string]any{"container.id": "f00d", "k8s.pod.name": "other"}, At: at.Add(time.Second), Sev: "WARN",
		Attr: map[string]any{RecordUID: "11111111-0000-5000-8000-000000000004", "k8s.container.status.last_terminated_reason": "Error"},
	}

	t.Run("resent request", func(t *testing.T) {
		d, copies, err := DistinctEvents([][]Event{{oom, restart}, {other}, {oom, restart}})
		require.NoError(t, err)
		assert.Equal(t, []Event{oom, restart, other}, d)
		assert.Equal(t, 2, copies)
	})
	t.Run("once", func(t *testing.T) {
		d, copies, err := DistinctEvents([][]Event{{oom}, {restart}})
		require.NoError(t, err)
		assert.Equal(t, []Event{oom, restart}, d)
		assert.Zero(t, copies)
	})
	t.Run("one record twice in one request", func(t *testing.T) {
		_, _, err := DistinctEvents([][]Event{{oom, restart, oom}})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "one record twice in one export request")
	})
	t.Run("a whole request twice in one request", func(t *testing.T) {
		_, _, err := DistinctEvents([][]Event{{oom, restart, oom, restart}})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "one record twice in one export request")
	})
	t.Run("a copy beside a new record", func(t *testing.T) {
		_, _, err := DistinctEvents([][]Event{{oom, restart}, {oom, other}})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "repeats 1 of its 2 records but is no earlier request sent again")
	})
	t.Run("part of a request again", func(t *testing.T) {
		_, _, err := DistinctEvents([][]Event{{oom, restart}, {oom}})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "repeats 1 of its 1 records but is no earlier request sent again")
	})
	t.Run("detected twice, same uid", func(t *testing.T) {
		again := oom
		again.At = at.Add(10 * time.Second) // the next scrape's
		_, _, err := DistinctEvents([][]Event{{oom, restart}, {again}})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "one event detected twice")
	})
	t.Run("detected twice, another uid", func(t *testing.T) {
		again := oom
		again.At = at.Add(10 * time.Second)
		again.Attr = map[string]any{RecordUID: "11111111-0000-5000-8000-000000000003", "k8s.container.oom_kill.source": "cgroup"}
		d, copies, err := DistinctEvents([][]Event{{oom}, {again}})
		require.NoError(t, err)
		assert.Len(t, d, 2, "two events: the caller's count of one fails")
		assert.Zero(t, copies)
	})
	t.Run("no uid", func(t *testing.T) {
		bare := oom
		bare.Attr = map[string]any{"k8s.container.oom_kill.source": "runtime"}
		_, _, err := DistinctEvents([][]Event{{bare}})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "without log.record.uid")
	})
}
