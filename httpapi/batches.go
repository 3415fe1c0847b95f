package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/waybill/waybill/ingest"
	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/shipping/labeldoc"
	"github.com/waybill/waybill/store"
)

// batchState is the batches' side of the API: the worker, and the channel on which POST
// /batches wakes it.
type batchState struct {
	wake   chan struct{}
	worker *shipping.BatchWorker
}

// docBatchLabels is the kind of a batch's label document URL.
const docBatchLabels = "batch_labels"

func (a *API) setupBatches() error {
	wake := make(chan struct{}, 1)
	// An item whose worker died is claimed again after its lease (10 s). Eight items are worked
	// at once: on SQLite their transactions share group commits (a 1,000-item batch took 5.8 s
	// with 4, 2.5 to 4.5 s with 8; see docs/performance.md), on PostgreSQL each is a connection
	// of its own.
	w := &shipping.BatchWorker{Store: a.db, Items: ingest.BatchItems{Store: a.db, Now: a.now}, Creator: a.ship.creator,
		Buyer: a.labels.buyer, ItemErrors: itemErrors, Link: a.batchLabelsURL, Now: a.now, Lease: 10 * time.Second,
		ClaimSize: 32, Parallel: 8, Wake: wake, Every: 200 * time.Millisecond, Log: a.workerLog("batch")}
	a.batches = &batchState{wake: wake, worker: w}
	// The drain step works items one at a time, so the IDs they draw come in one order (the
	// golden files); Run works several at once.
	a.workers = append(a.workers, worker{name: "batch", run: func(ctx context.Context) error { w.Run(ctx); return nil },
		drain: func(ctx context.Context) error { return w.Drain(ctx, 1) }})
	return nil
}

// batchRequest is the body of POST /batches. Its shipments are read as one value and split into
// items after strict decoding, which refuses a null element of a list: a null item is judged
// alone, like any other item that is not an object.
type batchRequest struct {
	Shipments   json.RawMessage `json:"shipments"`
	Buy         string          `json:"buy"`
	LabelFormat string          `json:"label_format"`
}

// createBatch: POST /batches stores the batch and its items and answers 202 once they are
// durable, with the batch as GET /batches/{id} shows it; the worker does the rest. Only what is
// wrong with the batch itself refuses it (400); an item that fails its checks is stored FAILED
// at once, with its errors at its own paths, and the others proceed.
func (a *API) createBatch(w http.ResponseWriter, r *http.Request) error {
	var req batchRequest
	if err := readJSON(w, r, &req); err != nil {
		return err
	}
	var raws []json.RawMessage // keeps a null item as the text null
	if req.Shipments != nil && json.Unmarshal(req.Shipments, &raws) != nil {
		return &shipping.ValidationError{Fields: []shipping.FieldError{{Field: "shipments", Code: "invalid_type", Message: "must be an array"}}}
	}
	buy, err := shipping.ValidateBatch(len(raws), req.Buy, req.LabelFormat)
	if err != nil {
		return err
	}
	now := a.db.Now().UTC()
	b := &shipping.Batch{ID: a.db.NewID(), AccountID: accountID(r), Buy: buy, LabelFormat: req.LabelFormat,
		Count: len(raws), CreatedAt: shipping.Timestamp{Time: now}}
	items := make([]shipping.NewBatchItem, len(raws))
	for i, raw := range raws {
		items[i] = shipping.NewBatchItem{ShipmentID: a.db.NewID(), Body: string(raw)}
		if err := checkBatchItem(raw, now); err != nil {
			if items[i].Errors, err = itemErrors(err); err != nil {
				return err
			}
		}
	}
	if err := shipping.CreateBatch(r.Context(), a.db, b, items, a.batchLabelsURL(b.ID)); err != nil {
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
// its shape strictly (an unknown field is an *Error), then its fields (ingest.BatchItem.Check).
func checkBatchItem(raw json.RawMessage, today time.Time) error {
	if t := strings.TrimSpace(string(raw)); !strings.HasPrefix(t, "{") {
		return &shipping.ValidationError{Fields: []shipping.FieldError{{Field: "(item)", Code: "invalid_type",
			Message: "must be an object"}}}
	}
	var item ingest.BatchItem
	if err := decodeStrict(raw, &item); err != nil {
		return err
	}
	return item.Check(today)
}

// itemErrors is a FAILED item's errors: err in the API's error shape, the object an answer's
// "errors" holds (the batch worker's ItemErrors).
func itemErrors(err error) (json.RawMessage, error) {
	return json.Marshal(errorShape(errorFor(err)))
}

// batchView is a batch as the API shows it (shipping.Batch.Linked).
func (a *API) batchView(b *shipping.Batch) *shipping.Batch { return b.Linked(a.batchLabelsURL(b.ID)) }

// batchLabelsURL is the capability URL of a batch's label document.
func (a *API) batchLabelsURL(batchID string) string {
	return a.baseURL + "/documents/batches/" + batchID + "/" + a.docs.sign(docBatchLabels, batchID)
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
	ids := b.LabelShipments()
	if ids == nil {
		return store.ErrNotFound // no document yet, or none to make
	}
	shipments, err := a.db.Shipments(ctx, acct, ids)
	if err != nil {
		return err
	}
	body, format, contentType, err := labeldoc.BatchLabels(shipments, a.carrier)
	if err != nil {
		return err
	}
	serveDocument(w, r, document{body: body, contentType: contentType,
		filename: "batch-" + b.ID + labeldoc.FileExtension(format), attachment: format == shipping.LabelFormatZPL})
	return nil
}
