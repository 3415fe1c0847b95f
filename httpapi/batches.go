package httpapi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/waybill/waybill/ingest"
	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/shipping/work"
	"github.com/waybill/waybill/store"
)

// batchState is the batches' side of the API: the worker's settings and the channel on which
// POST /batches wakes it.
type batchState struct {
	wake chan struct{}
	// lease is how long a claimed item is held; an item whose worker died is claimed again
	// after it. claim is how many items a pass claims, parallel how many are worked at once.
	lease           time.Duration
	claim, parallel int
	turn            atomic.Int64
}

// docBatchLabels is the kind of a batch's label document URL.
const docBatchLabels = "batch_labels"

func (a *API) setupBatches() error {
	a.batches = &batchState{wake: make(chan struct{}, 1), lease: 10 * time.Second, claim: 32, parallel: a.batchParallel()}
	// The drain step works items one at a time, so the IDs they draw come in one order (the
	// golden files); Run works several at once.
	drain := func(ctx context.Context) error { return a.drainBatches(ctx, 1) }
	a.workers = append(a.workers, worker{name: "batch", run: a.runBatches, drain: drain})
	return nil
}

// batchParallel is how many items the worker works at once: on SQLite their transactions
// share group commits (a 1,000-item batch took 5.8 s with 4, 2.5 to 4.5 s with 8; see
// docs/performance.md), on PostgreSQL each is a connection of its own.
func (a *API) batchParallel() int { return 8 }

// batchRequest is the body of POST /batches.
type batchRequest struct {
	Shipments   []json.RawMessage `json:"shipments"`
	Buy         string            `json:"buy"`
	LabelFormat string            `json:"label_format"`
}

// batchItemRequest is one shipment of a batch: a POST /shipments body, or an order's
// shipment (order_id beside the fields of POST /orders/{id}/shipments).
type batchItemRequest struct {
	OrderID *string `json:"order_id"`
	orderShipmentRequest
}

// createBatch: POST /batches stores the batch and its items and answers 202 once they are
// durable, with the batch as GET /batches/{id} shows it; the worker does the rest. Only what is
// wrong with the batch itself refuses it (400); an item that fails its checks is stored FAILED
// at once, with its errors at its own paths, and the others proceed (DESIGN §16).
func (a *API) createBatch(w http.ResponseWriter, r *http.Request) error {
	var req batchRequest
	if err := readJSON(w, r, &req); err != nil {
		return err
	}
	buy, err := shipping.ValidateBatch(len(req.Shipments), req.Buy, req.LabelFormat)
	if err != nil {
		return err
	}
	now := a.db.Now().UTC()
	b := &shipping.Batch{ID: a.db.NewID(), AccountID: accountID(r), Buy: buy, LabelFormat: req.LabelFormat,
		Count: len(req.Shipments), CreatedAt: shipping.Timestamp{Time: now}}
	items := make([]store.NewBatchItem, len(req.Shipments))
	for i, raw := range req.Shipments {
		items[i] = store.NewBatchItem{ShipmentID: a.db.NewID(), Body: string(raw)}
		if err := checkBatchItem(raw, now); err != nil {
			if items[i].Errors, err = itemErrors(err); err != nil {
				return err
			}
		}
	}
	if err := a.db.CreateBatch(r.Context(), b, items, func(b *shipping.Batch) any { return a.batchView(b) }); err != nil {
		return err
	}
	select {
	case a.batches.wake <- struct{}{}:
	default: // the worker is already due to look
	}
	writeData(w, http.StatusAccepted, a.batchView(b))
	return nil
}

// checkBatchItem checks one item as far as it can be known before the worker reads its order:
// its shape strictly (an unknown field is an *Error), then its fields, at the item's own paths.
func checkBatchItem(raw json.RawMessage, today time.Time) error {
	if t := strings.TrimSpace(string(raw)); !strings.HasPrefix(t, "{") {
		return &shipping.ValidationError{Fields: []shipping.FieldError{{Field: "(item)", Code: "invalid_type",
			Message: "must be an object"}}}
	}
	var item batchItemRequest
	if err := decodeStrict(raw, &item); err != nil {
		return err
	}
	var v shipping.ValidationError
	var err error
	if item.OrderID != nil {
		if *item.OrderID == "" || len(*item.OrderID) > 255 {
			v.Add("order_id", "invalid", "must be an order's id")
		}
		err = ingest.CheckShipmentFields(item.ShipmentRequest, today)
	} else {
		if item.FulfillmentOrderID != "" {
			v.Add("fulfillment_order_id", "not_allowed", "is for an item with an order_id")
		}
		if item.Additional {
			v.Add("additional", "not_allowed", "is for an item with an order_id")
		}
		_, err = item.ShipmentRequest.Validate(today)
	}
	var fields *shipping.ValidationError
	if errors.As(err, &fields) {
		v.Fields = append(v.Fields, fields.Fields...)
	} else if err != nil {
		return err
	}
	return v.Err()
}

// itemErrors is a FAILED item's errors: err in the API's error shape, the object an answer's
// "errors" holds.
func itemErrors(err error) (json.RawMessage, error) {
	return json.Marshal(errorShape(errorFor(err)))
}

// batchView is a batch as the API shows it: with label_url once it is COMPLETED with a label.
func (a *API) batchView(b *shipping.Batch) *shipping.Batch {
	if b.Status == shipping.BatchCompleted && b.Purchased > 0 {
		u := a.baseURL + "/documents/batches/" + b.ID + "/" + a.docs.sign(docBatchLabels, b.ID)
		b.LabelURL = &u
	}
	return b
}

// getBatch: GET /batches/{id}, with every item in order.
func (a *API) getBatch(w http.ResponseWriter, r *http.Request) error {
	b, err := a.db.Batch(r.Context(), accountID(r), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, a.batchView(b))
	return nil
}

// listBatches: GET /batches, newest first, each batch tallied but without its items.
func (a *API) listBatches(w http.ResponseWriter, r *http.Request) error {
	p, err := parsePage(r.URL.Query())
	if err != nil {
		return err
	}
	l, err := a.db.ListBatches(r.Context(), accountID(r), p)
	if err != nil {
		return err
	}
	for _, b := range l.Items {
		a.batchView(b)
	}
	writeList(w, l.Items, offsetMeta(p, l))
	return nil
}

// batchLabelsOf serves a batch's label document through its capability URL: every purchased
// label in the batch's order, one PDF page each, or one ZPL stream when every label is ZPL.
func (a *API) batchLabelsOf(w http.ResponseWriter, r *http.Request, id string) error {
	ctx := r.Context()
	acct, err := a.db.BatchAccount(ctx, id)
	if err != nil {
		return err
	}
	b, err := a.db.Batch(ctx, acct, id)
	if err != nil {
		return err
	}
	if b.Status != shipping.BatchCompleted || b.Purchased == 0 {
		return store.ErrNotFound // no document yet, or none to make
	}
	var ids []string
	for _, it := range b.Items {
		if it.Status == shipping.ItemPurchased {
			ids = append(ids, *it.ShipmentID)
		}
	}
	shipments, err := a.db.Shipments(ctx, acct, ids)
	if err != nil {
		return err
	}
	docs := make([]shipping.LabelDocument, 0, len(shipments))
	formats := make([]string, 0, len(shipments))
	for _, s := range shipments {
		if s.ShippingLabel != nil {
			docs = append(docs, a.labelDocument(s, s.ShippingLabel))
			formats = append(formats, s.ShippingLabel.LabelFormat)
		}
	}
	format := shipping.BatchDocumentFormat(formats)
	var body []byte
	contentType := shipping.ContentTypePDF
	if format == shipping.LabelFormatZPL {
		body, err = shipping.LabelsZPL(docs)
		contentType = shipping.ContentTypeZPL
	} else {
		body, err = shipping.LabelsPDF(docs)
	}
	if err != nil {
		return err
	}
	sum := sha256.Sum256(body)
	serveDocument(w, r, document{body: body, contentType: contentType, etag: hex.EncodeToString(sum[:]),
		filename: "batch-" + b.ID + shipping.LabelFileExtension(format), attachment: format == shipping.LabelFormatZPL})
	return nil
}

// runBatches works batch items until ctx ends: whenever woken, and every poll.
func (a *API) runBatches(ctx context.Context) error {
	work.Loop{Every: 200 * time.Millisecond, Wake: a.batches.wake, Log: a.workerLog("batch"), Name: "batch worker"}.Run(ctx,
		func(ctx context.Context) error { return a.drainBatches(ctx, a.batches.parallel) })
	return nil
}

// drainBatches works every due item, parallel at once, then returns.
func (a *API) drainBatches(ctx context.Context, parallel int) error {
	st := a.batches
	for ctx.Err() == nil {
		claims, err := a.db.ClaimBatchItems(ctx, st.lease, st.claim, int(st.turn.Add(1)))
		if err != nil || len(claims) == 0 {
			return err
		}
		// Claimed items are worked to the end even when ctx ends meanwhile (a graceful
		// shutdown), so that they need not wait for their leases after a restart; within
		// half a lease, then they are left to their leases.
		wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		stop := context.AfterFunc(ctx, func() { time.AfterFunc(st.lease/2, cancel) })
		next := make(chan store.BatchClaim)
		var wg sync.WaitGroup
		var mu sync.Mutex
		var first error
		for range min(parallel, len(claims)) {
			wg.Go(func() {
				for c := range next {
					if err := a.workBatchClaim(wctx, c); err != nil {
						mu.Lock()
						first = errors.Join(first, err)
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
		if first != nil {
			// The failed items' leases expire and they are worked again; meanwhile the rest of
			// the queue is not held up by them.
			a.workerLog("batch").Error("batch items", "err", first)
		}
	}
	return nil
}

// workBatchClaim works one claimed item and records its outcome. Whether an error fails the
// item or leaves it claimed, to be worked again when its lease expires, is the domain's rule
// (shipping.RetryItem): a refusal fails it at once, a failure of the machinery after
// shipping.MaxItemAttempts attempts.
func (a *API) workBatchClaim(ctx context.Context, c store.BatchClaim) error {
	o, err := a.workBatchItem(ctx, c)
	if err != nil {
		if shipping.RetryItem(err, c.Attempts) {
			return err
		}
		if !shipping.Refused(err) {
			a.workerLog("batch").Error("batch item failed", "batch", c.BatchID, "index", c.Index, "attempts", c.Attempts, "err", err)
		}
		o.Status = shipping.ItemFailed
		if o.Errors, err = itemErrors(err); err != nil {
			return err
		}
	}
	err = a.db.CompleteBatchItem(ctx, c, o, func(b *shipping.Batch) any { return a.batchView(b) })
	if errors.Is(err, store.ErrStaleClaim) {
		return nil // claimed again after its lease expired: that claim completes it
	}
	return err
}

// errInterrupted is the error of an item claimed again after MaxItemAttempts attempts that never
// ended: one that keeps taking its process down must not take it down forever.
var errInterrupted = &Error{Status: http.StatusInternalServerError, Code: "too_many_attempts",
	Message: "processing the item was interrupted too many times"}

// workBatchItem creates the item's shipment under the id decided for it, unless a run before
// this one did, and buys its rate under the item's own Idempotency-Key, unless it is bought:
// through the one create path and the one buy path, so every rule of POST /shipments and of
// the buy applies. Run again after a crash, it finds and reuses what was done. On an error, the
// outcome names the shipment the item made, if it made one.
func (a *API) workBatchItem(ctx context.Context, c store.BatchClaim) (store.BatchItemOutcome, error) {
	var item batchItemRequest
	if err := json.Unmarshal([]byte(c.Body), &item); err != nil { // checked when posted: not expected
		return store.BatchItemOutcome{}, &Error{Status: http.StatusBadRequest, Code: "malformed_json", Message: "the item does not decode"}
	}
	s, err := a.db.Shipment(ctx, c.AccountID, c.ShipmentID)
	if err == nil && s.Status == shipping.StatusPurchased {
		return store.BatchItemOutcome{Status: shipping.ItemPurchased, ShipmentID: s.ID}, nil
	}
	if shipping.ItemInterrupted(c.Attempts) {
		var made store.BatchItemOutcome
		if s != nil {
			made.ShipmentID = s.ID
		}
		return made, errInterrupted
	}
	if errors.Is(err, store.ErrNotFound) {
		s, err = a.createBatchItem(ctx, c, &item)
		if err != nil {
			// A run of the item whose lease expired may have created it meanwhile.
			if again, gerr := a.db.Shipment(ctx, c.AccountID, c.ShipmentID); gerr == nil {
				s, err = again, nil
			}
		}
	}
	if err != nil {
		return store.BatchItemOutcome{}, err
	}
	made := store.BatchItemOutcome{ShipmentID: s.ID}
	if s.Status == shipping.StatusPurchased {
		made.Status = shipping.ItemPurchased
		return made, nil
	}
	rate, ok := shipping.BatchRate(s.ShippingRates, c.Buy, item.BuyCheapestRate)
	if !ok {
		made.Status = shipping.ItemCreated
		return made, nil
	}
	if _, _, _, err := a.buy(ctx, c.AccountID, s.ID, rate.ID, 0, false, store.BatchItemKey(c.BatchID, c.Index)); err != nil {
		return made, err
	}
	made.Status = shipping.ItemPurchased
	return made, nil
}

// createBatchItem creates an item's shipment: from its order, if it names one (an unknown
// order, or another account's, is not_found; an order a label already ships is
// order_already_shipped unless the item says additional), with the batch's label format unless
// the item gives one.
func (a *API) createBatchItem(ctx context.Context, c store.BatchClaim, item *batchItemRequest) (*shipping.Shipment, error) {
	req, order := item.ShipmentRequest, forOrder{}
	if item.OrderID != nil {
		var err error
		if req, order, err = a.orderShipment(ctx, c.AccountID, *item.OrderID, item.orderShipmentRequest); err != nil {
			return nil, err
		}
	}
	if req.LabelFormat == "" {
		req.LabelFormat = c.LabelFormat
	}
	s, _, err := a.create(ctx, c.AccountID, c.ShipmentID, order, &req)
	return s, err
}
