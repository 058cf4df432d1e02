// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

package certtest

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMutualTLS: a server certificate of one CA verifies for its name, a
// client certificate of a second CA is accepted by a server that requires
// that CA, and one of a third CA is refused.
func TestMutualTLS(t *testing.T) {
	serverCA, err := NewCA("server CA")
	require.NoError(t, err)
	clientCA, err := NewCA("client CA")
	require.NoError(t, err)
	otherCA, err := NewCA("other CA")
	require.NoError(t, err)
	srv, err := serverCA.Server("server", "example.test", "127.0.0.1")
	require.NoError(t, err)
	good, err := clientCA.Client("good")
	require.NoError(t, err)
	bad, err := otherCA.Client("bad")
	require.NoError(t, err)

	pool := func(pem []byte) *x509.CertPool {
		p := x509.NewCertPool()
		require.True(t, p.AppendCertsFromPEM(pem))
		return p
	}
	sc, err := tls.X509KeyPair(srv.CertPEM, srv.KeyPEM)
	require.NoError(t, err)
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }))
	ts.TLS = &tls.Config{Certificates: []tls.Certificate{sc}, ClientCAs: pool(clientCA.CertPEM), ClientAuth: tls.RequireAndVerifyClientCert}
	ts.StartTLS()
	defer ts.Close()

	get := func(p *Pair, name string) error {
		cfg := &tls.Config{RootCAs: pool(serverCA.CertPEM), ServerName: name}
		if p != nil {
			c, err := tls.X509KeyPair(p.CertPEM, p.KeyPEM)
			require.NoError(t, err)
			cfg.Certificates = []tls.Certificate{c}
		}
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}}
		resp, err := c.Get(ts.URL)
		if err != nil {
			return err
		}
		return resp.Body.Close()
	}
	require.NoError(t, get(&good, "example.test"))
	require.Error(t, get(&good, "wrong.test"), "a name not in the certificate")
	require.Error(t, get(&bad, "example.test"), "a client certificate of another CA")
	require.Error(t, get(nil, "example.test"), "no client certificate")
}
