package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/waybill/waybill/cmd/internal/cli"
	"github.com/waybill/waybill/cmd/internal/clitest"
)

// TestMain lets a purchase test run this test binary as a host program embedding waybill on
// PostgreSQL (clitest.HostMain).
func TestMain(m *testing.M) {
	clitest.HostMain(open)
	os.Exit(m.Run())
}

// hostToken makes an account on the database at url and returns a token of it for a host's
// API: WRITE_SHIPMENTS and ADMIN.
func hostToken(t *testing.T, url string) string {
	t.Helper()
	db, err := open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	acct, err := db.CreateAccount(context.Background(), "Host", "")
	if err != nil {
		t.Fatal(err)
	}
	tok, err := db.CreateToken(context.Background(), acct.ID, []string{"READ_SHIPMENTS", "WRITE_SHIPMENTS", "ADMIN"})
	if err != nil {
		t.Fatal(err)
	}
	return tok.Token
}

// TestCrashBetweenSaleAndRecord: on PostgreSQL, a host killed between its carrier's sale and
// the record loses no label and buys none twice (clitest.CrashBetweenSaleAndRecord).
func TestCrashBetweenSaleAndRecord(t *testing.T) {
	url := freshSchema(t)
	clitest.CrashBetweenSaleAndRecord(t, url, hostToken(t, url), func(labelID, code string) error {
		return cli.Run(context.Background(), postgres, []string{"purchase", "resolve", labelID, "-tracking", code, "-db", url},
			func(string) string { return "" }, nil, io.Discard, io.Discard)
	})
}

// TestSoldOnceAcrossProcesses: on PostgreSQL, 20 buys of one shipment in two processes reach
// the carrier once (clitest.SoldOnce).
func TestSoldOnceAcrossProcesses(t *testing.T) {
	url := freshSchema(t)
	clitest.SoldOnce(t, url, hostToken(t, url), filepath.Join(t.TempDir(), "ledger"))
}
