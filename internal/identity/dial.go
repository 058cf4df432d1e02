// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package identity // import "github.com/containerstats/containerstatsreceiver/internal/identity"

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials/insecure"
)

// DialUnix prepares a gRPC client of a runtime's unix socket (a path, or
// "unix://path"); what names the runtime in errors ("cri", "containerd").
// Nothing is dialled until the first call, and a runtime that restarts is
// reconnected to with backoff capped at maxBackoff. It returns the socket
// path.
func DialUnix(what, endpoint string, maxBackoff time.Duration) (*grpc.ClientConn, string, error) {
	path := strings.TrimPrefix(endpoint, "unix://")
	if !filepath.IsAbs(path) {
		return nil, "", fmt.Errorf("%s endpoint %q: must be an absolute unix socket path", what, endpoint)
	}
	bc := backoff.DefaultConfig
	if maxBackoff > 0 {
		bc.MaxDelay = maxBackoff
	}
	conn, err := grpc.NewClient("unix://"+path,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithConnectParams(grpc.ConnectParams{Backoff: bc, MinConnectTimeout: time.Second}),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20)))
	if err != nil {
		return nil, "", fmt.Errorf("%s endpoint %q: %w", what, endpoint, err)
	}
	return conn, path, nil
}

// DetectSocket returns the first of candidates (paths relative to the host
// root) that exists under root as a unix socket: a regular file or a
// directory of that name does not count. The CRI and containerd resolvers
// detect their endpoints with it.
func DetectSocket(root string, candidates []string) (string, bool) {
	for _, s := range candidates {
		p := filepath.Join(root, s)
		if fi, err := os.Stat(p); err == nil && fi.Mode()&os.ModeSocket != 0 {
			return p, true
		}
	}
	return "", false
}
