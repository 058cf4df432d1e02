// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package policy

import (
	"os"
	"path"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	corePrefix    = "go.opentelemetry.io/collector/"
	contribPrefix = "github.com/open-telemetry/opentelemetry-collector-contrib/"
	stanzaModule  = contribPrefix + "pkg/stanza"
	builderModule = corePrefix + "cmd/builder"
	mdatagenMod   = corePrefix + "cmd/mdatagen"
)

// goModRequires returns the module -> version of every require line of a
// go.mod (direct and indirect).
func goModRequires(t *testing.T, file string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	line := regexp.MustCompile(`(?m)^(?:require\s+|\t)(\S+) (v\S+)(?: // indirect)?$`)
	out := map[string]string{}
	for _, m := range line.FindAllStringSubmatch(string(data), -1) {
		out[m[1]] = m[2]
	}
	require.NotEmpty(t, out, "no require lines in %s", file)
	return out
}

// builderModules returns the module -> version of every gomod entry of the
// ocb manifest.
func builderModules(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile("builder-config.yaml")
	require.NoError(t, err)
	out := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^\s*-?\s*gomod: (\S+) (v\S+)`).FindAllStringSubmatch(string(data), -1) {
		out[m[1]] = m[2]
	}
	require.NotEmpty(t, out)
	return out
}

// oneVersion returns the single version the collector core modules of mods
// have for the given major ("v1" stable, "v0" unstable), failing when they
// disagree.
func oneVersion(t *testing.T, where string, mods map[string]string, major string) string {
	t.Helper()
	seen := map[string][]string{}
	for m, v := range mods {
		if strings.HasPrefix(m, corePrefix+"cmd/") || !strings.HasPrefix(m, corePrefix) || !strings.HasPrefix(v, major+".") {
			continue
		}
		seen[v] = append(seen[v], m)
	}
	if !assert.Len(t, seen, 1, "%s: the %s collector core modules are not at one version: %v", where, major, seen) {
		return ""
	}
	for v := range seen {
		return v
	}
	return ""
}

// readDoc returns the text of a markdown file.
func readDoc(t *testing.T, file string) string {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	return string(data)
}

// The collector release is one set: every core module of go.mod and
// builder-config.yaml at one stable and one unstable version, ocb at the
// unstable one (its strict check), the contrib components the receiver's
// tests use at the distribution's version, and README's Collector
// release, docs/release.md and docs/versions.md stating that set, with each contrib module held back from it named with
// its version.
func TestCollectorVersions(t *testing.T) {
	t.Chdir(repoRoot) // the files it checks are the repository\'s
	root := goModRequires(t, "go.mod")
	tools := goModRequires(t, "tools/go.mod")
	dist := builderModules(t)

	stable := oneVersion(t, "go.mod", root, "v1")
	unstable := oneVersion(t, "go.mod", root, "v0")
	assert.Equal(t, stable, oneVersion(t, "builder-config.yaml", dist, "v1"), "builder-config.yaml's stable core version")
	assert.Equal(t, unstable, oneVersion(t, "builder-config.yaml", dist, "v0"), "builder-config.yaml's unstable core version")
	builder, mdatagen := tools[builderModule], tools[mdatagenMod]
	require.NotEmpty(t, builder, "tools/go.mod requires no %s", builderModule)
	require.NotEmpty(t, mdatagen, "tools/go.mod requires no %s", mdatagenMod)
	assert.Equal(t, unstable, builder, "ocb must be the unstable core's version")

	contrib := root[stanzaModule]
	require.NotEmpty(t, contrib, "go.mod requires no %s", stanzaModule)
	for m, v := range dist {
		if rv, ok := root[m]; ok {
			assert.Equal(t, rv, v, "%s: go.mod and builder-config.yaml differ", m)
		}
	}

	readme := readDoc(t, "README.md")
	require.Contains(t, readme, "\n## Collector release\n", "README has no Collector release section")
	readme = readme[strings.Index(readme, "\n## Collector release\n")+1:]
	if j := strings.Index(readme, "\n## "); j >= 0 {
		readme = readme[:j+1] // up to the next section
	}
	release := readDoc(t, "docs/release.md")
	for _, v := range []string{stable, unstable, contrib, builder} {
		assert.Contains(t, readme, "**"+v+"**", "README's Collector release does not state %s", v)
		assert.Contains(t, release, "**"+v+"**", "docs/release.md does not state %s", v)
	}
	versions := readDoc(t, "docs/versions.md")
	for _, v := range []string{stable, unstable, contrib, builder, mdatagen} {
		assert.Contains(t, versions, v, "docs/versions.md does not state %s", v)
	}

	// Contrib modules off the release: named, with their version.
	held := map[string]bool{}
	for _, mods := range []map[string]string{root, dist} {
		for m, v := range mods {
			if !strings.HasPrefix(m, contribPrefix) || v == contrib || held[m+" "+v] {
				continue
			}
			if _, direct := dist[m]; !direct && !isDirect(t, m) {
				continue // an indirect one follows whatever needs it
			}
			held[m+" "+v] = true
			name := path.Base(m)
			assert.Regexp(t, "`"+regexp.QuoteMeta(name)+"`[^\n]*(\n[^\n]+)*"+regexp.QuoteMeta("**"+v+"**"), versions,
				"docs/versions.md does not say that %s is at %s", name, v)
		}
	}
	behind := make([]string, 0, len(held))
	for mv := range held {
		behind = append(behind, strings.TrimPrefix(mv, contribPrefix))
	}
	sort.Strings(behind)
	t.Logf("core %s / %s, contrib %s, ocb %s, mdatagen %s; contrib held back: %v", stable, unstable, contrib, builder, mdatagen, behind)
}

// isDirect reports whether the root go.mod requires m without "// indirect".
func isDirect(t *testing.T, m string) bool {
	t.Helper()
	data, err := os.ReadFile("go.mod")
	require.NoError(t, err)
	return regexp.MustCompile(`(?m)^\t` + regexp.QuoteMeta(m) + ` v\S+$`).Match(data)
}
