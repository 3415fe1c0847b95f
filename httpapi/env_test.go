package httpapi

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"github.com/waybill/waybill/store"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// testStart is the fixed clock every test API starts at.
var testStart = time.Date(2026, 11, 22, 3, 42, 3, 123456000, time.UTC)

// testEnv is an API over a fresh SQLite file with a fixed clock, sequential IDs, seeded
// randomness and two seeded accounts:
//
//	acme:  tokens "all" (every scope but ADMIN), "admin" (every scope), "read_billing",
//	       "revoked" (revoked); brand "Acme"
//	other: token "other" (every scope but ADMIN)
type testEnv struct {
	t   testing.TB
	api *API
	db  *store.DB
	sql *sql.DB // a plain pool on db's file, to read and damage rows the API does not show
	url string  // BaseURL

	mu  sync.Mutex
	now time.Time
	ids atomic.Int64

	tokens   map[string]string        // token name → bearer
	accounts map[string]store.Account // account name → account
}

func newEnv(t testing.TB) *testEnv {
	t.Helper()
	path := filepath.Join(t.TempDir(), "waybill.db")
	db, err := store.OpenSQLite(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	return newEnvWith(t, db, path)
}

// newEnvWith is newEnv over a database opened from path, which it closes when the test ends.
func newEnvWith(t testing.TB, db *store.DB, path string) *testEnv {
	t.Helper()
	t.Cleanup(func() { db.Close() })
	plain, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=10000&_foreign_keys=on")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { plain.Close() })
	e := &testEnv{t: t, sql: plain, now: testStart, url: "https://waybill.test", tokens: map[string]string{}, accounts: map[string]store.Account{}}
	db.Now = e.clock
	db.NewID = func() string { return fmt.Sprintf("00000000-0000-7000-8000-%012x", e.ids.Add(1)) }
	// The document URL key is drawn from a stream of its own, so that it is fixed and the
	// tokens and secrets drawn after it are the ones the golden files know.
	db.Rand = rand.NewChaCha8([32]byte{'d', 'o', 'c', 'u', 'm', 'e', 'n', 't', 's'})
	if _, err := db.ServerKey(context.Background(), store.DocumentURLKey); err != nil {
		t.Fatal(err)
	}
	db.Rand = rand.NewChaCha8([32]byte{'w', 'a', 'y', 'b', 'i', 'l', 'l'})
	e.db = db

	api, err := New(Config{DB: db, BaseURL: e.url, WebhookAllowPrivate: true,
		WebhookRetrySchedule: []time.Duration{time.Second, 2 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	e.api = api

	ctx := context.Background()
	all := AllScopes[:len(AllScopes)-1]
	seed := []struct {
		account, brand, token string
		scopes                []string
	}{
		{"acme", "Acme", "all", all},
		{"acme", "", "admin", AllScopes},
		{"acme", "", "read_billing", []string{ScopeReadBilling}},
		{"acme", "", "revoked", all},
		{"other", "Other", "other", all},
	}
	for _, s := range seed {
		acct, ok := e.accounts[s.account]
		if !ok {
			if acct, err = db.CreateAccount(ctx, s.account, s.brand); err != nil {
				t.Fatal(err)
			}
			e.accounts[s.account] = acct
		}
		tok, err := db.CreateToken(ctx, acct.ID, s.scopes)
		if err != nil {
			t.Fatal(err)
		}
		e.tokens[s.token] = tok.Token
	}
	if err := db.RevokeBearer(ctx, e.tokens["revoked"]); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *testEnv) clock() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.now
}

// setClock moves the test clock.
func (e *testEnv) setClock(t time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.now = t
}

// do sends one request with the named token ("" for none) and a JSON body (nil for none; a
// string or []byte is sent as is).
func (e *testEnv) do(method, path, token string, body any) *httptest.ResponseRecorder {
	e.t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = bytes.NewReader([]byte(b))
	case []byte:
		r = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		r = bytes.NewReader(j)
	}
	req := httptest.NewRequest(method, path, r)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+e.tokens[token])
	}
	w := httptest.NewRecorder()
	e.api.ServeHTTP(w, req)
	return w
}

// decode unmarshals a recorded JSON answer, failing the test unless its status is want.
func decode[T any](t testing.TB, w *httptest.ResponseRecorder, want int) T {
	t.Helper()
	var v T
	if w.Code != want {
		t.Fatalf("status = %d; want %d; body: %s", w.Code, want, w.Body)
	}
	if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil {
		t.Fatalf("decoding %s: %v", w.Body, err)
	}
	return v
}

// drain runs the background workers' due work once.
func (e *testEnv) drain() {
	e.t.Helper()
	if err := e.api.drain(context.Background()); err != nil {
		e.t.Fatal(err)
	}
}
