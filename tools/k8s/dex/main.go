// Command dex serves Dex's OIDC endpoints (the github.com/dexidp/dex/server package) for
// `gryvia sandbox up --oidc`: HTTPS on one address, memory storage, static clients and the static
// password database, the local signer.
//
// Why not Dex's own cmd/dex: at the pinned pseudo-version it also builds Dex's gRPC admin API
// (server/apiserver), which needs github.com/dexidp/dex/api/v2 at the same commit. Dex's go.mod
// takes that module from a local replace directive, which Go ignores in a dependency, and the
// module proxy serves only api/v2 v2.4.0, which lacks the newer messages. The sandbox needs
// none of the gRPC API, so this main wires the same server package without it.
//
// Usage: dex serve CONFIG.json (the shape of `config` below; written by gryvia_cli/sandbox/oidc.py).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	gosundheit "github.com/AppsFlyer/go-sundheit"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/dexidp/dex/server"
	"github.com/dexidp/dex/server/connectors"
	"github.com/dexidp/dex/server/signer"
	"github.com/dexidp/dex/server/tokens"
	"github.com/dexidp/dex/storage"
	"github.com/dexidp/dex/storage/memory"
)

type client struct {
	ID           string   `json:"id"`
	Name         string   `json:"name"`
	Public       bool     `json:"public"`
	RedirectURIs []string `json:"redirectURIs"`
}

type password struct {
	Email    string   `json:"email"`
	Hash     string   `json:"hash"` // bcrypt
	Username string   `json:"username"`
	UserID   string   `json:"userID"`
	Groups   []string `json:"groups"`
}

type config struct {
	Issuer             string     `json:"issuer"`
	Listen             string     `json:"listen"` // host:port, HTTPS
	TLSCert            string     `json:"tlsCert"`
	TLSKey             string     `json:"tlsKey"`
	IDTokens           string     `json:"idTokens"`       // Go duration
	DeviceRequests     string     `json:"deviceRequests"` // Go duration
	SkipApprovalScreen bool       `json:"skipApprovalScreen"`
	ResponseTypes      []string   `json:"responseTypes"`
	GrantTypes         []string   `json:"grantTypes"`
	Clients            []client   `json:"clients"`
	Passwords          []password `json:"passwords"`
}

func main() {
	if len(os.Args) == 2 && os.Args[1] == "version" {
		fmt.Println("dex (gryvia sandbox build)", version)
		return
	}
	if len(os.Args) != 3 || os.Args[1] != "serve" {
		fmt.Fprintln(os.Stderr, "usage: dex serve CONFIG.json")
		os.Exit(2)
	}
	if err := run(os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "dex:", err)
		os.Exit(1)
	}
}

var version = "dev" // set with -ldflags -X main.version=...

func run(path string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var c config
	if err := json.Unmarshal(raw, &c); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx := context.Background()
	now := func() time.Time { return time.Now().UTC() }

	s := memory.New(logger)
	clients := make([]storage.Client, len(c.Clients))
	for i, cl := range c.Clients {
		clients[i] = storage.Client{ID: cl.ID, Name: cl.Name, Public: cl.Public, RedirectURIs: cl.RedirectURIs}
	}
	s = storage.WithStaticClients(s, clients)
	passwords := make([]storage.Password, len(c.Passwords))
	for i, p := range c.Passwords {
		passwords[i] = storage.Password{
			Email: p.Email, Hash: []byte(p.Hash), Username: p.Username, UserID: p.UserID, Groups: p.Groups,
		}
	}
	s = storage.WithStaticPasswords(s, passwords, logger)
	s = storage.WithStaticConnectors(s, []storage.Connector{
		{ID: connectors.LocalConnector, Name: "Email", Type: connectors.LocalConnector},
	})
	s = refreshOutsideLock{s}

	idTokens, err := time.ParseDuration(c.IDTokens)
	if err != nil {
		return fmt.Errorf("idTokens: %w", err)
	}
	deviceRequests, err := time.ParseDuration(c.DeviceRequests)
	if err != nil {
		return fmt.Errorf("deviceRequests: %w", err)
	}
	sig, err := (&signer.LocalConfig{KeysRotationPeriod: "6h"}).Open(ctx, s, idTokens, now, logger)
	if err != nil {
		return fmt.Errorf("signer: %w", err)
	}
	refresh, err := tokens.NewRefreshTokenPolicy(logger, false, "", "", "")
	if err != nil {
		return fmt.Errorf("refresh token policy: %w", err)
	}
	serv, err := server.NewServer(ctx, server.Config{
		Issuer:                 c.Issuer,
		Storage:                s,
		Logger:                 logger,
		Now:                    now,
		AllowedGrantTypes:      c.GrantTypes,
		SupportedResponseTypes: c.ResponseTypes,
		SkipApprovalScreen:     c.SkipApprovalScreen,
		IDTokensValidFor:       idTokens,
		DeviceRequestsValidFor: deviceRequests,
		RefreshTokenPolicy:     refresh,
		Signer:                 sig,
		PrometheusRegistry:     prometheus.NewRegistry(),
		HealthChecker:          gosundheit.New(),
	})
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	httpServer := &http.Server{Addr: c.Listen, Handler: serv, ReadHeaderTimeout: 10 * time.Second}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-stop
		shutdown, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		_ = httpServer.Shutdown(shutdown)
	}()
	logger.Info("listening", "address", c.Listen, "issuer", c.Issuer)
	if err := httpServer.ListenAndServeTLS(c.TLSCert, c.TLSKey); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// refreshOutsideLock runs UpdateRefreshToken's updater outside the memory storage's lock: the
// refresh grant's updater reads the storage again (offline sessions), and the memory storage's
// mutex is not reentrant, so a refresh hung until its client timed out. The read-update-write
// is no longer atomic, which a single-user sandbox issuer does not need.
type refreshOutsideLock struct{ storage.Storage }

func (s refreshOutsideLock) UpdateRefreshToken(ctx context.Context, id string, updater func(storage.RefreshToken) (storage.RefreshToken, error)) error {
	old, err := s.Storage.GetRefresh(ctx, id)
	if err != nil {
		return err
	}
	updated, err := updater(old)
	if err != nil {
		return err
	}
	return s.Storage.UpdateRefreshToken(ctx, id, func(storage.RefreshToken) (storage.RefreshToken, error) {
		return updated, nil
	})
}
