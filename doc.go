// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

// Package containerstatsreceiver reads the node's cgroup tree and emits
// container, pod and node metrics with Kubernetes identity.
//
// The repository root is the component package (factory, config and the
// mdatagen metadata.yaml); receiver/ holds the scrape pipeline and internal/
// the data sources. Generated code is refreshed with `make generate`.
package containerstatsreceiver // import "github.com/containerstats/containerstatsreceiver"
