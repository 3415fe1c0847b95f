package storetest

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/store"
)

// seedTokens makes an account with n tokens created one microsecond apart (some sharing a
// timestamp, to exercise the id tie-break), and returns their ids oldest first.
func seedTokens(t *testing.T, db *store.DB, n int) (string, []string) {
	t.Helper()
	ctx := context.Background()
	acct, err := db.CreateAccount(ctx, "acme", "")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < n; i++ {
		db.Now = func() time.Time { return base.Add(time.Duration(i/2) * time.Microsecond) }
		id := fmt.Sprintf("00000000-0000-7000-8000-%012d", i)
		db.NewID = func() string { return id }
		if _, err := db.CreateToken(ctx, acct.ID, []string{"READ_BILLING"}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return acct.ID, ids
}

func tokenQuery(accountID string) store.Query[store.Token] {
	return store.Query[store.Token]{
		Columns: "id, created_at",
		From:    "api_tokens WHERE account_id = $1",
		Args:    []any{accountID},
		Scan: func(rows *sql.Rows) (store.Token, error) {
			var t store.Token
			var at int64
			err := rows.Scan(&t.ID, &at)
			t.CreatedAt = shipping.Timestamp{Time: store.Time(at)}
			return t, err
		},
	}
}

func testOffsetList(t *testing.T) {
	db := openTest(t)
	acct, ids := seedTokens(t, db, 7)
	ctx := context.Background()
	tests := []struct {
		page             store.Page
		want             []string
		hasNext, hasPrev bool
	}{
		{store.Page{Number: 1, Size: 3}, ids[0:3], true, false},
		{store.Page{Number: 2, Size: 3}, ids[3:6], true, true},
		{store.Page{Number: 3, Size: 3}, ids[6:7], false, true},
		{store.Page{Number: 4, Size: 3}, nil, false, true},
		{store.Page{Number: 1, Size: 250}, ids, false, false},
	}
	for _, tt := range tests {
		l, err := store.OffsetList(ctx, db.Reader(), tokenQuery(acct), "created_at, id", tt.page)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, tok := range l.Items {
			got = append(got, tok.ID)
		}
		if !slices.Equal(got, tt.want) || l.HasNext != tt.hasNext || l.HasPrev != tt.hasPrev || l.Total != 7 {
			t.Errorf("OffsetList(%v) = %v next=%v prev=%v total=%d; want %v next=%v prev=%v total=7",
				tt.page, got, l.HasNext, l.HasPrev, l.Total, tt.want, tt.hasNext, tt.hasPrev)
		}
	}
}

// TestKeysetList walks the whole list forwards and backwards in both orders and checks that
// every row appears once, in order, with accurate has_next/has_previous flags.
func testKeysetList(t *testing.T) {
	db := openTest(t)
	acct, ids := seedTokens(t, db, 11)
	ctx := context.Background()
	key := func(tok store.Token) store.Key {
		return store.Key{CreatedAt: store.Micros(tok.CreatedAt.Time), ID: tok.ID}
	}
	for _, asc := range []bool{true, false} {
		want := slices.Clone(ids)
		if !asc {
			slices.Reverse(want)
		}
		// Forwards.
		var got []string
		var k *store.Key
		for pages := 0; ; pages++ {
			l, err := store.KeysetList(ctx, db.Reader(), tokenQuery(acct), store.Keyset{Size: 4, Key: k, Asc: asc}, key)
			if err != nil {
				t.Fatal(err)
			}
			if l.HasPrev != (pages > 0) {
				t.Errorf("asc=%v page %d: has_previous = %v", asc, pages, l.HasPrev)
			}
			for _, tok := range l.Items {
				got = append(got, tok.ID)
			}
			if !l.HasNext {
				break
			}
			k = &l.Keys[len(l.Keys)-1]
		}
		if !slices.Equal(got, want) {
			t.Errorf("asc=%v forwards = %v; want %v", asc, got, want)
		}
		// Backwards from the end.
		got, k = nil, nil
		for pages := 0; ; pages++ {
			l, err := store.KeysetList(ctx, db.Reader(), tokenQuery(acct), store.Keyset{Size: 4, Key: k, Asc: asc, Before: true}, key)
			if err != nil {
				t.Fatal(err)
			}
			if l.HasNext != (pages > 0) {
				t.Errorf("asc=%v backwards page %d: has_next = %v", asc, pages, l.HasNext)
			}
			var page []string
			for _, tok := range l.Items {
				page = append(page, tok.ID)
			}
			got = append(page, got...)
			if !l.HasPrev {
				break
			}
			k = &l.Keys[0]
		}
		if !slices.Equal(got, want) {
			t.Errorf("asc=%v backwards = %v; want %v", asc, got, want)
		}
	}
}

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
	db.Reader().QueryRow(`SELECT token_hash FROM api_tokens WHERE id = $1`, tok.ID).Scan(&stored)
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
