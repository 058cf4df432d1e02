// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

// Package policy holds the repository's policy tests: README's
// configuration reference against the config, metadata.yaml against the
// semantic conventions, the stated versions against go.mod and
// builder-config.yaml, docs/layout.md's table against the tree, README's
// and CONTRIBUTING's line budgets. They read the repository's files, not
// the component's internals.
package policy

// repoRoot is the repository, from this package's directory.
const repoRoot = "../.."
