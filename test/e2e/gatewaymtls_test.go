// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build realmachine

package e2e

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/containerstats/containerstatsreceiver/internal/testing/certtest"
)

// exportToGateway sends md to the gateway (k.gateway:4317) in one
// OTLP/gRPC export with the TLS credentials creds, within 30 s, and
// returns the export's error.
func (k *cluster) exportToGateway(t *testing.T, creds credentials.TransportCredentials, md pmetric.Metrics) error {
	t.Helper()
	conn, err := grpc.NewClient(net.JoinHostPort(k.gateway, "4317"), grpc.WithTransportCredentials(creds))
	require.NoError(t, err)
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = pmetricotlp.NewGRPCClient(conn).Export(ctx, pmetricotlp.NewExportRequestFromMetrics(md))
	return err
}

// tlsAlert is the TLS alert a refused client reads from the gateway, as
// Go's crypto/tls words it.
var tlsAlert = regexp.MustCompile(`remote error: tls: [a-z ]+`)

// gatewayMTLS: the shipped gateway (deploy/gateway/, mutual TLS) takes an
// export from a client with the nodes' certificate and refuses one
// without a client certificate and one with a certificate of another CA,
// in the handshake; docs/deploy.md quotes the two refusals. The exports
// are empty (no point reaches Prometheus): the handshake is what is
// tested.
func (k *cluster) gatewayMTLS(t *testing.T) {
	addr := net.JoinHostPort(k.gateway, "4317")
	export := func(creds credentials.TransportCredentials) error {
		t.Helper()
		return k.exportToGateway(t, creds, pmetric.NewMetrics())
	}
	require.NoError(t, export(k.gatewayCreds(t)), "the nodes' certificate: the gateway %s refused it", addr)
	t.Logf("gateway mTLS: the nodes' client certificate: accepted")
	for _, c := range []struct {
		name   string
		client *certtest.Pair
	}{
		{"no client certificate", nil},
		{"a client certificate of another CA", &k.pki.wrongClient},
	} {
		// Through gRPC: refused. What the client reads first depends on
		// timing (the alert, or a broken pipe when it wrote first).
		err := export(k.gatewayCredsWith(t, c.client))
		require.Error(t, err, "%s: the gateway took the export", c.name)
		t.Logf("gateway mTLS: %s: the export refused: %v", c.name, err)
		// The handshake alone, then a read (TLS 1.3: the server checks
		// the client's certificate after the client's handshake is
		// done): the alert, every time.
		alert := k.gatewayAlert(t, addr, c.client)
		t.Logf("gateway mTLS: %s: the handshake: %s", c.name, alert)
		requireDocQuotes(t, alert)
	}
}

// gatewayAlert makes a TLS connection to the gateway as a gRPC client
// would (ALPN h2) with the client certificate client (nil: none), reads,
// and returns the TLS alert it got; it fails when there is none.
func (k *cluster) gatewayAlert(t *testing.T, addr string, client *certtest.Pair) string {
	t.Helper()
	cfg := k.gatewayTLS(t, client)
	cfg.NextProtos = []string{"h2"}
	d := &net.Dialer{Timeout: 10 * time.Second}
	conn, err := tls.DialWithDialer(d, "tcp", addr, cfg)
	if err == nil {
		defer conn.Close()
		require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
		_, err = conn.Read(make([]byte, 1))
	}
	require.Error(t, err, "the gateway answered a client with %v", client != nil)
	var ne net.Error
	require.False(t, errors.As(err, &ne) && ne.Timeout(), "no alert within 10 s: %v", err)
	alert := tlsAlert.FindString(err.Error())
	require.NotEmpty(t, alert, "the refusal is no TLS alert: %v", err)
	return alert
}
