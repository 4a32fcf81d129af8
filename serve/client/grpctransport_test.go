package client_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/raytpu/raytpu/serve/client"
	"github.com/raytpu/raytpu/serve/servev1"
)

// echoInputs answers every call with its inputs.
type echoInputs struct {
	servev1.UnimplementedPredictorServer
}

func (echoInputs) Predict(_ context.Context, req *servev1.PredictRequest) (*servev1.PredictResponse, error) {
	return &servev1.PredictResponse{Outputs: req.Inputs}, nil
}

// selfSigned returns a server certificate for 127.0.0.1 and a pool that
// trusts it.
func selfSigned(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "raytpu test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:    x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pool
}

// Large requests and answers, in plaintext and over TLS (given with
// WithTransportCredentials or through WithDialOptions): every byte comes
// back.
func TestNewGRPCLargeMessages(t *testing.T) {
	t.Parallel()
	cert, pool := selfSigned(t)
	payload := make([]byte, 3<<20)
	for i := range payload {
		payload[i] = byte(i * 31)
	}
	for _, tc := range []struct {
		name string
		tls  bool
		opts []client.GRPCOption
	}{
		{"plaintext", false, nil},
		{"TLS", true, []client.GRPCOption{client.WithTransportCredentials(credentials.NewClientTLSFromCert(pool, ""))}},
		{"TLS as a dial option", true, []client.GRPCOption{client.WithDialOptions(
			grpc.WithTransportCredentials(credentials.NewClientTLSFromCert(pool, "")))}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			var sopts []grpc.ServerOption
			if tc.tls {
				sopts = append(sopts, grpc.Creds(credentials.NewServerTLSFromCert(&cert)))
			}
			s := grpc.NewServer(append(sopts, grpc.MaxRecvMsgSize(8<<20))...)
			servev1.RegisterPredictorServer(s, echoInputs{})
			go s.Serve(l)
			defer s.Stop()

			conn, err := client.NewGRPC(l.Addr().String(), tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			stub := servev1.NewPredictorClient(conn)
			req := &servev1.PredictRequest{Inputs: map[string]*servev1.Tensor{"x": {Dtype: "uint8", Raw: payload}}}
			for i := range 3 {
				resp, err := stub.Predict(t.Context(), req, grpc.MaxCallRecvMsgSize(8<<20))
				if err != nil {
					t.Fatalf("call %d: %v", i, err)
				}
				if got := resp.Outputs["x"].GetRaw(); !bytes.Equal(got, payload) {
					t.Fatalf("call %d: %d bytes came back, want the %d sent", i, len(got), len(payload))
				}
			}
		})
	}
}
