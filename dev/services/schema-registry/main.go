// The schema registry of the tests: franz-go's in-memory implementation of the Confluent Schema
// Registry REST API (github.com/twmb/franz-go/pkg/sr/srfake), served on 127.0.0.1 only. One
// registry, three listeners: -listen without authentication; -auth-listen, which takes only the
// basic credentials or the bearer token given, as a hosted registry would; and -tls-listen,
// HTTPS with a certificate for 127.0.0.1 signed by a CA made at start, whose PEM is written to
// <tls-dir>/ca.pem (a private CA, as a company's registry often has).
package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"flag"
	"log"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/twmb/franz-go/pkg/sr/srfake"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:8085", "address of the listener without authentication")
	authListen := flag.String("auth-listen", "127.0.0.1:8086", "address of the listener that requires credentials")
	username := flag.String("username", "floe", "basic-auth user of -auth-listen")
	password := flag.String("password", "floe-registry-password", "basic-auth password of -auth-listen")
	token := flag.String("token", "floe-registry-token", "bearer token of -auth-listen")
	tlsListen := flag.String("tls-listen", "127.0.0.1:8087", "address of the HTTPS listener")
	tlsDir := flag.String("tls-dir", ".", "where the CA's certificate is written (ca.pem)")
	flag.Parse()
	certificate, err := makeCertificates(*tlsDir)
	if err != nil {
		log.Fatal(err)
	}

	registry := srfake.NewRegistry()
	open := registry.Handler()
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte(*username+":"+*password))
	bearer := "Bearer " + *token
	guarded := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := r.Header.Get("Authorization")
		if got == "" {
			writeError(w, http.StatusUnauthorized, "Unauthorized")
			return
		}
		if got != basic && got != bearer {
			writeError(w, http.StatusForbidden, "User not authorized")
			return
		}
		open.ServeHTTP(w, r)
	})
	errs := make(chan error, 3)
	serve := func(address string, handler http.Handler) {
		listener, err := net.Listen("tcp", address)
		if err != nil {
			errs <- err
			return
		}
		log.Printf("schema registry listening on http://%s", listener.Addr())
		errs <- http.Serve(listener, handler)
	}
	go serve(*listen, open)
	go serve(*authListen, guarded)
	go func() {
		listener, err := tls.Listen("tcp", *tlsListen, &tls.Config{Certificates: []tls.Certificate{certificate}})
		if err != nil {
			errs <- err
			return
		}
		log.Printf("schema registry listening on https://%s", listener.Addr())
		errs <- http.Serve(listener, open)
	}()
	log.Fatal(<-errs)
}

// makeCertificates makes a CA (its certificate written to dir/ca.pem) and a server certificate
// for 127.0.0.1 and localhost signed by it.
func makeCertificates(dir string) (tls.Certificate, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	now := time.Now()
	caTemplate := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "floe test schema registry CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(365 * 24 * time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, &caKey.PublicKey, caKey)
	if err != nil {
		return tls.Certificate{}, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return tls.Certificate{}, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	template := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "127.0.0.1"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:     []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, template, ca, &key.PublicKey, caKey)
	if err != nil {
		return tls.Certificate{}, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return tls.Certificate{}, err
	}
	// Written beside and renamed: a reader never sees half a file.
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile+".tmp", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o644); err != nil {
		return tls.Certificate{}, err
	}
	if err := os.Rename(caFile+".tmp", caFile); err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der, caDER}, PrivateKey: key}, nil
}

func writeError(w http.ResponseWriter, status int, message string) {
	w.Header().Set("Content-Type", "application/vnd.schemaregistry.v1+json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error_code": status, "message": message})
}
