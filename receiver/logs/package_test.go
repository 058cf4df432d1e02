// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package logs

import (
	"testing"

	"go.uber.org/goleak"
)

// Every test stops what it starts: stanza's pollers, emitters and the
// identity cache's refresh loop.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
