package testcluster

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"time"
)

// Options.NodeEgress: how the API server reaches a kubelet it cannot route to.
//
// kube-apiserver dials kubelets (logs, exec, attach, port-forward) and the proxy subresources
// through the egress selector's "cluster" network context when --egress-selector-config-file
// names one (kubernetes cmd/kube-apiserver/app/server.go CreateKubeAPIServerConfig: the
// KubeletClientConfig's Lookup and the ProxyTransport's DialContext; pkg/kubelet/client
// kubelet_client.go makeTransport). With proxyProtocol HTTPConnect over a unix socket it
// writes "CONNECT <node address>:<kubelet port>" on a new connection to the socket and, on a
// 200, speaks TLS to the kubelet through it (k8s.io/apiserver pkg/server/egressselector
// egress_selector.go tunnelHTTPConnect, udsHTTPConnectConnector). Without
// --kubelet-certificate-authority it does not verify the kubelet's self-signed serving
// certificate (kubelet_client.go transportConfig: no CA → Insecure); the kubelet, with
// anonymous authentication off, needs the client certificate below and authorizes its user
// by a SubjectAccessReview, which group system:masters passes.

// nodeEgressSocket is the socket's name in the API server's certificate directory.
const nodeEgressSocket = "node-egress.sock"

// writeNodeEgress writes the egress selector configuration and the kubelet client pair into
// certDir, and returns the API server's flags and the socket's path.
func writeNodeEgress(certDir string, ca *x509.Certificate, caKey *ecdsa.PrivateKey) (map[string][]string, string, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, "", err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(4),
		Subject:      pkix.Name{CommonName: "kube-apiserver-kubelet-client", Organization: []string{"system:masters"}},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(7 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, "", err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, "", err
	}
	sock := filepath.Join(certDir, nodeEgressSocket)
	// apiserver.k8s.io/v1beta1 EgressSelectorConfiguration (k8s.io/apiserver
	// pkg/apis/apiserver/v1beta1 types.go); "cluster" is the context the kubelet client uses.
	egress := fmt.Sprintf(`apiVersion: apiserver.k8s.io/v1beta1
kind: EgressSelectorConfiguration
egressSelections:
- name: cluster
  connection:
    proxyProtocol: HTTPConnect
    transport:
      uds:
        udsName: %q
`, sock)
	files := map[string][]byte{
		"kubelet-client.crt":   pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		"kubelet-client.key":   pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
		"egress-selector.yaml": []byte(egress),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(certDir, name), data, 0o600); err != nil {
			return nil, "", err
		}
	}
	return map[string][]string{
		"egress-selector-config-file": {filepath.Join(certDir, "egress-selector.yaml")},
		"kubelet-client-certificate":  {filepath.Join(certDir, "kubelet-client.crt")},
		"kubelet-client-key":          {filepath.Join(certDir, "kubelet-client.key")},
		// The kubelet's Hostname address (its --hostname-override) resolves nowhere.
		"kubelet-preferred-address-types": {"InternalIP"},
	}, sock, nil
}

// NodeEgressSocket is the unix socket the API server dials nodes through
// (Options.NodeEgress), or "" without it. The caller listens on it and answers each
// connection's CONNECT request.
func (c *Cluster) NodeEgressSocket() string { return c.egressSock }
