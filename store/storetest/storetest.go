// Package storetest is the store's test suite, run on any database: the root module runs it
// on SQLite (store's tests) and cmd/waybill-pg on PostgreSQL, each test on a fresh database.
package storetest

import (
	"context"
	"testing"

	"github.com/waybill/waybill/store"
)

// Opener opens a fresh, migrated, empty database for one test and closes it when the test ends.
type Opener func(t testing.TB) *store.DB

// open is the Opener of the suite running; Run sets it.
var open Opener

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
	return open(t)
}

// tests is the suite, by name.
var tests = []struct {
	name string
	fn   func(t *testing.T)
}{
	{"OffsetList", testOffsetList},
	{"KeysetList", testKeysetList},
	{"Tokens", testTokens},
	{"Bootstrap", testBootstrap},
	{"CreateAccountMakesBillingProfile", testCreateAccountMakesBillingProfile},
	{"BillFinishedLabel", testBillFinishedLabel},
	{"BillFinishedLabelVoidedAndUnknown", testBillFinishedLabelVoidedAndUnknown},
	{"BillInsuredLabel", testBillInsuredLabel},
	{"BillLegacyRateMetadata", testBillLegacyRateMetadata},
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
}

// Run runs every test of the suite as a subtest of t, each on a database from open. Calls of
// Run must not overlap (the suite's tests share open).
func Run(t *testing.T, opener Opener) {
	open = opener
	for _, tt := range tests {
		t.Run(tt.name, tt.fn)
	}
}
