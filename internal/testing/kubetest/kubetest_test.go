// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build linux

package kubetest

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The generated PKI is what the API server and a client need: a serving
// pair for 127.0.0.1 that verifies against the CA the client trusts, and a
// service-account key pair that loads.
func TestWritePKI(t *testing.T) {
	dir := t.TempDir()
	caPEM, err := writePKI(dir)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatal("CA does not parse")
	}
	onDisk, err := os.ReadFile(filepath.Join(dir, "ca.crt"))
	if err != nil || string(onDisk) != string(caPEM) {
		t.Fatalf("ca.crt differs from the returned CA (%v)", err)
	}
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, "apiserver.crt"), filepath.Join(dir, "apiserver.key"))
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"127.0.0.1", "localhost", "kubernetes.default.svc"} {
		if _, err := leaf.Verify(x509.VerifyOptions{DNSName: name, Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
			t.Errorf("serving certificate for %s: %v", name, err)
		}
	}
	for _, f := range []string{"sa.key", "sa.pub", "apiserver.key", "ca.key"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if blk, _ := pem.Decode(b); blk == nil {
			t.Errorf("%s: not PEM", f)
		}
		if fi, _ := os.Stat(filepath.Join(dir, f)); fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", f, fi.Mode().Perm())
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, "sa.key"))
	blk, _ := pem.Decode(b)
	if _, err := x509.ParseECPrivateKey(blk.Bytes); err != nil {
		t.Errorf("sa.key: %v", err)
	}
	b, _ = os.ReadFile(filepath.Join(dir, "sa.pub"))
	blk, _ = pem.Decode(b)
	if _, err := x509.ParsePKIXPublicKey(blk.Bytes); err != nil {
		t.Errorf("sa.pub: %v", err)
	}
}

// A missing binary is named, with the make target that builds it.
func TestAvailable(t *testing.T) {
	dir := t.TempDir()
	if why := Available(dir); !strings.Contains(why, filepath.Join(dir, "etcd")) || !strings.Contains(why, "make kube-bins") {
		t.Errorf("Available(empty dir) = %q", why)
	}
	for _, b := range []string{"etcd", "kube-apiserver"} {
		if err := os.WriteFile(filepath.Join(dir, b), []byte("#!/bin/sh\n"), 0o755); err != nil { //nolint:gosec // G306: an executable
			t.Fatal(err)
		}
	}
	if why := Available(dir); why != "" {
		t.Errorf("Available(both present) = %q", why)
	}
	if err := os.Chmod(filepath.Join(dir, "kube-apiserver"), 0o644); err != nil {
		t.Fatal(err)
	}
	if why := Available(dir); !strings.Contains(why, "kube-apiserver") {
		t.Errorf("Available(kube-apiserver not executable) = %q", why)
	}
}

// BinDir finds bin/kube at the root of the repository from a package
// directory, and $KUBE_BIN_DIR wins.
func TestBinDir(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBE_BIN_DIR", "")
	if got := BinDir(); got != filepath.Join(root, "bin", "kube") {
		t.Errorf("BinDir() = %q, want %q", got, filepath.Join(root, "bin", "kube"))
	}
	t.Setenv("KUBE_BIN_DIR", "/elsewhere/kube")
	if got := BinDir(); got != "/elsewhere/kube" {
		t.Errorf("BinDir() with KUBE_BIN_DIR = %q", got)
	}
}
