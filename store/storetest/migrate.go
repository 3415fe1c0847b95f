package storetest

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"testing"

	"github.com/waybill/waybill/store"
)

// MigrateTwice: opening a database migrated before applies nothing again. Between two opens it
// leaves rows that a migration would change were it applied again — an Idempotency-Key without
// an answer (migration 039's SQL deletes it) and a carrier version without an outline (its Go
// step fills it) — and checks that the second open changed neither, nor any row of
// schema_migrations. open opens the database (migrating it) with a plain pool on it; the test
// closes the DB it returns before opening again.
func MigrateTwice(t *testing.T, open func() (*store.DB, *sql.DB)) {
	ctx := context.Background()
	db, raw := open()
	applied := appliedMigrations(t, raw)
	if len(applied) == 0 {
		t.Fatal("no migration applied by the first open")
	}
	for _, stmt := range []string{
		`INSERT INTO accounts (id, name, organization_id, ingest_secret, created_at) VALUES ('sentinel', 'sentinel', 'sentinel', 's', 0)`,
		`INSERT INTO idempotency_keys (account_id, idempotency_key, fingerprint, shipment_id, response, created_at)
			VALUES ('sentinel', 'claimed', 'f', 's', '', 0)`,
		`INSERT INTO carriers (code, deleted, next_serial, created_at, updated_at) VALUES ('SENTINEL', FALSE, 0, 0, 0)`,
		`INSERT INTO carrier_versions (carrier, version, effective_from, created_at, outline, card)
			VALUES ('SENTINEL', 1, '2026-01-01', 0, NULL, '{"name":"Sentinel"}')`,
	} {
		if _, err := raw.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%v\n%s", err, stmt)
		}
	}
	db.Close()

	_, raw = open()
	if again := appliedMigrations(t, raw); !slices.Equal(again, applied) {
		for i := range max(len(again), len(applied)) {
			if i >= len(again) || i >= len(applied) || again[i] != applied[i] {
				t.Errorf("schema_migrations row %d after the second open: %q; want as after the first, %q",
					i, again[i:min(i+1, len(again))], applied[i:min(i+1, len(applied))])
				break
			}
		}
	}
	var keys, outlines int
	if err := raw.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM idempotency_keys WHERE idempotency_key = 'claimed'
		AND response = ''), (SELECT COUNT(*) FROM carrier_versions WHERE carrier = 'SENTINEL' AND outline IS NULL)`).
		Scan(&keys, &outlines); err != nil {
		t.Fatal(err)
	}
	if keys != 1 || outlines != 1 {
		t.Errorf("after the second open: %d unanswered keys, %d versions without an outline; want the sentinels (1, 1) "+
			"as left: a migration was applied again", keys, outlines)
	}
}

// appliedMigrations are the rows of schema_migrations, in order, as text.
func appliedMigrations(t *testing.T, raw *sql.DB) []string {
	t.Helper()
	rows, err := raw.Query(`SELECT version, name, applied_at FROM schema_migrations ORDER BY version`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var version, at int64
		var name string
		if err := rows.Scan(&version, &name, &at); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%d %s %d", version, name, at))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
