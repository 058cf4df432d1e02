// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

// Package opt is the receiver's one optional-value type: a value read from
// the kernel or a library together with its presence. Absent, zero and
// unlimited differ: a field the source did not give is !OK (no data point),
// never 0.
package opt // import "github.com/containerstats/containerstatsreceiver/internal/opt"

// Value is a value with its presence: OK is false when the source (file,
// key, library call) does not have it.
type Value[T any] struct {
	V  T
	OK bool
}

// Some returns a present value.
func Some[T any](v T) Value[T] { return Value[T]{V: v, OK: true} }
