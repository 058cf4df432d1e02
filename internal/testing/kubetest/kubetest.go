// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build linux

// Package kubetest runs a real single-node Kubernetes cluster for a test:
// our etcd (go.etcd.io/etcd/server/v3/embed) and a
// kube-apiserver (Start), on request kube-controller-manager and
// kube-scheduler (StartControllers) and a node: containerd with the CNI
// bridge and a kubelet (StartNode, node.go), all built by `make kube-bins`
// from tools/kube/go.mod (k8s.io/kubernetes v1.37.2) into bin/kube, and a
// server-side applier of manifests (apply.go). Everything listens on
// loopback only (the pods on the node's own bridge), on ports that were
// free a moment before; certificates, keys, the static admin token and
// etcd's data are generated into t.TempDir.
//
// Start takes the machine lock (internal/testing/machine) first, like every
// real-machine harness: the kubelet of the next steps removes kubepods
// cgroups it does not know, so a cluster must never run beside another
// test's pods. The processes run in their own process group with Pdeathsig
// (they die with the test process) and are stopped in t.Cleanup; a leftover
// one names the temp directory on its command line, which
// internal/testing/leftovers recognizes.
//
// Tests skip when the binaries are missing (run `make kube-bins`) and fail
// instead under CI (CI set).
package kubetest // import "github.com/containerstats/containerstatsreceiver/internal/testing/kubetest"

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/containerstats/containerstatsreceiver/internal/testing/certtest"
	"github.com/containerstats/containerstatsreceiver/internal/testing/kubetest/procnet"
	"github.com/containerstats/containerstatsreceiver/internal/testing/machine"
)

// Version is the Kubernetes version tools/kube/go.mod pins.
const Version = "v1.37.2"

// ServiceCIDR is the cluster's service range (no traffic goes to it yet).
const ServiceCIDR = "10.96.0.0/24"

// Cluster is a running control plane.
type Cluster struct {
	// Config reaches the API server as a system:masters user (a static
	// bearer token), trusting only the cluster's own CA.
	Config *rest.Config
	// Client is a clientset on Config.
	Client kubernetes.Interface
	// URL of the API server, https://127.0.0.1:<port>.
	URL string
	// Dir holds the certificates, keys, etcd's data and the logs.
	Dir string

	token string
	procs []*proc
}

// proc is one process of the cluster.
type proc struct {
	name   string
	log    string
	cmd    *exec.Cmd
	exited chan struct{}
	mu     sync.Mutex
	err    error
}

// BinDir is where the cluster's binaries are: $KUBE_BIN_DIR (make
// kube-test sets it) or bin/kube at the root of the repository.
func BinDir() string {
	if d := os.Getenv("KUBE_BIN_DIR"); d != "" {
		return d
	}
	dir, err := os.Getwd()
	if err != nil {
		return filepath.Join("bin", "kube")
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil &&
			strings.HasPrefix(string(b), "module github.com/containerstats/containerstatsreceiver\n") {
			return filepath.Join(dir, "bin", "kube")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return filepath.Join("bin", "kube")
		}
		dir = parent
	}
}

// Available reports why the cluster cannot run here, or "" if it can.
func Available(binDir string) string { return notBuilt(binDir, "etcd", "kube-apiserver") }

// notBuilt says which of the binaries names is not an executable file in
// binDir, or "" when all are.
func notBuilt(binDir string, names ...string) string {
	for _, b := range names {
		p := filepath.Join(binDir, b)
		fi, err := os.Stat(p)
		if err != nil {
			return fmt.Sprintf("%s not built (make kube-bins): %v", p, err)
		}
		if !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
			return fmt.Sprintf("%s is not an executable file (make kube-bins)", p)
		}
	}
	return ""
}

// Start starts etcd and kube-apiserver from binDir and returns once the API
// server's /readyz answers ok (at most 3 minutes; it takes about 3 s on
// the 2-core dev VM).
func Start(tb testing.TB, binDir string) *Cluster {
	tb.Helper()
	machine.Lock(tb) // before any cleanup: released after them
	machine.Need(tb, Available(binDir))
	c := &Cluster{Dir: tb.TempDir()}
	tb.Cleanup(c.stop)
	tb.Cleanup(func() { // runs before stop: the logs of a failed test
		if tb.Failed() {
			for _, p := range c.procs {
				tb.Logf("kubetest: end of %s's log:\n%s", p.name, tail(p.log))
			}
		}
	})

	pki := filepath.Join(c.Dir, "pki")
	if err := os.MkdirAll(pki, 0o700); err != nil {
		tb.Fatal(err)
	}
	ca, err := writePKI(pki)
	if err != nil {
		tb.Fatalf("certificates: %v", err)
	}
	token := randomHex(32)
	c.token = token
	if writeFileErr := os.WriteFile(filepath.Join(pki, "tokens.csv"),
		[]byte(token+`,kubetest-admin,kubetest-admin,"system:masters"`+"\n"), 0o600); writeFileErr != nil {
		tb.Fatal(writeFileErr)
	}

	etcdClient := "http://" + freeAddr(tb)
	c.start(tb, "etcd", filepath.Join(binDir, "etcd"),
		"-data-dir", filepath.Join(c.Dir, "etcd"),
		"-listen-client-url", etcdClient,
		"-listen-peer-url", "http://"+freeAddr(tb),
		"-unsafe-no-fsync")

	apiAddr := freeAddr(tb)
	_, port, _ := net.SplitHostPort(apiAddr)
	c.URL = "https://" + apiAddr
	c.start(tb, "kube-apiserver", filepath.Join(binDir, "kube-apiserver"),
		"--etcd-servers="+etcdClient,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		// Since 1.36 the lease endpoint reconciler (the default) refuses a
		// loopback address for the kubernetes Service's endpoints ("may not
		// be in the loopback range"): none keeps them, which this cluster
		// never used (no Service proxy: pods cannot reach it there anyway).
		"--endpoint-reconciler-type=none",
		"--secure-port="+port,
		"--tls-cert-file="+filepath.Join(pki, "apiserver.crt"),
		"--tls-private-key-file="+filepath.Join(pki, "apiserver.key"),
		"--client-ca-file="+filepath.Join(pki, "ca.crt"),
		"--token-auth-file="+filepath.Join(pki, "tokens.csv"),
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file="+filepath.Join(pki, "sa.pub"),
		"--service-account-signing-key-file="+filepath.Join(pki, "sa.key"),
		"--service-cluster-ip-range="+ServiceCIDR,
		"--allow-privileged=true",
		"--profiling=false",
		"--enable-priority-and-fairness=false",
		"--cert-dir="+filepath.Join(c.Dir, "apiserver-certs"))

	c.Config = &rest.Config{
		Host:            c.URL,
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{CAData: ca},
		QPS:             50,
		Burst:           100,
		Timeout:         30 * time.Second,
	}
	c.waitReady(tb, 3*time.Minute)
	c.requireLoopbackOnly(tb, c.procs...)
	cs, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		tb.Fatal(err)
	}
	c.Client = cs
	return c
}

// requireLoopbackOnly fails t when one of procs listens on anything but
// 127.0.0.1.
func (c *Cluster) requireLoopbackOnly(tb testing.TB, procs ...*proc) {
	tb.Helper()
	for _, p := range procs {
		addrs, err := procnet.Listening(p.cmd.Process.Pid)
		if err != nil {
			tb.Fatalf("%s: listening sockets: %v", p.name, err)
		}
		for _, a := range addrs {
			if !strings.HasPrefix(a, "127.0.0.1:") {
				tb.Fatalf("%s listens on %s, not on loopback (all: %v)", p.name, a, addrs)
			}
		}
		tb.Logf("kubetest: %s (pid %d) listens on %v", p.name, p.cmd.Process.Pid, addrs)
	}
}

// StartControllers starts kube-controller-manager (every default
// controller: DaemonSet, Deployment, ReplicaSet, ServiceAccount and token,
// node lifecycle, ...) and kube-scheduler from binDir against the cluster,
// on loopback only, and returns once both answer /healthz (their serving
// certificates are self-signed, in the temp directory). No kubelet runs:
// pods are scheduled to Node objects but nothing starts them.
func (c *Cluster) StartControllers(tb testing.TB, binDir string) {
	tb.Helper()
	machine.Need(tb, notBuilt(binDir, "kube-controller-manager", "kube-scheduler"))
	pki := filepath.Join(c.Dir, "pki")
	kubeconfig := c.kubeconfig(tb)
	n := len(c.procs)
	cmAddr := freeAddr(tb)
	_, cmPort, _ := net.SplitHostPort(cmAddr)
	// What both components take: the admin kubeconfig for everything,
	// loopback serving on their own port and cert dir, one instance.
	common := func(port, certs string) []string {
		return []string{
			"--kubeconfig=" + kubeconfig, "--authentication-kubeconfig=" + kubeconfig,
			"--authorization-kubeconfig=" + kubeconfig, "--bind-address=127.0.0.1", "--secure-port=" + port,
			"--cert-dir=" + filepath.Join(c.Dir, certs), "--leader-elect=false", "--profiling=false",
		}
	}
	c.start(tb, "kube-controller-manager", filepath.Join(binDir, "kube-controller-manager"), append(common(cmPort, "controller-manager-certs"),
		"--controllers=*",
		"--use-service-account-credentials=false",
		"--service-account-private-key-file="+filepath.Join(pki, "sa.key"),
		"--root-ca-file="+filepath.Join(pki, "ca.crt"),
		"--cluster-signing-cert-file="+filepath.Join(pki, "ca.crt"),
		"--cluster-signing-key-file="+filepath.Join(pki, "ca.key"),
		"--service-cluster-ip-range="+ServiceCIDR)...)
	schedAddr := freeAddr(tb)
	_, schedPort, _ := net.SplitHostPort(schedAddr)
	c.start(tb, "kube-scheduler", filepath.Join(binDir, "kube-scheduler"), common(schedPort, "scheduler-certs")...)
	for _, hp := range []struct{ name, addr string }{{"kube-controller-manager", cmAddr}, {"kube-scheduler", schedAddr}} {
		c.waitHealthy(tb, hp.name, "https://"+hp.addr+"/healthz", 2*time.Minute)
	}
	c.requireLoopbackOnly(tb, c.procs[n:]...)
}

// Kubeconfig returns the path of the admin kubeconfig (kubeconfig), for
// kubectl and helm.
func (c *Cluster) Kubeconfig(tb testing.TB) string {
	tb.Helper()
	return c.kubeconfig(tb)
}

// kubeconfig writes (once) and returns the admin kubeconfig: the static
// system:masters token, the cluster's CA.
func (c *Cluster) kubeconfig(tb testing.TB) string {
	tb.Helper()
	path := filepath.Join(c.Dir, "admin.kubeconfig")
	if _, err := os.Stat(path); err == nil {
		return path
	}
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: kubetest
  cluster:
    server: %s
    certificate-authority: %s
users:
- name: admin
  user:
    token: %s
contexts:
- name: kubetest
  context: {cluster: kubetest, user: admin}
current-context: kubetest
`, c.URL, filepath.Join(c.Dir, "pki", "ca.crt"), c.token)
	if err := os.WriteFile(path, []byte(kc), 0o600); err != nil {
		tb.Fatal(err)
	}
	return path
}

// waitHealthy polls url (a component's own /healthz on loopback, served
// with the self-signed certificate it made) until it answers 200, a
// process exits, or d passes.
func (c *Cluster) waitHealthy(tb testing.TB, name, url string, d time.Duration) {
	tb.Helper()
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // loopback, a cert the component generated itself
	}}
	defer hc.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	var last string
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if resp, err := hc.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
			last = fmt.Sprintf("HTTP %d", resp.StatusCode)
		} else {
			last = err.Error()
		}
		for _, p := range c.procs {
			select {
			case <-p.exited:
				tb.Fatalf("%s exited while waiting for %s (%v); log:\n%s", p.name, name, p.exitErr(), tail(p.log))
			default:
			}
		}
		select {
		case <-ctx.Done():
			tb.Fatalf("%s not healthy after %s: %s\nlog:\n%s", name, d, last, tail(filepath.Join(c.Dir, name+".log")))
		case <-tick.C:
		}
	}
}

// start runs one process, its output into <Dir>/<name>.log.
func (c *Cluster) start(tb testing.TB, name, bin string, args ...string) {
	tb.Helper()
	c.startEnv(tb, name, nil, bin, args...)
}

// startEnv is start with the environment env (nil: this process's).
func (c *Cluster) startEnv(tb testing.TB, name string, env []string, bin string, args ...string) {
	tb.Helper()
	logPath := filepath.Join(c.Dir, name+".log")
	logf, err := os.Create(logPath)
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Dir = c.Dir
	// Killed with the test process if it dies first (a test timeout).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		tb.Fatalf("start %s: %v", name, err)
	}
	p := &proc{name: name, log: logPath, cmd: cmd, exited: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		logf.Close()
		p.mu.Lock()
		p.err = err
		p.mu.Unlock()
		close(p.exited)
	}()
	c.procs = append(c.procs, p)
}

// waitReady polls /readyz until it answers 200, a process exits, or d passes.
func (c *Cluster) waitReady(tb testing.TB, d time.Duration) {
	tb.Helper()
	tr, err := rest.TransportFor(c.Config)
	if err != nil {
		tb.Fatal(err)
	}
	hc := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	defer hc.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	var last string
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.URL+"/readyz?verbose", nil)
		if resp, err := hc.Do(req); err == nil {
			body := make([]byte, 8192)
			n, _ := resp.Body.Read(body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
			last = fmt.Sprintf("HTTP %d: %s", resp.StatusCode, body[:n])
		} else {
			last = err.Error()
		}
		for _, p := range c.procs {
			select {
			case <-p.exited:
				tb.Fatalf("%s exited while waiting for the API server (%v); log:\n%s", p.name, p.exitErr(), tail(p.log))
			default:
			}
		}
		select {
		case <-ctx.Done():
			tb.Fatalf("API server not ready after %s: %s\nkube-apiserver log:\n%s", d, last, tail(filepath.Join(c.Dir, "kube-apiserver.log")))
		case <-tick.C:
		}
	}
}

func (p *proc) exitErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// stop stops the processes in reverse order: SIGTERM to the process group,
// SIGKILL after 10 s.
func (c *Cluster) stop() {
	for i := len(c.procs) - 1; i >= 0; i-- {
		stopProc(c.procs[i])
	}
	c.procs = nil
}

// Log returns the end of a process's log ("etcd", "kube-apiserver").
func (c *Cluster) Log(name string) string { return tail(filepath.Join(c.Dir, name+".log")) }

func tail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	if len(b) > 6000 {
		b = b[len(b)-6000:]
	}
	return string(b)
}

// freeAddr returns a loopback address with a port nobody listens on now.
func freeAddr(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func randomHex(n int) string {
	b := make([]byte, n/2)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// writePKI writes into dir: ca.crt and ca.key (the controller-manager's
// signer of certificate requests), the API server's serving pair
// apiserver.crt/.key (127.0.0.1, localhost and the in-cluster names, signed
// by the CA) and the service-account signing pair sa.key/sa.pub (ECDSA
// P-256). It returns the CA certificate (PEM) for clients.
func writePKI(dir string) ([]byte, error) {
	ca, err := certtest.NewCA("kubetest-ca")
	if err != nil {
		return nil, err
	}
	srv, err := ca.Server("kube-apiserver", "localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
		"kubernetes.default.svc.cluster.local", "127.0.0.1", "10.96.0.1")
	if err != nil {
		return nil, err
	}
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	saKeyDER, err := x509.MarshalECPrivateKey(saKey)
	if err != nil {
		return nil, err
	}
	saPubDER, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{
		"ca.crt":        ca.CertPEM,
		"ca.key":        ca.KeyPEM,
		"apiserver.crt": srv.CertPEM,
		"apiserver.key": srv.KeyPEM,
		"sa.key":        pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: saKeyDER}),
		"sa.pub":        pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: saPubDER}),
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			return nil, err
		}
	}
	// The pair must load as a TLS certificate (what the API server does).
	if _, err := tls.X509KeyPair(files["apiserver.crt"], files["apiserver.key"]); err != nil {
		return nil, fmt.Errorf("serving pair: %w", err)
	}
	return ca.CertPEM, nil
}
