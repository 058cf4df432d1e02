// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package identity // import "github.com/containerstats/containerstatsreceiver/internal/identity"

import (
	"fmt"
	"path"
	"regexp"
	"strings"
)

// RegexPrefix marks a filter pattern as a regular expression (Go RE2,
// unanchored unless the pattern anchors itself); other patterns are globs
// (path.Match syntax: *, ?, [a-z]).
const RegexPrefix = "regex:"

// Pattern is one compiled filter pattern.
type Pattern struct {
	src  string
	re   *regexp.Regexp
	glob string
}

// CompilePattern compiles a glob or, with RegexPrefix, a regular expression.
func CompilePattern(p string) (Pattern, error) {
	if expr, ok := strings.CutPrefix(p, RegexPrefix); ok {
		re, err := regexp.Compile(expr)
		if err != nil {
			return Pattern{}, fmt.Errorf("pattern %q: %w", p, err)
		}
		return Pattern{src: p, re: re}, nil
	}
	if p == "" {
		return Pattern{}, fmt.Errorf("pattern %q: empty", p)
	}
	if _, err := path.Match(p, ""); err != nil {
		return Pattern{}, fmt.Errorf("pattern %q: %w", p, err)
	}
	return Pattern{src: p, glob: p}, nil
}

// Match reports whether v matches.
func (p Pattern) Match(v string) bool {
	if p.re != nil {
		return p.re.MatchString(v)
	}
	ok, _ := path.Match(p.glob, v)
	return ok
}

// String is the pattern as configured.
func (p Pattern) String() string { return p.src }

// Rules are include and exclude patterns for one name.
type Rules struct {
	Include []Pattern
	Exclude []Pattern
}

// CompileRules compiles both lists.
func CompileRules(include, exclude []string) (Rules, error) {
	var r Rules
	for _, s := range include {
		p, err := CompilePattern(s)
		if err != nil {
			return Rules{}, fmt.Errorf("include: %w", err)
		}
		r.Include = append(r.Include, p)
	}
	for _, s := range exclude {
		p, err := CompilePattern(s)
		if err != nil {
			return Rules{}, fmt.Errorf("exclude: %w", err)
		}
		r.Exclude = append(r.Exclude, p)
	}
	return r, nil
}

// Allow reports whether a value passes: no exclude pattern matches it and,
// when there are include patterns, one of them does. An unknown value ("")
// matches no pattern: it passes only when there are no include patterns.
func (r Rules) Allow(v string) bool {
	if v == "" {
		return len(r.Include) == 0
	}
	for _, p := range r.Exclude {
		if p.Match(v) {
			return false
		}
	}
	if len(r.Include) == 0 {
		return true
	}
	for _, p := range r.Include {
		if p.Match(v) {
			return true
		}
	}
	return false
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
