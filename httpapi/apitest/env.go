// Package apitest runs the API's golden files (testdata/<endpoint>/<case>.txtar) on any
// database: httpapi's tests run them on SQLite, cmd/waybill-pg's on PostgreSQL, each case on
// a fresh database.
package apitest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/waybill/waybill/httpapi"
	"github.com/waybill/waybill/store"
)

// Opener opens a fresh, migrated, empty database for one test.
type Opener func(t testing.TB) *store.DB

// Start is the fixed clock every test API starts at.
var Start = time.Date(2026, 11, 22, 3, 42, 3, 123456000, time.UTC)

// Env is an API over a fresh database with a fixed clock, sequential IDs, seeded randomness
// and two seeded accounts (the same as httpapi's own test environment):
//
//	acme:  tokens "all" (every scope but ADMIN), "admin" (every scope), "read_billing",
//	       "revoked" (revoked); brand "Acme"
//	other: token "other" (every scope but ADMIN)
type Env struct {
	API *httpapi.API
	DB  *store.DB
	URL string // BaseURL

	Tokens   map[string]string        // token name → bearer
	Accounts map[string]store.Account // account name → account

	t   testing.TB
	mu  sync.Mutex
	now time.Time
	ids atomic.Int64
}

// NewEnv builds the environment over an opened database, which it closes when the test ends.
func NewEnv(t testing.TB, db *store.DB) *Env { return NewEnvWith(t, db, nil) }

// NewEnvWith is NewEnv with the API's configuration changed by adjust (if not nil).
func NewEnvWith(t testing.TB, db *store.DB, adjust func(*httpapi.Config)) *Env {
	t.Helper()
	t.Cleanup(func() { db.Close() })
	e := &Env{t: t, now: Start, URL: "https://waybill.test", Tokens: map[string]string{}, Accounts: map[string]store.Account{}}
	db.Now = e.clock
	db.NewID = func() string { return fmt.Sprintf("00000000-0000-7000-8000-%012x", e.ids.Add(1)) }
	// The document URL key is drawn from a stream of its own, so that it is fixed and the
	// tokens and secrets drawn after it are the ones the golden files know.
	db.Rand = rand.NewChaCha8([32]byte{'d', 'o', 'c', 'u', 'm', 'e', 'n', 't', 's'})
	if _, err := db.ServerKey(context.Background(), store.DocumentURLKey); err != nil {
		t.Fatal(err)
	}
	db.Rand = rand.NewChaCha8([32]byte{'w', 'a', 'y', 'b', 'i', 'l', 'l'})
	e.DB = db

	cfg := httpapi.Config{DB: db, BaseURL: e.URL, WebhookAllowPrivate: true,
		WebhookRetrySchedule: []time.Duration{time.Second, 2 * time.Second}}
	if adjust != nil {
		adjust(&cfg)
	}
	api, err := httpapi.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.API = api

	ctx := context.Background()
	all := httpapi.AllScopes[:len(httpapi.AllScopes)-1]
	seed := []struct {
		account, brand, token string
		scopes                []string
	}{
		{"acme", "Acme", "all", all},
		{"acme", "", "admin", httpapi.AllScopes},
		{"acme", "", "read_billing", []string{httpapi.ScopeReadBilling}},
		{"acme", "", "revoked", all},
		{"other", "Other", "other", all},
	}
	for _, s := range seed {
		acct, ok := e.Accounts[s.account]
		if !ok {
			if acct, err = db.CreateAccount(ctx, s.account, s.brand); err != nil {
				t.Fatal(err)
			}
			e.Accounts[s.account] = acct
		}
		tok, err := db.CreateToken(ctx, acct.ID, s.scopes)
		if err != nil {
			t.Fatal(err)
		}
		e.Tokens[s.token] = tok.Token
	}
	if err := db.RevokeBearer(ctx, e.Tokens["revoked"]); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *Env) clock() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.now
}

// SetClock moves the test clock.
func (e *Env) SetClock(t time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.now = t
}

// Drain runs the background workers' due work once.
func (e *Env) Drain() {
	e.t.Helper()
	if err := e.API.Drain(context.Background()); err != nil {
		e.t.Fatal(err)
	}
}
