package store

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// twoProcesses opens one database twice, as two processes sharing it would.
func twoProcesses(t *testing.T) (here, there *DB) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "w.db")
	for _, db := range []**DB{&here, &there} {
		var err error
		if *db, err = OpenSQLite(context.Background(), path); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { (*db).Close() })
	}
	return here, there
}

// A revoked token stops working at once in the process that revoked it, and within cacheTTL
// in another process sharing the database, though both had it cached.
func TestTokenRevocationReachesEveryCache(t *testing.T) {
	ctx := context.Background()
	here, there := twoProcesses(t)
	acct, err := here.CreateAccount(ctx, "acme", "Acme")
	if err != nil {
		t.Fatal(err)
	}
	tok, err := here.CreateToken(ctx, acct.ID, []string{"READ_SHIPMENTS"})
	if err != nil {
		t.Fatal(err)
	}
	for _, db := range []*DB{here, there} {
		if p, err := db.Authenticate(ctx, tok.Token); err != nil || p.AccountID != acct.ID {
			t.Fatalf("Authenticate = %+v, %v", p, err)
		}
	}
	revoked := time.Now()
	if err := here.RevokeBearer(ctx, tok.Token); err != nil {
		t.Fatal(err)
	}
	if _, err := here.Authenticate(ctx, tok.Token); !errors.Is(err, ErrNotFound) {
		t.Errorf("in the revoking process right after revocation: err = %v; want ErrNotFound", err)
	}
	for {
		_, err := there.Authenticate(ctx, tok.Token)
		if errors.Is(err, ErrNotFound) {
			break
		}
		if time.Since(revoked) > cacheTTL+200*time.Millisecond {
			t.Fatalf("another process still accepts the token %v after revocation (err %v)", time.Since(revoked), err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
