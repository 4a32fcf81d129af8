package kubetest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// Certificate files in the API server's certificate directory: envtest
// makes apiserver.* and sa-signer.* only where they are missing, so the
// ones written here are used.
const (
	servingCertFile = "apiserver.crt"
	servingKeyFile  = "apiserver.key"
	saSignerCert    = "sa-signer.crt"
	saSignerKey     = "sa-signer.key"
	// CAFile is the CA that signed the API server's serving certificate:
	// kube-controller-manager's --root-ca-file, which its
	// root-ca-certificate-publisher puts in every namespace's
	// kube-root-ca.crt ConfigMap (a pod's ca.crt).
	CAFile = "ca.crt"
)

// ClusterServiceIP is the kubernetes Service's ClusterIP: the first
// address of envtest's service-cluster-ip-range, 10.0.0.0/24.
const ClusterServiceIP = "10.0.0.1"

// servingNames are the DNS names of the API server's certificate: those a
// real cluster's serving certificate holds for its kubernetes Service.
var servingNames = []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"}

// writeCerts writes into dir a CA, the API server's serving certificate
// signed by it for servingNames, 127.0.0.1, ClusterServiceIP and ips (the
// pod network's route to the API server), and a service-account signing
// key; it returns the CA's certificate in PEM.
func writeCerts(dir string, ips ...string) ([]byte, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kubetest-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true, IsCA: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, caKey.Public(), caKey)
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "kube-apiserver"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:    servingNames,
	}
	for _, ip := range append([]string{"127.0.0.1", ClusterServiceIP}, ips...) {
		p := net.ParseIP(ip)
		if p == nil {
			return nil, fmt.Errorf("kubetest: serving certificate: %q is not an IP", ip)
		}
		tmpl.IPAddresses = append(tmpl.IPAddresses, p)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, key.Public(), caKey)
	if err != nil {
		return nil, err
	}
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	saPub, err := x509.MarshalPKIXPublicKey(saKey.Public())
	if err != nil {
		return nil, err
	}
	caPEM := pemBlock("CERTIFICATE", caDER)
	files := map[string][]byte{CAFile: caPEM, servingCertFile: pemBlock("CERTIFICATE", der), saSignerCert: pemBlock("PUBLIC KEY", saPub)}
	for name, k := range map[string]crypto.Signer{servingKeyFile: key, saSignerKey: saKey} {
		b, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			return nil, err
		}
		files[name] = pemBlock("PRIVATE KEY", b)
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			return nil, fmt.Errorf("kubetest: %w", err)
		}
	}
	return caPEM, nil
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}
