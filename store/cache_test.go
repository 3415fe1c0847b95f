package store

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/waybill/waybill/ingest"
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

// A rotated ingest secret stops working at once in every process, though another process has
// the old one cached: the import's own transaction refuses it (ingest.ErrStaleSecret), for a
// new body and for one already received, and the next look-up reads the new secret.
func TestRotatedSecretRefusedAcrossProcesses(t *testing.T) {
	ctx := context.Background()
	here, there := twoProcesses(t)
	acct, err := here.CreateAccount(ctx, "acme", "Acme")
	if err != nil {
		t.Fatal(err)
	}
	id, old, err := there.OrganizationSecret(ctx, acct.OrganizationID)
	if err != nil || id != acct.ID || old != acct.IngestSecret {
		t.Fatalf("OrganizationSecret = %q, %q, %v", id, old, err)
	}
	sent := []byte(`{"id":"A-1"}`)
	if _, created, err := there.EnqueueImport(ctx, acct.ID, old, sent, nil); err != nil || !created {
		t.Fatalf("EnqueueImport = %v, %v", created, err)
	}
	rotated, err := here.RotateIngestSecret(ctx, acct.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, s, _ := there.OrganizationSecret(ctx, acct.OrganizationID); s != old {
		t.Fatal("the test needs the old secret still cached in the other process")
	}
	for _, body := range [][]byte{[]byte(`{"id":"A-2"}`), sent} {
		if _, _, err := there.EnqueueImport(ctx, acct.ID, old, body, nil); !errors.Is(err, ingest.ErrStaleSecret) {
			t.Errorf("EnqueueImport(%s) with the old secret: err = %v; want ErrStaleSecret", body, err)
		}
	}
	if _, s, err := there.OrganizationSecret(ctx, acct.OrganizationID); err != nil || s != rotated.IngestSecret {
		t.Errorf("OrganizationSecret after a refusal = %q, %v; want the new secret", s, err)
	}
	imp, created, err := there.EnqueueImport(ctx, acct.ID, rotated.IngestSecret, sent, nil)
	if err != nil || created || imp.ID == "" {
		t.Errorf("EnqueueImport(already received) with the new secret = %+v, %v, %v", imp, created, err)
	}
	var n int
	if err := here.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM order_imports`).Scan(&n); err != nil || n != 1 {
		t.Errorf("%d imports stored (%v); want 1", n, err)
	}
}
