package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/waybill/waybill/shipping"
)

// seedTokens makes an account with n tokens created one microsecond apart (some sharing a
// timestamp, to exercise the id tie-break), and returns their ids oldest first.
func seedTokens(t *testing.T, db *DB, n int) (string, []string) {
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

func tokenQuery(accountID string) listQuery[Token] {
	return listQuery[Token]{
		Columns: "id, created_at",
		From:    "api_tokens WHERE account_id = $1",
		Args:    []any{accountID},
		Scan: func(rows *sql.Rows) (Token, error) {
			var t Token
			var at int64
			err := rows.Scan(&t.ID, &at)
			t.CreatedAt = shipping.Timestamp{Time: Time(at)}
			return t, err
		},
	}
}

func TestOffsetList(t *testing.T) {
	db := openTest(t)
	acct, ids := seedTokens(t, db, 7)
	ctx := context.Background()
	tests := []struct {
		page             Page
		want             []string
		hasNext, hasPrev bool
	}{
		{Page{Number: 1, Size: 3}, ids[0:3], true, false},
		{Page{Number: 2, Size: 3}, ids[3:6], true, true},
		{Page{Number: 3, Size: 3}, ids[6:7], false, true},
		{Page{Number: 4, Size: 3}, nil, false, true},
		{Page{Number: 1, Size: 250}, ids, false, false},
	}
	for _, tt := range tests {
		l, err := offsetList(ctx, db.r, tokenQuery(acct), "created_at, id", tt.page)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, tok := range l.Items {
			got = append(got, tok.ID)
		}
		if !slices.Equal(got, tt.want) || l.HasNext != tt.hasNext || l.HasPrev != tt.hasPrev || l.Total != 7 {
			t.Errorf("offsetList(%v) = %v next=%v prev=%v total=%d; want %v next=%v prev=%v total=7",
				tt.page, got, l.HasNext, l.HasPrev, l.Total, tt.want, tt.hasNext, tt.hasPrev)
		}
	}
}

// TestKeysetList walks the whole list forwards and backwards in both orders and checks that
// every row appears once, in order, with accurate has_next/has_previous flags.
func TestKeysetList(t *testing.T) {
	db := openTest(t)
	acct, ids := seedTokens(t, db, 11)
	ctx := context.Background()
	key := func(tok Token) Key {
		return Key{CreatedAt: Micros(tok.CreatedAt.Time), ID: tok.ID}
	}
	for _, asc := range []bool{true, false} {
		want := slices.Clone(ids)
		if !asc {
			slices.Reverse(want)
		}
		// Forwards.
		var got []string
		var k *Key
		for pages := 0; ; pages++ {
			l, err := keysetList(ctx, db.r, tokenQuery(acct), Keyset{Size: 4, Key: k, Asc: asc}, key)
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
			l, err := keysetList(ctx, db.r, tokenQuery(acct), Keyset{Size: 4, Key: k, Asc: asc, Before: true}, key)
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
