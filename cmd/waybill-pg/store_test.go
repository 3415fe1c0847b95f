package main

import (
	"context"
	"database/sql"
	"testing"

	"github.com/waybill/waybill/store"
	"github.com/waybill/waybill/store/storetest"
)

// TestStore runs the whole store suite on PostgreSQL, each test in a fresh schema.
func TestStore(t *testing.T) {
	storetest.Run(t, openFreshPlain)
}

// twoHandles opens two handles on one fresh PostgreSQL schema, as two processes.
func twoHandles(t *testing.T) (here, there *store.DB) {
	url := freshSchema(t)
	var dbs [2]*store.DB
	for i := range dbs {
		db, err := open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		dbs[i] = db
	}
	return dbs[0], dbs[1]
}

func TestTokenRevokedElsewhere(t *testing.T) {
	here, there := twoHandles(t)
	storetest.TokenRevokedElsewhere(t, here, there)
}

// TestSerialsAcrossHandles: two processes allocating one carrier's tracking serials at once.
func TestPurchaseAcrossHandles(t *testing.T) {
	here, there := twoHandles(t)
	storetest.PurchaseAcrossHandles(t, here, there)
}

func TestSerialsAcrossHandles(t *testing.T) {
	here, there := twoHandles(t)
	storetest.SerialsAcrossHandles(t, here, there)
}

// TestLegibleRecords runs migration 028 on rows as the code before it stored them.
func TestLegibleRecords(t *testing.T) {
	url := freshSchema(t)
	reopen := func() (*store.DB, *sql.DB) {
		db, err := open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db, plainPG(t, url)
	}
	storetest.LegibleRecords(t, reopen)
}

// TestTodaysShapes runs migration 039 on rows stored in the shapes it rewrites.
func TestTodaysShapes(t *testing.T) {
	url := freshSchema(t)
	storetest.TodaysShapes(t, func() (*store.DB, *sql.DB) {
		db, err := open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db, plainPG(t, url)
	})
}

// TestMigrateTwice: a second open applies no migration again.
func TestMigrateTwice(t *testing.T) {
	url := freshSchema(t)
	storetest.MigrateTwice(t, func() (*store.DB, *sql.DB) {
		db, err := open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db, plainPG(t, url)
	})
}
