// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build !linux

package fsstats // import "github.com/containerstats/containerstatsreceiver/internal/fsstats"

import (
	"errors"
	"fmt"
)

// Statfs is Linux-only.
func Statfs(path string) (Space, error) {
	return Space{}, fmt.Errorf("statfs %s: %w", path, errors.ErrUnsupported)
}
