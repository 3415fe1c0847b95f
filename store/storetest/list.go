package storetest

import (
	"context"
	"slices"
	"testing"

	"github.com/waybill/waybill/store"
)

func testTokens(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	acct, err := db.CreateAccount(ctx, "acme", "Acme")
	if err != nil {
		t.Fatal(err)
	}
	tok, err := db.CreateToken(ctx, acct.ID, []string{"READ_BILLING", "ADMIN"})
	if err != nil {
		t.Fatal(err)
	}
	var stored string
	sqlOf(db).QueryRow(`SELECT token_hash FROM api_tokens WHERE id = $1`, tok.ID).Scan(&stored)
	if stored == tok.Token || len(stored) != 64 {
		t.Errorf("stored %q; want a SHA-256 hex hash, never the token", stored)
	}
	p, err := db.Authenticate(ctx, tok.Token)
	if err != nil || p.AccountID != acct.ID || !slices.Equal(p.Scopes, []string{"READ_BILLING", "ADMIN"}) {
		t.Errorf("Authenticate = %+v, %v", p, err)
	}
	if _, err := db.Authenticate(ctx, tok.Token+"x"); err != store.ErrNotFound {
		t.Errorf("Authenticate(wrong) = %v; want ErrNotFound", err)
	}
	if err := db.RevokeBearer(ctx, tok.Token); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Authenticate(ctx, tok.Token); err != store.ErrNotFound {
		t.Errorf("Authenticate(revoked) = %v; want ErrNotFound", err)
	}
	if err := db.RevokeToken(ctx, tok.ID); err != store.ErrNotFound {
		t.Errorf("RevokeToken twice = %v; want ErrNotFound", err)
	}
	if _, err := db.CreateToken(ctx, "missing", []string{"ADMIN"}); err != store.ErrNotFound {
		t.Errorf("CreateToken(missing account) = %v; want ErrNotFound", err)
	}
	old := acct.IngestSecret
	rot, err := db.RotateIngestSecret(ctx, acct.ID)
	if err != nil || rot.IngestSecret == old || len(rot.IngestSecret) != 44 {
		t.Errorf("RotateIngestSecret = %q, %v; want a new 44-char secret", rot.IngestSecret, err)
	}
}
