// Package cli is the waybill command line, shared by cmd/waybill (SQLite) and cmd/waybill-pg
// (PostgreSQL): the two binaries differ only in how they open the database.
//
//	waybill [serve] [-addr A] [-db DSN] [-base-url URL] [-webhook-allow-private] [-webhook-retry-schedule D,D,…]
//	waybill account create NAME [--brand B] [-db DSN]
//	waybill token create --account ID --scopes S1,S2,… [-db DSN]
//	waybill token revoke TOKEN [-db DSN]
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/waybill/waybill/httpapi"
	"github.com/waybill/waybill/store"
)

// Database says how a binary opens its database.
type Database struct {
	// Default is -db's value when neither the flag nor WAYBILL_DB is set; Help describes it.
	Default, Help string
	// Open opens the database named by -db and applies the migrations.
	Open func(ctx context.Context, dsn string) (*store.DB, error)
}

// Main runs the command line with the process's arguments and environment, and exits 1 on error.
func Main(d Database) {
	if err := Run(context.Background(), d, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "waybill:", err)
		os.Exit(1)
	}
}

// shutdownTimeout bounds how long in-flight requests and deliveries may take to finish.
const shutdownTimeout = 15 * time.Second

// Run runs one command: args are the command line without the program name.
func Run(ctx context.Context, d Database, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	cmd := "serve"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
		if cmd != "serve" && len(args) > 0 && !strings.HasPrefix(args[0], "-") {
			cmd, args = cmd+" "+args[0], args[1:]
		}
	}
	switch cmd {
	case "serve":
		return serve(ctx, d, args, getenv, stdout, stderr)
	case "account create":
		return accountCreate(ctx, d, args, getenv, stdout, stderr)
	case "token create":
		return tokenCreate(ctx, d, args, getenv, stdout, stderr)
	case "token revoke":
		return tokenRevoke(ctx, d, args, getenv, stdout, stderr)
	}
	return fmt.Errorf("unknown command %q (want serve, account create, token create or token revoke)", cmd)
}

// flags is a FlagSet with the -db flag every command takes.
func flags(name string, d Database, getenv func(string) string, stderr io.Writer) (*flag.FlagSet, *string) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs, fs.String("db", envOr(getenv, "WAYBILL_DB", d.Default), d.Help+" (WAYBILL_DB)")
}

func envOr(getenv func(string) string, name, def string) string {
	if v := getenv(name); v != "" {
		return v
	}
	return def
}

// parseInterspersed parses flags that may come before or after positional arguments.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return positional, nil
		}
		positional, args = append(positional, args[0]), args[1:]
	}
}

func serve(ctx context.Context, d Database, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs, dbPath := flags("serve", d, getenv, stderr)
	addr := fs.String("addr", envOr(getenv, "WAYBILL_ADDR", "127.0.0.1:8080"), "listen address (WAYBILL_ADDR)")
	baseURL := fs.String("base-url", getenv("WAYBILL_BASE_URL"), "external base URL, default http://<addr> (WAYBILL_BASE_URL)")
	allowPrivate, _ := strconv.ParseBool(getenv("WAYBILL_WEBHOOK_ALLOW_PRIVATE"))
	fs.BoolVar(&allowPrivate, "webhook-allow-private", allowPrivate, "allow webhook URLs on loopback, private and link-local hosts (WAYBILL_WEBHOOK_ALLOW_PRIVATE)")
	schedule := fs.String("webhook-retry-schedule", envOr(getenv, "WAYBILL_WEBHOOK_RETRY_SCHEDULE", "5s,5m,30m,2h,5h,10h,10h"), "webhook retry delays (WAYBILL_WEBHOOK_RETRY_SCHEDULE)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("serve: unexpected argument %q", fs.Arg(0))
	}
	retry, err := parseSchedule(*schedule)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewJSONHandler(stderr, nil))

	db, err := d.Open(ctx, *dbPath)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := firstStart(ctx, db, stdout); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	if *baseURL == "" {
		*baseURL = "http://" + ln.Addr().String()
	}
	api, err := httpapi.New(httpapi.Config{DB: db, BaseURL: *baseURL, Logger: log,
		WebhookAllowPrivate: allowPrivate, WebhookRetrySchedule: retry})
	if err != nil {
		ln.Close()
		return err
	}
	srv := &http.Server{Handler: api, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}

	// Workers outlive the signal by the shutdown grace period, so deliveries in flight finish.
	workCtx, stopWork := context.WithCancel(context.WithoutCancel(ctx))
	workersDone := make(chan error, 1)
	go func() { workersDone <- api.Run(workCtx) }()
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	log.Info("listening", "addr", ln.Addr().String(), "base_url", *baseURL, "db", *dbPath)

	select {
	case err := <-serveErr:
		stopWork()
		<-workersDone
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	shutCtx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	err = srv.Shutdown(shutCtx)
	stopWork()
	select {
	case <-workersDone:
	case <-shutCtx.Done():
	}
	return err
}

// firstStart creates the default account and an all-scopes token on an empty database, and
// prints the token, exactly once in the database's life (store.Bootstrap), however many
// processes start together.
func firstStart(ctx context.Context, db *store.DB, stdout io.Writer) error {
	tok, created, err := db.Bootstrap(ctx, httpapi.AllScopes)
	if err != nil || !created {
		return err
	}
	_, err = fmt.Fprintf(stdout, "token: %s\n", tok.Token)
	return err
}

func parseSchedule(s string) ([]time.Duration, error) {
	var out []time.Duration
	for _, part := range strings.Split(s, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(part))
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("-webhook-retry-schedule: %q is not a positive Go duration", part)
		}
		out = append(out, d)
	}
	return out, nil
}

func accountCreate(ctx context.Context, d Database, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs, dbPath := flags("account create", d, getenv, stderr)
	brand := fs.String("brand", "", "the account's brand")
	rest, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 1 || strings.TrimSpace(rest[0]) == "" {
		return errors.New("usage: waybill account create NAME [--brand B]")
	}
	db, err := d.Open(ctx, *dbPath)
	if err != nil {
		return err
	}
	defer db.Close()
	acct, err := db.CreateAccount(ctx, rest[0], *brand)
	if err != nil {
		return err
	}
	return json.NewEncoder(stdout).Encode(map[string]string{
		"id": acct.ID, "organization_id": acct.OrganizationID, "ingest_secret": acct.IngestSecret})
}

func tokenCreate(ctx context.Context, d Database, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs, dbPath := flags("token create", d, getenv, stderr)
	account := fs.String("account", "", "account id")
	scopeList := fs.String("scopes", "", "comma-separated scopes: "+strings.Join(httpapi.AllScopes, ","))
	if rest, err := parseInterspersed(fs, args); err != nil {
		return err
	} else if len(rest) > 0 || *account == "" {
		return errors.New("usage: waybill token create --account ID --scopes S1,S2,…")
	}
	scopes, err := httpapi.ParseScopes(strings.Split(*scopeList, ","))
	if err != nil {
		return err
	}
	db, err := d.Open(ctx, *dbPath)
	if err != nil {
		return err
	}
	defer db.Close()
	tok, err := db.CreateToken(ctx, *account, scopes)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("no account %q", *account)
	}
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, tok.Token)
	return err
}

func tokenRevoke(ctx context.Context, d Database, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs, dbPath := flags("token revoke", d, getenv, stderr)
	rest, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return errors.New("usage: waybill token revoke TOKEN")
	}
	db, err := d.Open(ctx, *dbPath)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := db.RevokeBearer(ctx, rest[0]); errors.Is(err, store.ErrNotFound) {
		return errors.New("no such active token")
	} else if err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, "revoked")
	return err
}
