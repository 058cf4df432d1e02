// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

// Command etcd is a single-member etcd server for the test cluster of
// internal/testing/kubetest, built on go.etcd.io/etcd/server/v3/embed at the
// version k8s.io/kubernetes v1.37.2 pins (v3.7.0). It listens on the URLs it is given
// (loopback only in the tests), keeps its data in -data-dir, and stops on
// SIGTERM or SIGINT.
package main

import (
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "etcd:", err)
		os.Exit(1)
	}
}

func run() error {
	dataDir := flag.String("data-dir", "", "directory for etcd's data (required)")
	client := flag.String("listen-client-url", "http://127.0.0.1:2379", "URL to serve clients on")
	peer := flag.String("listen-peer-url", "http://127.0.0.1:2380", "URL to serve the (single) peer on")
	noFsync := flag.Bool("unsafe-no-fsync", false, "skip fsync (test data only)")
	flag.Parse()
	if *dataDir == "" {
		return fmt.Errorf("-data-dir is required")
	}
	cu, err := url.Parse(*client)
	if err != nil {
		return fmt.Errorf("-listen-client-url: %w", err)
	}
	pu, err := url.Parse(*peer)
	if err != nil {
		return fmt.Errorf("-listen-peer-url: %w", err)
	}

	cfg := embed.NewConfig()
	cfg.Name = "kubetest"
	cfg.Dir = *dataDir
	cfg.ListenClientUrls = []url.URL{*cu}
	cfg.AdvertiseClientUrls = []url.URL{*cu}
	cfg.ListenPeerUrls = []url.URL{*pu}
	cfg.AdvertisePeerUrls = []url.URL{*pu}
	cfg.InitialCluster = cfg.Name + "=" + pu.String()
	cfg.UnsafeNoFsync = *noFsync
	cfg.Logger = "zap"
	cfg.LogLevel = "error"
	cfg.LogOutputs = []string{"stderr"}

	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return fmt.Errorf("start: %w", err)
	}
	defer e.Close()
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(60 * time.Second):
		return fmt.Errorf("not ready after 60s")
	}
	fmt.Fprintln(os.Stderr, "etcd: ready, serving clients on", cu.String())

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	select {
	case s := <-sig:
		fmt.Fprintln(os.Stderr, "etcd: stopping on", s)
		return nil
	case err := <-e.Err():
		return fmt.Errorf("serve: %w", err)
	}
}
