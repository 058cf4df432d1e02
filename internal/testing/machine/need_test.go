// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build linux

package machine

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// recorder is a testing.TB that records how it was stopped.
type recorder struct {
	testing.TB
	skipped, failed bool
	msg             string
}

func (r *recorder) Helper() {}
func (r *recorder) Skip(_ ...any) {
	r.skipped = true
}

func (r *recorder) Fatalf(format string, _ ...any) {
	r.failed = true
	r.msg = format
}

// TestNeed: a missing prerequisite skips locally and fails under CI; none
// missing does neither.
func TestNeed(t *testing.T) {
	t.Setenv("CI", "")
	r := &recorder{TB: t}
	Need(r, "")
	assert.False(t, r.skipped || r.failed)
	Need(r, "no containerd")
	assert.True(t, r.skipped)
	assert.False(t, r.failed)

	t.Setenv("CI", "true")
	r = &recorder{TB: t}
	Need(r, "no containerd")
	assert.True(t, r.failed, "CI: a missing prerequisite fails")
	assert.False(t, r.skipped)
}
