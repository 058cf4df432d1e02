// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package identity // import "github.com/containerstats/containerstatsreceiver/internal/identity"

import (
	"fmt"

	"go.opentelemetry.io/collector/filter"
)

// Rules are include and exclude patterns for one name, in the collector's
// own filter syntax (filter.Config: `strict: <name>` or `regexp: <RE2>`, the
// syntax mdatagen's metrics_include/metrics_exclude use).
type Rules struct {
	include, exclude       filter.Filter
	hasInclude, hasExclude bool
}

// CompileRules validates and compiles both lists; an error names the list
// and the entry's index.
func CompileRules(include, exclude []filter.Config) (Rules, error) {
	for _, l := range []struct {
		key string
		cs  []filter.Config
	}{{"include", include}, {"exclude", exclude}} {
		for i, c := range l.cs {
			if err := c.Validate(); err != nil {
				return Rules{}, fmt.Errorf("%s::%d: %w", l.key, i, err)
			}
		}
	}
	r := Rules{hasInclude: len(include) > 0, hasExclude: len(exclude) > 0}
	if r.hasInclude {
		r.include = filter.CreateFilter(include)
	}
	if r.hasExclude {
		r.exclude = filter.CreateFilter(exclude)
	}
	return r, nil
}

// Allow reports whether a value passes: no exclude pattern matches it and,
// when there are include patterns, one of them does. An unknown value ("")
// matches no pattern: it passes only when there are no include patterns.
func (r Rules) Allow(v string) bool {
	if v == "" {
		return !r.hasInclude
	}
	if r.hasExclude && r.exclude.Matches(v) {
		return false
	}
	return !r.hasInclude || r.include.Matches(v)
}

// Filter selects the pods and containers a scrape reports.
type Filter struct {
	Namespaces Rules
	Pods       Rules
	Containers Rules
}

// AllowPod reports whether a pod passes the namespace and pod rules.
func (f Filter) AllowPod(namespace, pod string) bool {
	return f.Namespaces.Allow(namespace) && f.Pods.Allow(pod)
}

// AllowContainer reports whether a container passes all three rules.
func (f Filter) AllowContainer(namespace, pod, container string) bool {
	return f.AllowPod(namespace, pod) && f.Containers.Allow(container)
}

// Selector is what Select asks of the runtimes' identity (Cache).
type Selector interface {
	Container(id, podUID string) (Container, bool)
	Pending(id string) bool
	IsSandbox(id string) bool
}

// Select is the identity of container id (of pod podUID, "" when none)
// and whether the scrape reports it, its metrics and its events alike.
// pending: its identity is not fetched yet (new since the runtime's last
// listing), so it is left to the next scrape. Otherwise it is reported
// unless it exited, is a sandbox (and includeSandboxes is off), or f
// drops it.
func Select(s Selector, id, podUID string, includeSandboxes bool, f Filter) (ct Container, pending, report bool) {
	ct, _ = s.Container(id, podUID)
	if s.Pending(id) {
		return ct, true, false
	}
	if ct.Exited || (!includeSandboxes && (ct.Sandbox || s.IsSandbox(id))) {
		return ct, false, false
	}
	return ct, false, f.AllowContainer(ct.Namespace, ct.PodName, ct.ContainerName)
}
