// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build linux

package kubetest

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net"
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
		if err := os.WriteFile(filepath.Join(dir, b), []byte("#!/bin/sh\n"), 0o755); err != nil {
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

// A /proc/net/tcp and tcp6 table as this kernel prints it: only LISTEN
// sockets whose inode is the process's count.
func TestParseListeners(t *testing.T) {
	tcp := `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:A411 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 111 1 0000000000000000 100 0 0 10 0
   1: 00000000:0016 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 222 1 0000000000000000 100 0 0 10 0
   2: 0100007F:A411 0100007F:C350 01 00000000:00000000 00:00000000 00000000     0        0 333 1 0000000000000000 20 4 30 10 -1
   3: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 444 1 0000000000000000 100 0 0 10 0
`
	got, err := parseListeners([]byte(tcp), map[string]bool{"111": true, "333": true, "444": true})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != "127.0.0.1:42001" || got[1] != "127.0.0.1:8080" {
		t.Errorf("tcp: got %v, want [127.0.0.1:42001 127.0.0.1:8080]", got)
	}
	tcp6 := `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000000000000:1A0B 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 555 1 0000000000000000 100 0 0 10 0
   1: 0000000000000000FFFF00000100007F:1A0C 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 666 1 0000000000000000 100 0 0 10 0
`
	got, err = parseListeners([]byte(tcp6), map[string]bool{"555": true, "666": true})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != "[::]:6667" || got[1] != "127.0.0.1:6668" {
		t.Errorf("tcp6: got %v, want [[::]:6667 127.0.0.1:6668]", got)
	}
	if _, err := parseListeners([]byte("header\n 0: 0100007F\n"), nil); err == nil {
		t.Error("a short line parsed")
	}
}

func FuzzParseListeners(f *testing.F) {
	f.Add([]byte("h\n 0: 0100007F:A411 00000000:0000 0A 0:0 0:0 0 0 0 111 1\n"), "111")
	f.Add([]byte("h\n 0: 0000000000000000FFFF00000100007F:1A0C 0:0 0A 0:0 0:0 0 0 0 9 1\n"), "9")
	f.Fuzz(func(t *testing.T, b []byte, inode string) {
		addrs, err := parseListeners(b, map[string]bool{inode: true})
		if err != nil {
			return
		}
		for _, a := range addrs {
			if _, _, err := net.SplitHostPort(a); err != nil {
				t.Errorf("%q: %v", a, err)
			}
		}
	})
}
