package shipping

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/waybill/waybill/shipping/work"
)

// BatchClaim is a batch item a worker holds the lease of, with what it needs from its batch.
type BatchClaim struct {
	BatchID     string
	Index       int
	AccountID   string
	ShipmentID  string
	Body        string
	Buy         string
	LabelFormat string
	// Attempts counts claims including this one; it also fences the completion.
	Attempts int
}

// BatchItemKey is the Idempotency-Key of a batch item's buy: derived from the item, so every
// run of the item asks with the same key.
func BatchItemKey(batchID string, index int) string {
	return fmt.Sprintf("waybill-batch:%s:%d", batchID, index)
}

// ItemOutcome is how a claimed item ended: its status (CREATED, PURCHASED or FAILED), the
// shipment it made (empty if none) and, for FAILED, its error in the API's shape.
type ItemOutcome struct {
	Status     string
	ShipmentID string
	Errors     json.RawMessage
}

// ErrStaleClaim reports a batch item claim that is no longer held: its lease expired and the
// item was claimed again.
var ErrStaleClaim = errors.New("batch item claim is stale")

// ErrLastItem is the store's answer to an item completed without its batch's completion that
// turns out to be the batch's last: nothing is written, and the worker completes it again with
// the batch's completion.
var ErrLastItem = errors.New("the item is its batch's last")

// ErrMalformedItem reports a batch item whose body does not decode. Items are checked when
// their batch is posted, so it is not expected; it is a refusal.
var ErrMalformedItem = errors.New("the item does not decode")

// BatchStore is what the batch worker needs persisted.
type BatchStore interface {
	// BatchAccounts lists the accounts with a batch in progress, in a stable order.
	BatchAccounts(ctx context.Context) ([]string, error)
	// ClaimBatchItems leases up to n of the account's due items until lease ends: those whose
	// lease expired first, then its queue in order. Each becomes PROCESSING with its attempts
	// counted up.
	ClaimBatchItems(ctx context.Context, accountID string, n int, lease time.Duration) ([]BatchClaim, error)
	// CompleteBatchItem ends a claimed item with its outcome and counts it off its batch, in
	// one transaction. done is the batch's completion, for an item that is the batch's last:
	// the batch is then COMPLETED at done.At and BATCH_COMPLETED emitted with done.Payload.
	// Without done, an item that turns out to be the last is ErrLastItem, and nothing is
	// written. ErrStaleClaim when the item was claimed again since.
	CompleteBatchItem(ctx context.Context, c BatchClaim, o ItemOutcome, done *BatchCompletion) error
	// Batch reads one of the account's batches with its items, tallied.
	Batch(ctx context.Context, accountID, id string) (*Batch, error)
	// Shipment reads one of the account's shipments; ErrNotFound when there is none.
	Shipment(ctx context.Context, accountID, id string) (*Shipment, error)
}

// ItemShipments turns a batch item's body into the shipment to create (ingest.BatchItems).
type ItemShipments interface {
	// ItemShipment is the shipment to create for the item claimed as c, under c.ShipmentID;
	// ErrMalformedItem when its body does not decode.
	ItemShipment(ctx context.Context, c BatchClaim) (NewShipment, error)
}

// ShipmentCreator is the one create path (Creator), so every rule of POST /shipments applies
// to an item.
type ShipmentCreator interface {
	Create(ctx context.Context, n NewShipment) (*Shipment, string, error)
}

// LabelBuyer is the one buy path (Buyer), so every rule of a buy applies to an item.
type LabelBuyer interface {
	Buy(ctx context.Context, r BuyRequest) (Bought, error)
}

// BatchWorker works batch items: it claims them fairly between accounts (each account with a
// batch in progress gets an equal part of a claim, its turn first in rotation), works Parallel
// at once, and records each outcome. An item is worked again after its lease if its work fails
// by the machinery (RetryItem); a refusal fails it at once.
type BatchWorker struct {
	Store   BatchStore
	Items   ItemShipments
	Creator ShipmentCreator
	Buyer   LabelBuyer
	// ItemErrors is a failed item's error in the API's error shape, as the item shows it.
	ItemErrors func(err error) (json.RawMessage, error)
	// Link is the URL of a batch's label document (Batch.Linked).
	Link      func(batchID string) string
	Now       func() time.Time
	Lease     time.Duration // how long a claim holds an item
	ClaimSize int           // how many items a pass claims
	Parallel  int           // how many items are worked at once
	Wake      <-chan struct{}
	Every     time.Duration
	Log       *slog.Logger

	turn atomic.Int64
}

// ErrItemInterrupted is the error of an item claimed again after MaxItemAttempts attempts that
// never ended: one that keeps taking its process down must not take it down forever.
var ErrItemInterrupted = errors.New("processing the item was interrupted too many times")

func (w *BatchWorker) log() *slog.Logger {
	if w.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return w.Log
}

// Run works batch items whenever woken and every Every, until ctx ends.
func (w *BatchWorker) Run(ctx context.Context) {
	work.Loop{Every: w.Every, Idle: work.IdleWait, Wake: w.Wake, Log: w.log(), Name: "batch worker"}.Run(ctx,
		func(ctx context.Context) error { return w.Drain(ctx, w.Parallel) })
}

// Drain works every due item, parallel at once, then returns. Claimed items are worked to the
// end even when ctx ends meanwhile (a graceful shutdown), so that they need not wait for their
// leases after a restart; within half a lease, then they are left to their leases.
func (w *BatchWorker) Drain(ctx context.Context, parallel int) error {
	for ctx.Err() == nil {
		claims, err := w.Claim(ctx)
		if err != nil || len(claims) == 0 {
			return err
		}
		wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		stop := context.AfterFunc(ctx, func() { time.AfterFunc(w.Lease/2, cancel) })
		next := make(chan BatchClaim)
		var wg sync.WaitGroup
		var mu sync.Mutex
		var failed error
		for range min(parallel, len(claims)) {
			wg.Go(func() {
				for c := range next {
					if err := w.finish(wctx, c); err != nil {
						mu.Lock()
						failed = errors.Join(failed, err)
						mu.Unlock()
					}
				}
			})
		}
		for _, c := range claims {
			next <- c
		}
		close(next)
		wg.Wait()
		stop()
		cancel()
		if failed != nil {
			// The failed items' leases expire and they are worked again; meanwhile the rest
			// of the queue is not held up by them.
			w.log().Error("batch items", "err", failed)
		}
	}
	return nil
}

// Claim claims up to ClaimSize items, an equal part (at least one) for each account with a
// batch in progress, the accounts taking turns being first for when there are more of them
// than ClaimSize: one account's huge batch never holds back another's.
func (w *BatchWorker) Claim(ctx context.Context) ([]BatchClaim, error) {
	accounts, err := w.Store.BatchAccounts(ctx)
	if err != nil || len(accounts) == 0 {
		return nil, err
	}
	per := work.Share(w.ClaimSize, len(accounts))
	turn := int(w.turn.Add(1))
	var claims []BatchClaim
	for i := range accounts {
		n := min(per, w.ClaimSize-len(claims))
		if n <= 0 {
			break
		}
		got, err := w.Store.ClaimBatchItems(ctx, accounts[(i+turn)%len(accounts)], n, w.Lease)
		if err != nil {
			return claims, err
		}
		claims = append(claims, got...)
	}
	return claims, nil
}

// finish works one claimed item and records its outcome. Whether an error fails the item or
// leaves it claimed, to be worked again when its lease expires, is RetryItem's rule.
func (w *BatchWorker) finish(ctx context.Context, c BatchClaim) error {
	o, err := w.work(ctx, c)
	if err != nil {
		if RetryItem(err, c.Attempts) {
			return err
		}
		if !Refused(err) {
			w.log().Error("batch item failed", "batch", c.BatchID, "index", c.Index, "attempts", c.Attempts, "err", err)
		}
		o.Status = ItemFailed
		if o.Errors, err = w.ItemErrors(err); err != nil {
			return err
		}
	}
	err = w.Store.CompleteBatchItem(ctx, c, o, nil)
	if errors.Is(err, ErrLastItem) {
		// Its last item: the batch is done, as it reads now with this item's outcome.
		var done *BatchCompletion
		if done, err = w.completion(ctx, c, o); err == nil {
			err = w.Store.CompleteBatchItem(ctx, c, o, done)
		}
	}
	if errors.Is(err, ErrStaleClaim) {
		return nil // claimed again after its lease expired: that claim completes it
	}
	return err
}

// completion is the completion of the batch whose last item, claimed as c, ends with o.
func (w *BatchWorker) completion(ctx context.Context, c BatchClaim, o ItemOutcome) (*BatchCompletion, error) {
	b, err := w.Store.Batch(ctx, c.AccountID, c.BatchID)
	if err != nil {
		return nil, err
	}
	return b.Complete(c, o, w.Now(), w.Link(c.BatchID))
}

// work creates the item's shipment under the id decided for it, unless a run before this one
// did, and buys its rate, unless it is bought. Run again after a crash, it finds and reuses what
// was done. On an error, the outcome names the shipment the item made, if it made one.
func (w *BatchWorker) work(ctx context.Context, c BatchClaim) (ItemOutcome, error) {
	var item struct {
		BuyCheapestRate bool `json:"buy_cheapest_rate"`
	}
	if err := json.Unmarshal([]byte(c.Body), &item); err != nil { // checked when posted: not expected
		return ItemOutcome{}, fmt.Errorf("the item does not decode: %w", err)
	}
	s, err := w.Store.Shipment(ctx, c.AccountID, c.ShipmentID)
	if err == nil && s.Status == StatusPurchased {
		return ItemOutcome{Status: ItemPurchased, ShipmentID: s.ID}, nil
	}
	if ItemInterrupted(c.Attempts) {
		var made ItemOutcome
		if s != nil {
			made.ShipmentID = s.ID
		}
		return made, ErrItemInterrupted
	}
	if errors.Is(err, ErrNotFound) {
		if s, err = w.create(ctx, c); err != nil {
			// A run of the item whose lease expired may have created it meanwhile.
			if again, gerr := w.Store.Shipment(ctx, c.AccountID, c.ShipmentID); gerr == nil {
				s, err = again, nil
			}
		}
	}
	if err != nil {
		return ItemOutcome{}, err
	}
	made := ItemOutcome{ShipmentID: s.ID, Status: ItemPurchased}
	if s.Status == StatusPurchased {
		return made, nil
	}
	rate, ok := BatchRate(s.ShippingRates, c.Buy, item.BuyCheapestRate)
	if !ok {
		made.Status = ItemCreated
		return made, nil
	}
	req := BuyRequest{AccountID: c.AccountID, ShipmentID: s.ID, RateID: rate.ID}
	if _, err := w.Buyer.Buy(ctx, req.Keyed(BatchItemKey(c.BatchID, c.Index), false)); err != nil {
		made.Status = ""
		return made, err
	}
	return made, nil
}

// create creates the item's shipment through the one create path.
func (w *BatchWorker) create(ctx context.Context, c BatchClaim) (*Shipment, error) {
	n, err := w.Items.ItemShipment(ctx, c)
	if err != nil {
		return nil, err
	}
	s, _, err := w.Creator.Create(ctx, n)
	return s, err
}
