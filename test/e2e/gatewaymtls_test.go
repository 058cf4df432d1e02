// Copyright The containerstats Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e && kube

package e2e

import (
	"context"
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
	export := func(creds credentials.TransportCredentials) error {
		t.Helper()
		conn, err := grpc.NewClient(k.gateway+":4317", grpc.WithTransportCredentials(creds))
		require.NoError(t, err)
		defer conn.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, err = pmetricotlp.NewGRPCClient(conn).Export(ctx, pmetricotlp.NewExportRequestFromMetrics(pmetric.NewMetrics()))
		return err
	}
	require.NoError(t, export(k.gatewayCreds(t)), "the nodes' certificate: the gateway %s refused it", k.gateway)
	t.Logf("gateway mTLS: the nodes' client certificate: accepted")
	for _, c := range []struct {
		name   string
		client *certtest.Pair
	}{
		{"no client certificate", nil},
		{"a client certificate of another CA", &k.pki.wrongClient},
	} {
		err := export(k.gatewayCredsWith(t, c.client))
		require.Error(t, err, "%s: the gateway took the export", c.name)
		t.Logf("gateway mTLS: %s: refused: %v", c.name, err)
		alert := tlsAlert.FindString(err.Error())
		require.NotEmpty(t, alert, "%s: the refusal is no TLS alert: %v", c.name, err)
		requireDocQuotes(t, alert)
	}
}
