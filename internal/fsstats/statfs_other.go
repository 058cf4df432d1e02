// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build !linux

package fsstats // import "github.com/containerstats/containerstatsreceiver/internal/fsstats"

import (
	"errors"
	"fmt"
	"os"
)

// Statfs is Linux-only.
func Statfs(path string) (Space, error) {
	return Space{}, fmt.Errorf("statfs %s: %w", path, errors.ErrUnsupported)
}

// Lstat is Linux-only.
func Lstat(path string) (FileStat, error) {
	return FileStat{}, fmt.Errorf("lstat %s: %w", path, errors.ErrUnsupported)
}

func readDirNames(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}
