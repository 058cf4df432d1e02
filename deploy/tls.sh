#!/usr/bin/env bash
# Makes the certificates of the OTLP push's mutual TLS (docs/deploy.md,
# "TLS") with openssl and prints the two Secrets that deploy/daemonset.yaml
# and deploy/gateway/gateway.yaml mount, for kubectl:
#
#   deploy/tls.sh | kubectl apply -f -
#
# One CA (ca.crt, ca.key) signs the gateway's server certificate (for the
# host of the DaemonSet's OTLP_ENDPOINT, otel-gateway.containerstats.svc)
# and the nodes' client certificate. Everything is written to DIR (first
# argument, default ./containerstats-tls; keep ca.key there, off the
# cluster). An existing CA in DIR is kept, so a second run renews the two
# certificates under the same CA. Set DAYS (default 365), NAMESPACE
# (default containerstats) and GATEWAY_HOST to change them.
set -euo pipefail

dir=${1:-containerstats-tls}
days=${DAYS:-365}
ns=${NAMESPACE:-containerstats}
host=${GATEWAY_HOST:-otel-gateway.$ns.svc}

mkdir -p "$dir"
cd "$dir"
umask 077
key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }

if [ ! -s ca.crt ] || [ ! -s ca.key ]; then
  key ca.key
  openssl req -x509 -new -key ca.key -out ca.crt -days "$days" -subj "/CN=containerstats CA" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign"
fi
# issue NAME CN EXTENSIONS: NAME.key and NAME.crt signed by the CA.
issue() {
  key "$1.key"
  openssl req -new -key "$1.key" -out "$1.csr" -subj "/CN=$2"
  openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days "$days" -out "$1.crt" \
    -extfile <(printf '%s\n' "$3") 2>/dev/null
  rm -f "$1.csr"
}
issue gateway "$host" "$(printf 'subjectAltName=DNS:%s\nextendedKeyUsage=serverAuth\nkeyUsage=critical,digitalSignature' "$host")"
issue node otelcol-containerstats "$(printf 'extendedKeyUsage=clientAuth\nkeyUsage=critical,digitalSignature')"

b64() { base64 -w0 < "$1"; }
# secret NAME CRT KEY: a kubernetes.io/tls Secret with the CA as ca.crt.
secret() {
  cat <<EOF
---
apiVersion: v1
kind: Secret
metadata:
  name: $1
  namespace: $ns
type: kubernetes.io/tls
data:
  ca.crt: $(b64 ca.crt)
  tls.crt: $(b64 "$2")
  tls.key: $(b64 "$3")
EOF
}
secret otel-gateway-tls gateway.crt gateway.key
secret otelcol-containerstats-tls node.crt node.key
