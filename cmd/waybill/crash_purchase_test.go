package main

import (
	"context"
	"io"
	"path/filepath"
	"testing"

	"github.com/waybill/waybill/cmd/internal/clitest"
)

// TestCrashBetweenSaleAndRecord: on SQLite, a host killed between its carrier's sale and the
// record loses no label and buys none twice (clitest.CrashBetweenSaleAndRecord).
func TestCrashBetweenSaleAndRecord(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test: starts and kills server processes")
	}
	dbPath := filepath.Join(t.TempDir(), "waybill.db")
	_, token := createAccount(t, dbPath, "Host", "READ_SHIPMENTS,WRITE_SHIPMENTS,ADMIN")
	clitest.CrashBetweenSaleAndRecord(t, dbPath, token, func(labelID, code string) error {
		return run(context.Background(), []string{"purchase", "resolve", labelID, "-tracking", code, "-db", dbPath},
			env(nil), nil, io.Discard, io.Discard)
	})
}

// TestSoldOnceAcrossProcesses: on SQLite, 20 buys of one shipment in two processes reach the
// carrier once (clitest.SoldOnce).
func TestSoldOnceAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	dbPath := filepath.Join(t.TempDir(), "waybill.db")
	_, token := createAccount(t, dbPath, "Host", "READ_SHIPMENTS,WRITE_SHIPMENTS,ADMIN")
	clitest.SoldOnce(t, dbPath, token, filepath.Join(t.TempDir(), "ledger"))
}
