// The schema registry of the tests: franz-go's in-memory implementation of the Confluent Schema
// Registry REST API (github.com/twmb/franz-go/pkg/sr/srfake), served on 127.0.0.1 only. One
// registry, two listeners: -listen without authentication, and -auth-listen, which takes only
// the basic credentials or the bearer token given, as a hosted registry would.
package main

import (
	"encoding/base64"
	"encoding/json"
	"flag"
	"log"
	"net"
	"net/http"

	"github.com/twmb/franz-go/pkg/sr/srfake"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:8085", "address of the listener without authentication")
	authListen := flag.String("auth-listen", "127.0.0.1:8086", "address of the listener that requires credentials")
	username := flag.String("username", "floe", "basic-auth user of -auth-listen")
	password := flag.String("password", "floe-registry-password", "basic-auth password of -auth-listen")
	token := flag.String("token", "floe-registry-token", "bearer token of -auth-listen")
	flag.Parse()

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
	errs := make(chan error, 2)
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
	log.Fatal(<-errs)
}

func writeError(w http.ResponseWriter, status int, message string) {
	w.Header().Set("Content-Type", "application/vnd.schemaregistry.v1+json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error_code": status, "message": message})
}
