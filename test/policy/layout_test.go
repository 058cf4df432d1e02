// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package policy

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// layoutDoc is the one layout table of the repository.
const layoutDoc = "docs/layout.md"

// layoutPaths returns the paths the first column of layoutDoc's table
// names (backticked, slash-separated, a trailing slash for a directory,
// `<name>` and `*` as wildcards), as written.
func layoutPaths(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(layoutDoc)
	require.NoError(t, err)
	tick := regexp.MustCompile("`([^`]+)`")
	var paths []string
	for _, line := range strings.Split(string(data), "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cell := strings.SplitN(line[1:], "|", 2)[0]
		for _, m := range tick.FindAllStringSubmatch(cell, -1) {
			paths = append(paths, m[1])
		}
	}
	require.Greater(t, len(paths), 20, "parsed too few rows of %s's table", layoutDoc)
	return paths
}

// goPackageDirs returns every directory of the repository that holds a
// .go file, outside testdata, hidden directories and the build outputs
// (/bin, /build), each with the directory of the go.mod that owns it.
func goPackageDirs(t *testing.T) map[string]string {
	t.Helper()
	dirs := map[string]string{}
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != "." && (strings.HasPrefix(name, ".") || name == "testdata" || p == "bin" || p == "build") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, ".go") {
			dir := filepath.ToSlash(filepath.Dir(p))
			if _, seen := dirs[dir]; !seen {
				dirs[dir] = moduleRoot(dir)
			}
		}
		return nil
	})
	require.NoError(t, err)
	require.Greater(t, len(dirs), 20, "found too few Go package directories")
	return dirs
}

// moduleRoot returns the nearest directory at or above dir with a go.mod.
func moduleRoot(dir string) string {
	for d := dir; ; d = path.Dir(d) {
		if _, err := os.Stat(path.Join(d, "go.mod")); err == nil || d == "." {
			return d
		}
	}
}

// The layout table stays true: every directory holding a Go package of the
// module has a row (a directory of a separate tool module under tools/ is
// covered by the row of its module, or of any directory between), the root
// package by its files, and every path a row names exists.
func TestLayoutNamesEveryPackage(t *testing.T) {
	t.Chdir(repoRoot) // the files it checks are the repository's
	named := map[string]bool{}
	var stale []string
	for _, p := range layoutPaths(t) {
		pattern := regexp.MustCompile(`<[^>]*>`).ReplaceAllString(p, "*")
		matches, err := filepath.Glob(strings.TrimSuffix(pattern, "/"))
		require.NoError(t, err, "%s names %q", layoutDoc, p)
		if len(matches) == 0 {
			stale = append(stale, p)
			continue
		}
		clean := strings.TrimSuffix(p, "/")
		named[clean] = true
		if strings.HasSuffix(clean, ".go") && !strings.Contains(clean, "/") {
			named["."] = true // the root package, named by its files
		}
	}

	var missing []string
	for dir, mod := range goPackageDirs(t) {
		covered := named[dir]
		for d := dir; !covered && mod != "." && d != mod; {
			d = path.Dir(d)
			covered = named[d]
		}
		if !covered {
			missing = append(missing, dir)
		}
	}
	sort.Strings(missing)
	sort.Strings(stale)
	for _, dir := range missing {
		t.Errorf("%s has no row for the Go package directory %s: add `%s/` to a row's first column", layoutDoc, dir, dir)
	}
	for _, p := range stale {
		t.Errorf("%s's table names `%s`, which does not exist: update or remove its row", layoutDoc, p)
	}
}

// The docs keep their budgets: README.md is a user's first hour,
// CONTRIBUTING.md the rules a contributor reads first; the rest lives in
// docs/ (docs/layout.md says where).
func TestDocBudgets(t *testing.T) {
	t.Chdir(repoRoot) // the files it checks are the repository's
	for file, budget := range map[string]int{"README.md": 400, "CONTRIBUTING.md": 170} {
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		lines := strings.Count(string(data), "\n")
		if lines > budget {
			t.Errorf("%s has %d lines, over its budget of %d: move a section into docs/ and link it", file, lines, budget)
		} else {
			t.Logf("%s: %d lines, budget %d", file, lines, budget)
		}
	}
}
