// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package machine

import (
	"os"
	"testing"
)

// Need stops a real test whose prerequisite is missing (why is not ""):
// it skips the test on a developer's machine, and fails it when the CI
// environment variable is set, since CI installs every prerequisite and a
// missing one there must not pass as a skip.
func Need(t testing.TB, why string) {
	t.Helper()
	if why == "" {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("prerequisite missing in CI: %s", why)
		return
	}
	t.Skip(why)
}
