// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package opt

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestValue(t *testing.T) {
	var absent Value[uint64]
	assert.False(t, absent.OK, "the zero value is absent, not 0")
	zero := Some(uint64(0))
	assert.True(t, zero.OK)
	assert.NotEqual(t, absent, zero, "absent and zero differ")
	assert.Equal(t, Value[float64]{V: 1.5, OK: true}, Some(1.5))
}
