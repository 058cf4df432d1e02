// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package deploy

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

// runTLSScript runs tls.sh with dir and returns the Secrets it prints by
// name, decoded strictly.
func runTLSScript(t *testing.T, dir string) map[string]*corev1.Secret {
	t.Helper()
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Fatalf("tls.sh needs openssl (Debian's openssl package): %v", err)
	}
	cmd := exec.Command("bash", "tls.sh", dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "tls.sh: %s", stderr.String())
	objs, err := decode(out)
	require.NoError(t, err, "tls.sh's output:\n%s", out)
	secrets := map[string]*corev1.Secret{}
	for _, o := range objs {
		s, ok := o.(*corev1.Secret)
		require.True(t, ok, "tls.sh printed a %T", o)
		secrets[s.Name] = s
	}
	return secrets
}

// certOf parses the PEM certificate b.
func certOf(t *testing.T, b []byte) *x509.Certificate {
	t.Helper()
	blk, _ := pem.Decode(b)
	require.NotNil(t, blk, "no PEM block")
	c, err := x509.ParseCertificate(blk.Bytes)
	require.NoError(t, err)
	return c
}

// TestTLSScript: deploy/tls.sh prints the two Secrets the DaemonSet and the
// gateway mount, in the manifests' namespace, each with the keys the
// configs read; the gateway's certificate is a server certificate for the
// host of OTLP_ENDPOINT and the nodes' a client certificate, both of the
// CA both Secrets carry (and neither usable as the other); a node and the
// gateway made from them complete a mutual TLS handshake; a second run
// keeps the CA and renews the certificates under it.
func TestTLSScript(t *testing.T) {
	ds := load(t).daemonSet
	host, _ := otlpEndpoint(t, ds)
	dir := filepath.Join(t.TempDir(), "tls")
	secrets := runTLSScript(t, dir)
	require.Len(t, secrets, 2)
	gw, node := secrets[GatewayTLSSecret], secrets[TLSSecret]
	require.NotNil(t, gw, "no Secret %s", GatewayTLSSecret)
	require.NotNil(t, node, "no Secret %s", TLSSecret)
	for _, s := range []*corev1.Secret{gw, node} {
		assert.Equal(t, ds.Namespace, s.Namespace, "%s", s.Name)
		assert.Equal(t, corev1.SecretTypeTLS, s.Type, "%s", s.Name)
		assert.ElementsMatch(t, []string{"ca.crt", "tls.crt", "tls.key"}, slices.Collect(maps.Keys(s.Data)), "%s", s.Name)
	}
	require.Equal(t, gw.Data["ca.crt"], node.Data["ca.crt"], "one CA")
	ca, err := os.ReadFile(filepath.Join(dir, "ca.crt"))
	require.NoError(t, err)
	require.Equal(t, ca, gw.Data["ca.crt"], "the CA kept in the directory")

	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(ca))
	verify := func(s *corev1.Secret, name string, usage x509.ExtKeyUsage) error {
		_, err := certOf(t, s.Data["tls.crt"]).Verify(x509.VerifyOptions{Roots: pool, DNSName: name, KeyUsages: []x509.ExtKeyUsage{usage}})
		return err
	}
	require.NoError(t, verify(gw, host, x509.ExtKeyUsageServerAuth), "the gateway's certificate for %s", host)
	require.NoError(t, verify(node, "", x509.ExtKeyUsageClientAuth), "the nodes' certificate")
	require.Error(t, verify(node, "", x509.ExtKeyUsageServerAuth), "the nodes' certificate serves")
	require.Error(t, verify(gw, "", x509.ExtKeyUsageClientAuth), "the gateway's certificate is a client's")
	require.Error(t, verify(gw, "otel-gateway.elsewhere.svc", x509.ExtKeyUsageServerAuth), "the gateway's certificate names another host")

	handshake(t, gw, node, host)

	again := runTLSScript(t, dir)
	assert.Equal(t, ca, again[TLSSecret].Data["ca.crt"], "a second run keeps the CA")
	assert.NotEqual(t, node.Data["tls.crt"], again[TLSSecret].Data["tls.crt"], "a second run renews the nodes' certificate")
	require.NoError(t, verify(again[TLSSecret], "", x509.ExtKeyUsageClientAuth))
	handshake(t, again[GatewayTLSSecret], again[TLSSecret], host)
}

// handshake: a server as the gateway's receiver (its Secret's pair, its
// ca.crt as client CA, client certificates required) and a client as a
// node's exporter (its Secret's pair, its ca.crt as root, the gateway's
// host as server name) exchange a byte over mutual TLS.
func handshake(t *testing.T, gw, node *corev1.Secret, host string) {
	t.Helper()
	pair := func(s *corev1.Secret) tls.Certificate {
		c, err := tls.X509KeyPair(s.Data["tls.crt"], s.Data["tls.key"])
		require.NoError(t, err, "%s: tls.crt and tls.key", s.Name)
		return c
	}
	poolOf := func(s *corev1.Secret) *x509.CertPool {
		p := x509.NewCertPool()
		require.True(t, p.AppendCertsFromPEM(s.Data["ca.crt"]))
		return p
	}
	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{
		Certificates: []tls.Certificate{pair(gw)},
		ClientCAs:    poolOf(gw), ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12,
	})
	require.NoError(t, err)
	defer l.Close()
	done := make(chan error, 1)
	go func() {
		c, acceptErr := l.Accept()
		if acceptErr != nil {
			done <- acceptErr
			return
		}
		defer c.Close()
		_, acceptErr = c.Write([]byte{1})
		done <- acceptErr
	}()
	nodePair := pair(node)
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", l.Addr().String(), &tls.Config{
		RootCAs: poolOf(node), ServerName: host, MinVersion: tls.VersionTLS12,
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &nodePair, nil },
	})
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
	b := make([]byte, 1)
	_, err = c.Read(b)
	require.NoError(t, err, "the gateway refused the node's certificate")
	require.NoError(t, <-done)
}
