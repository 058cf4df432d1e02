// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package scrape // import "github.com/containerstats/containerstatsreceiver/receiver/scrape"

import (
	"context"

	"github.com/containerstats/containerstatsreceiver/internal/identity"
)

// Identity resolves container IDs and pod UIDs found in the cgroup tree.
// Lookups must only read memory; Prepare may call the runtime when an ID is
// unknown (rate-limited by the implementation).
//
// Pending tells a container whose identity is only not fetched yet
// (identity.Cache.Pending): the scraper leaves such a container, and its
// pod while the pod is unknown too, to the next scrape instead of
// reporting it with the cgroup path's identity for one scrape (a series
// that splits from the real one, or a sandbox taken for a container).
// Instances lists every container the runtime knows, exited ones
// included (identity.Cache.Instances; the events' restarts and the
// runtime's OOM kills), nil without a runtime. The scraper starts the
// identity in its Start and stops it in its Shutdown.
type Identity interface {
	Prepare(ctx context.Context, containerIDs []string)
	Container(id, podUID string) (identity.Container, bool)
	Pod(uid string) (identity.Pod, bool)
	IsSandbox(id string) bool
	Pending(id string) bool
	Instances() []identity.Container
	Start(ctx context.Context) error
	Shutdown(ctx context.Context) error
}

// pathIdentity is the identity without any runtime: what the cgroup path
// gives.
type pathIdentity struct{}

func (pathIdentity) Prepare(context.Context, []string) {}
func (pathIdentity) Container(id, podUID string) (identity.Container, bool) {
	return identity.Container{ID: id, PodUID: podUID, Source: identity.SourcePath}, false
}
func (pathIdentity) Pod(uid string) (identity.Pod, bool) { return identity.Pod{UID: uid}, false }
func (pathIdentity) IsSandbox(string) bool               { return false }
func (pathIdentity) Pending(string) bool                 { return false }
func (pathIdentity) Instances() []identity.Container     { return nil }
func (pathIdentity) Start(context.Context) error         { return nil }
func (pathIdentity) Shutdown(context.Context) error      { return nil }
