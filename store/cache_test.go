package store

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// A revoked token stops working at once in the process that revoked it, and within cacheTTL
// in another process sharing the database, though both had it cached.
func TestTokenRevocationReachesEveryCache(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "w.db")
	here, err := OpenSQLite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer here.Close()
	there, err := OpenSQLite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer there.Close()
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
