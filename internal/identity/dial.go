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

// MaxReconnectDelay caps the backoff between two attempts to reconnect to
// a runtime's socket: a runtime that restarts is connected to again at
// most this long after its socket answers. A fixed cap, independent of
// runtime.refresh_interval: one failed connect to a local socket every
// 10 s costs nothing, and gRPC's own default cap (120 s) would leave
// identity and filesystem stats stale for minutes after a runtime restart.
const MaxReconnectDelay = 10 * time.Second

// DialUnix prepares a gRPC client of a runtime's unix socket (a path, or
// "unix://path"); what names the runtime in errors ("cri", "containerd").
// Nothing is dialed until the first call, and a runtime that restarts is
// reconnected to with gRPC's backoff, capped at MaxReconnectDelay. It
// returns the socket path.
func DialUnix(what, endpoint string) (*grpc.ClientConn, string, error) {
	path := strings.TrimPrefix(endpoint, "unix://")
	if !filepath.IsAbs(path) {
		return nil, "", fmt.Errorf("%s endpoint %q: must be an absolute unix socket path", what, endpoint)
	}
	bc := backoff.DefaultConfig
	bc.MaxDelay = MaxReconnectDelay
	conn, err := grpc.NewClient("unix://"+path,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithConnectParams(grpc.ConnectParams{Backoff: bc, MinConnectTimeout: time.Second}),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20)))
	if err != nil {
		return nil, "", fmt.Errorf("%s endpoint %q: %w", what, endpoint, err)
	}
	return conn, path, nil
}

// SocketEndpoint is a runtime's endpoint: configured when set, else the
// first of candidates (paths relative to the host root) that exists under
// root as a unix socket (a regular file or a directory of that name does
// not count); "" when there is none. The one socket detection:
// cri.Endpoint and containerd.Endpoint are it with their runtime's usual
// sockets.
func SocketEndpoint(root, configured string, candidates []string) string {
	if configured != "" {
		return configured
	}
	for _, s := range candidates {
		p := filepath.Join(root, s)
		if _, ok := StatSocket(p); ok {
			return p
		}
	}
	return ""
}

// StatSocket is path's file information when path is a unix socket
// (links followed); false for anything else or nothing.
func StatSocket(path string) (os.FileInfo, bool) {
	fi, err := os.Stat(path)
	if err != nil || fi.Mode()&os.ModeSocket == 0 {
		return nil, false
	}
	return fi, true
}
