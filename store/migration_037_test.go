package store

import (
	"context"
	"strings"
	"testing"
)

// TestOutlineBeforeCard: migration 037 rebuilds carrier_versions on SQLite with outline before
// card, so that reading a version's outline does not walk its card's overflow pages (a PUT's
// cost grew with every version stored); the versions stored before read back as they were.
func TestOutlineBeforeCard(t *testing.T) {
	ctx := context.Background()
	db, path := openAt(t)
	// The table as migration 026 left it (outline last), holding a version stored then.
	db = reopenBefore(t, db, path, 37, `DROP TABLE carrier_versions`,
		`CREATE TABLE carrier_versions (carrier TEXT NOT NULL REFERENCES carriers (code), version BIGINT NOT NULL,
			effective_from TEXT NOT NULL, created_at BIGINT NOT NULL, card TEXT NOT NULL, outline TEXT,
			PRIMARY KEY (carrier, version))`,
		`INSERT INTO carriers (code, deleted, next_serial, created_at, updated_at) VALUES ('ACME', FALSE, 0, 1, 1)`,
		`INSERT INTO carrier_versions (carrier, version, effective_from, created_at, card, outline)
			VALUES ('ACME', 1, '2026-01-01', 1, '{"code":"ACME","name":"Acme"}',
			'{"name":"Acme Express","tracking":{},"services":[{"code":"GROUND","name":"Ground"}]}')`)
	rows, err := db.r.QueryContext(ctx, `SELECT name FROM pragma_table_info('carrier_versions') ORDER BY cid`)
	if err != nil {
		t.Fatal(err)
	}
	var columns []string
	for rows.Next() {
		var c string
		rows.Scan(&c)
		columns = append(columns, c)
	}
	rows.Close()
	if got := strings.Join(columns, ","); got != "carrier,version,effective_from,created_at,outline,card" {
		t.Errorf("after migration 037 carrier_versions has columns %s; want outline before card", got)
	}
	c, err := db.Carrier(ctx, "ACME")
	if err != nil || len(c.Versions) != 1 || c.Versions[0].Card.Name != "Acme Express" || c.Versions[0].Card.Services[0].Code != "GROUND" {
		t.Fatalf("the version stored before reads %+v, %v; want its outline", c, err)
	}
	card, err := c.Versions[0].Load(ctx)
	if err != nil || card.Name != "Acme" {
		t.Errorf("its card reads %+v, %v; want the card stored", card, err)
	}
}
