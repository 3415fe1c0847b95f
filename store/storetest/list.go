package storetest

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

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

// A list filtered by brand finds the shipments of those brands, through the index that holds
// only shipments with a brand (migration 033), and still finds those without one when asked
// for the empty brand (the store's filter allows it; the API drops empty values).
func testListByBrand(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	acct := newAccount(t, db)
	now := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	ids := map[string][]string{} // brand → shipment ids, newest first
	for i, brand := range []string{"A", "", "B", "A", ""} {
		s := testShipment(db, acct.ID, now.Add(time.Duration(i)*time.Second))
		s.Brand = brand
		if _, err := db.CreateShipment(ctx, s); err != nil {
			t.Fatal(err)
		}
		ids[brand] = append([]string{s.ID}, ids[brand]...)
	}
	for _, brands := range [][]string{{"A"}, {"B"}, {"A", "B"}, {""}, {"A", ""}, {"C"}} {
		want := []string{}
		for _, b := range brands {
			want = append(want, ids[b]...)
		}
		slices.Sort(want)
		f := store.ShipmentFilter{Brands: brands}
		offset, err := db.ListShipmentsJSON(ctx, acct.ID, f, store.Page{Number: 1, Size: 10}, nil)
		if err != nil {
			t.Fatal(err)
		}
		keyset, err := db.ListShipmentsJSON(ctx, acct.ID, f, store.Page{}, &store.Keyset{Size: 10})
		if err != nil {
			t.Fatal(err)
		}
		for name, l := range map[string]store.List[string]{"offset": offset, "keyset": keyset} {
			got := []string{}
			for _, js := range l.Items {
				var s struct{ ID string }
				if err := json.Unmarshal([]byte(js), &s); err != nil {
					t.Fatal(err)
				}
				got = append(got, s.ID)
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("ListShipmentsJSON(brands %q, %s) = %v; want %v", brands, name, got, want)
			}
		}
		if offset.Total != len(want) {
			t.Errorf("ListShipmentsJSON(brands %q).Total = %d; want %d", brands, offset.Total, len(want))
		}
	}
}
