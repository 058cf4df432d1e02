// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package policy

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"

	"github.com/containerstats/containerstatsreceiver"
)

// The README's configuration reference stays true: every key its table
// names exists in the config, and every key of the config (down to the
// second level) is in the table.
func TestReadmeDocumentsEveryConfigKey(t *testing.T) {
	t.Chdir(repoRoot) // the files it checks are the repository\'s
	data, err := os.ReadFile("README.md")
	require.NoError(t, err)
	section := string(data)
	start := strings.Index(section, "## Configuration")
	require.GreaterOrEqual(t, start, 0)
	section = section[start:]
	section = section[:strings.Index(section[3:], "\n## ")+3]

	conf := confmap.New()
	require.NoError(t, conf.Marshal(containerstatsreceiver.NewFactory().CreateDefaultConfig()))
	all := conf.AllKeys()
	known := map[string]bool{}
	for _, k := range all {
		parts := strings.Split(k, "::")
		for i := 1; i <= len(parts) && i <= 3; i++ {
			known[strings.Join(parts[:i], ".")] = true
		}
	}

	cellKey := regexp.MustCompile("`([a-z_.]+)`")
	documented := map[string]bool{}
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cell := strings.SplitN(line[1:], "|", 2)[0]
		prev := ""
		for _, k := range cellKey.FindAllStringSubmatch(cell, -1) {
			key := k[1]
			if strings.HasPrefix(key, ".") && prev != "" { // "`.pods`": a sibling of the previous key
				key = prev[:strings.LastIndex(prev, ".")] + key
			}
			prev = key
			documented[key] = true
			assert.True(t, known[key], "README documents %q, which the config does not have", key)
		}
	}
	require.Greater(t, len(documented), 20, "parsed too few README rows")

	for _, k := range all {
		key := strings.ReplaceAll(k, "::", ".")
		if strings.HasPrefix(key, "metrics.") || strings.HasPrefix(key, "resource_attributes.") {
			continue // documented as metrics::<name>::enabled; listed in documentation.md
		}
		ok := false
		for d := key; d != ""; {
			if documented[d] {
				ok = true
				break
			}
			i := strings.LastIndex(d, ".")
			if i < 0 {
				break
			}
			d = d[:i]
		}
		assert.True(t, ok, "config key %q is not in the README's configuration table", key)
	}
}
