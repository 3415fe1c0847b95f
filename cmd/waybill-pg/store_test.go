package main

import (
	"context"
	"testing"

	"github.com/waybill/waybill/store"
	"github.com/waybill/waybill/store/storetest"
)

// TestStore runs the whole store suite on PostgreSQL, each test in a fresh schema.
func TestStore(t *testing.T) {
	storetest.Run(t, openFresh)
}

// TestTokenRevokedElsewhere: two handles on one PostgreSQL schema, as two processes.
func TestTokenRevokedElsewhere(t *testing.T) {
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
	storetest.TokenRevokedElsewhere(t, dbs[0], dbs[1])
}
