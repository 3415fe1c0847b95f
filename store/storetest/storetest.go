// Package storetest is the store's test suite, run on any database: the root module runs it
// on SQLite (store's tests) and cmd/waybill-pg on PostgreSQL, each test on a fresh database.
package storetest

import (
	"context"
	"database/sql"
	"sync"
	"testing"

	"github.com/waybill/waybill/billing"
	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/store"
	"github.com/waybill/waybill/store/internal/groupcommit"
)

// Opener opens a fresh, migrated, empty database for one test and closes it when the test ends.
// It also returns a plain pool on the same database, through which tests read and damage the
// rows that the store's own methods do not show.
type Opener func(t testing.TB) (*store.DB, *sql.DB)

// open is the Opener of the suite running; Run sets it.
var open Opener

// plain holds the plain pool of each database the suite opened.
var plain sync.Map // *store.DB → *sql.DB

// sqlOf is db's plain pool.
func sqlOf(db *store.DB) *sql.DB {
	p, _ := plain.Load(db)
	return p.(*sql.DB)
}

// inTx runs fn in a transaction of db's plain pool.
func inTx(ctx context.Context, db *store.DB, fn func(ctx context.Context, tx *sql.Tx) error) error {
	return groupcommit.RunTx(ctx, sqlOf(db), fn)
}

// newAccount creates the account acme on db for a test.
func newAccount(t testing.TB, db *store.DB) store.Account {
	t.Helper()
	acct, err := db.CreateAccount(context.Background(), "acme", "")
	if err != nil {
		t.Fatal(err)
	}
	return acct
}

// openTest opens a fresh database for the test.
func openTest(t testing.TB) *store.DB {
	t.Helper()
	return register(open(t))
}

// register keeps db's plain pool raw for sqlOf, and returns db.
func register(db *store.DB, raw *sql.DB) *store.DB {
	plain.Store(db, raw)
	return db
}

// tests is the suite, by name.
var tests = []struct {
	name string
	fn   func(t *testing.T)
}{
	{"Tokens", testTokens},
	{"VoidRule", testVoidRule},
	{"ImportRule", testImportRule},
	{"PollRule", testPollRule},
	{"RecordChecksums", testRecordChecksums},
	{"VoidWaitsForTheQueue", testVoidWaitsForTheQueue},
	{"ListByBrand", testListByBrand},
	{"Bootstrap", testBootstrap},
	{"CreateAccountMakesBillingProfile", testCreateAccountMakesBillingProfile},
	{"BillFinishedLabel", testBillFinishedLabel},
	{"BillFinishedLabelVoidedAndUnknown", testBillFinishedLabelVoidedAndUnknown},
	{"BillInsuredLabel", testBillInsuredLabel},
	{"BillAfterFinalize", testBillAfterFinalize},
	{"WeeklyPeriods", testWeeklyPeriods},
	{"DeferredCents", testDeferredCents},
	{"FinalizeOnce", testFinalizeOnce},
	{"BillingInvariants", testBillingInvariants},
	{"InvoiceNumbersGapless", testInvoiceNumbersGapless},
	{"ClaimImportsConcurrently", testClaimImportsConcurrently},
	{"ClaimBatchItemsConcurrently", testClaimBatchItemsConcurrently},
	{"CompleteImportsBatch", testCompleteImportsBatch},
	{"InvoiceDocumentsRenderedOnce", testInvoiceDocumentsRenderedOnce},
	{"InvoiceDocumentsBackfilled", testInvoiceDocumentsBackfilled},
	{"UpdateBillingProfile", testUpdateBillingProfile},
	{"ShipmentRates", testShipmentRates},
	{"BuyConcurrently", testBuyConcurrently},
	{"LabelChangesConcurrently", testLabelChangesConcurrently},
	{"PutProfileConcurrently", testPutProfileConcurrently},
	{"WebhookGoneRacesPatch", testWebhookGoneRacesPatch},
	{"ConcurrentChangesKeepEachOther", testConcurrentChangesKeepEachOther},
	{"CarrierVersions", testCarrierVersions},
	{"CarrierVersionsReadOnlyWhatTheyNeed", testCarrierVersionsReadOnlyWhatTheyNeed},
	{"TrackingNumberTaken", testTrackingNumberTaken},
	{"TrackingRangeOverlap", testTrackingRangeOverlap},
	{"ManifestsRaceChanges", testManifestsRaceChanges},
	{"ManifestSelection", testManifestSelection},
	{"OrderShipsOnce", testOrderShipsOnce},
	{"CarrierTrackingEvent", testCarrierTrackingEvent},
	{"ClaimPollsConcurrently", testClaimPollsConcurrently},
	{"CarrierOutsideWriter", testCarrierOutsideWriter},
	{"SoldLabelVoided", testSoldLabelVoided},
	{"PurchaseHold", testPurchaseHold},
	{"PurchaseTellsSubscribers", testPurchaseTellsSubscribers},
	{"BoughtAnswers", testBoughtAnswers},
	{"Verify", testVerify},
}

// Run runs every test of the suite as a subtest of t, each on a database from open. Calls of
// Run must not overlap (the suite's tests share open).
func Run(t *testing.T, opener Opener) {
	open = opener
	for _, tt := range tests {
		t.Run(tt.name, tt.fn)
	}
}

// tracking records tracking events in db, billing the labels they finish, as the service does.
func tracking(db *store.DB) shipping.Tracking[billing.Ledger] {
	return shipping.Tracking[billing.Ledger]{Store: db, Bill: billing.BillFinishedLabel}
}
