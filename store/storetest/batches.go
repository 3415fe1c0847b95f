package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/store"
)

// testClaimBatchItemsConcurrently races claimers of two accounts' batches: every item is
// claimed once and completed once, and each batch completes exactly when its last item does.
func testClaimBatchItemsConcurrently(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	var accounts []store.Account
	for _, name := range []string{"acme", "globex"} {
		acct, err := db.CreateAccount(ctx, name, "")
		if err != nil {
			t.Fatal(err)
		}
		accounts = append(accounts, acct)
	}
	const perBatch, workers = 90, 6
	var batches []string
	for i, acct := range append(accounts, accounts[0]) {
		b := &shipping.Batch{ID: db.NewID(), AccountID: acct.ID, Buy: shipping.BatchBuyNone, Count: perBatch,
			CreatedAt: shipping.Timestamp{Time: time.Now()}}
		items := make([]shipping.NewBatchItem, perBatch)
		for j := range perBatch {
			items[j] = shipping.NewBatchItem{ShipmentID: db.NewID(), Body: fmt.Sprintf(`{"n": %d}`, j)}
		}
		if err := shipping.CreateBatch(ctx, db, b, items, "https://example.com/batch-labels"); err != nil {
			t.Fatalf("CreateBatch %d: %v", i, err)
		}
		batches = append(batches, b.ID)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	claimed := map[string]int{}
	completions := 0
	for range workers {
		wg.Go(func() {
			claimer := &shipping.BatchWorker{Store: db, Lease: time.Hour, ClaimSize: 8}
			for {
				claims, err := claimer.Claim(ctx)
				if err != nil {
					t.Errorf("ClaimBatchItems: %v", err)
					return
				}
				if len(claims) == 0 {
					return
				}
				for _, c := range claims {
					o := shipping.ItemOutcome{Status: shipping.ItemCreated, ShipmentID: c.ShipmentID}
					err := db.CompleteBatchItem(ctx, c, o, nil)
					if errors.Is(err, shipping.ErrLastItem) {
						mu.Lock()
						completions++
						mu.Unlock()
						err = completeBatch(ctx, db, c, o)
					}
					if err != nil {
						t.Errorf("CompleteBatchItem: %v", err)
						return
					}
					mu.Lock()
					claimed[fmt.Sprint(c.BatchID, "/", c.Index)]++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if len(claimed) != perBatch*len(batches) {
		t.Errorf("%d items claimed; want %d", len(claimed), perBatch*len(batches))
	}
	for k, n := range claimed {
		if n != 1 {
			t.Errorf("item %s claimed %d times", k, n)
		}
	}
	if completions != len(batches) {
		t.Errorf("%d batch completions; want %d", completions, len(batches))
	}
	for i, id := range batches {
		acct := accounts[0].ID
		if i == 1 {
			acct = accounts[1].ID
		}
		b, err := db.Batch(ctx, acct, id)
		if err != nil {
			t.Fatal(err)
		}
		if b.Status != shipping.BatchCompleted || b.Created != perBatch || b.CompletedAt == nil {
			t.Errorf("batch %d = %s, %d created; want COMPLETED with %d", i, b.Status, b.Created, perBatch)
		}
		if _, err := db.Batch(ctx, accounts[1-min(i, 1)].ID, id); err != store.ErrNotFound && i != 2 {
			t.Errorf("batch %d read by the other account: %v; want ErrNotFound", i, err)
		}
	}
}

// completeBatch completes the batch whose last item, claimed as c, ends with o, as the worker
// does.
func completeBatch(ctx context.Context, db *store.DB, c shipping.BatchClaim, o shipping.ItemOutcome) error {
	b, err := db.Batch(ctx, c.AccountID, c.BatchID)
	if err != nil {
		return err
	}
	done, err := b.Complete(c, o, db.Now(), "https://example.com/batch-labels")
	if err != nil {
		return err
	}
	return db.CompleteBatchItem(ctx, c, o, done)
}
