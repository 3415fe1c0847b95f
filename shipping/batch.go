package shipping

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// Batch statuses: a batch is PROCESSING from its creation until its every item is finished.
const (
	BatchProcessing = "PROCESSING"
	BatchCompleted  = "COMPLETED"
)

// Batch item statuses: QUEUED until a worker claims it, PROCESSING while one holds it, then
// CREATED (shipment created, nothing bought), PURCHASED or FAILED.
const (
	ItemQueued     = "QUEUED"
	ItemProcessing = "PROCESSING"
	ItemCreated    = "CREATED"
	ItemPurchased  = "PURCHASED"
	ItemFailed     = "FAILED"
)

// What a batch buys for each shipment it creates.
const (
	BatchBuyCheapest = "CHEAPEST"
	BatchBuyFastest  = "FASTEST"
	BatchBuyNone     = "NONE"
)

// MaxBatchItems is the most shipments one batch takes.
const MaxBatchItems = 1000

// MaxItemAttempts is how many times a batch item is worked at most: an item whose work keeps
// failing (the database, a carrier that does not answer) is FAILED with its last error at the
// last attempt, and one whose attempts never end (its worker dies each time) after it
// (no error makes a batch item retry forever).
const MaxItemAttempts = 5

// RetryItem reports whether a batch item whose attempt-th attempt (counting from 1) failed with
// err is worked again, rather than FAILED now with err: only a failure of the machinery is, and
// only until MaxItemAttempts; a refusal (Refused: validation, rate shopping, an unknown order, a
// state or rule that forbids it, tracking numbers used up or taken) fails it at once, as working it
// again would ask the same again.
func RetryItem(err error, attempt int) bool {
	return !Refused(err) && attempt < MaxItemAttempts
}

// ItemInterrupted reports whether a batch item claimed for the attempts-th time has had its
// attempts: every earlier one ended without an outcome (its worker died or lost its lease), so
// this claim fails it rather than work it again.
func ItemInterrupted(attempts int) bool { return attempts > MaxItemAttempts }

// Batch is a batch of shipments created (and bought) by the batch worker.
type Batch struct {
	ID          string `json:"id"`
	AccountID   string `json:"-"`
	Status      string `json:"status"`
	Buy         string `json:"buy"`
	LabelFormat string `json:"label_format,omitempty"`
	Count       int    `json:"count"`
	// Created, Purchased and Failed count the finished items by outcome (Tally).
	Created   int `json:"created"`
	Purchased int `json:"purchased"`
	Failed    int `json:"failed"`
	// LabelURL is the capability URL of the document of every purchased label, in order; set
	// by the API once the batch is COMPLETED with at least one purchase.
	LabelURL *string `json:"label_url"`
	// Items are in the batch's order; nil where the batch is listed without them.
	Items       []BatchItem `json:"items,omitempty"`
	CreatedAt   Timestamp   `json:"created_at"`
	CompletedAt *Timestamp  `json:"completed_at"`
}

// BatchItem is one shipment of a batch and its outcome.
type BatchItem struct {
	Index int `json:"index"`
	// ShipmentID is the shipment the item made; nil until it exists (and for an item that
	// failed before its shipment could be created).
	ShipmentID *string `json:"shipment_id"`
	Status     string  `json:"status"`
	// Errors is a FAILED item's error, in the API's error shape.
	Errors json.RawMessage `json:"errors,omitempty"`
}

// Tally counts the batch's items by outcome.
func (b *Batch) Tally() {
	b.Created, b.Purchased, b.Failed = 0, 0, 0
	for _, it := range b.Items {
		switch it.Status {
		case ItemCreated:
			b.Created++
		case ItemPurchased:
			b.Purchased++
		case ItemFailed:
			b.Failed++
		}
	}
}

// ValidateBatch checks a batch's shape before any item is looked at: 1 to MaxBatchItems
// shipments, buy CHEAPEST, FASTEST or NONE (NONE when empty), label format PDF, ZPL or PNG
// when given. It returns buy with its default.
func ValidateBatch(n int, buy, labelFormat string) (string, error) {
	var v ValidationError
	switch {
	case n == 0:
		v.Add("shipments", "required", "must hold at least one shipment")
	case n > MaxBatchItems:
		v.Add("shipments", "too_many", "must hold at most "+strconv.Itoa(MaxBatchItems)+" shipments")
	}
	switch buy {
	case "":
		buy = BatchBuyNone
	case BatchBuyCheapest, BatchBuyFastest, BatchBuyNone:
	default:
		v.Add("buy", "invalid", "must be CHEAPEST, FASTEST or NONE")
	}
	switch labelFormat {
	case "", LabelFormatPDF, LabelFormatZPL, LabelFormatPNG:
	default:
		v.Add("label_format", "invalid", "must be PDF, ZPL or PNG")
	}
	return buy, v.Err()
}

// BatchRate is the rate a batch item buys among its shipment's rates: the cheapest (ties:
// fewer days) for CHEAPEST, or for an item that asks buy_cheapest_rate itself; the fastest
// (ties: cheaper) for FASTEST; none for NONE.
func BatchRate(rates []Rate, buy string, itemBuysCheapest bool) (Rate, bool) {
	if itemBuysCheapest {
		buy = BatchBuyCheapest
	}
	if len(rates) == 0 {
		return Rate{}, false
	}
	switch buy {
	case BatchBuyCheapest:
		return Cheapest(rates)
	case BatchBuyFastest:
		best := rates[0]
		for _, r := range rates[1:] {
			if r.EstimatedDeliveryDays < best.EstimatedDeliveryDays ||
				r.EstimatedDeliveryDays == best.EstimatedDeliveryDays && r.TotalCents < best.TotalCents {
				best = r
			}
		}
		return best, true
	}
	return Rate{}, false
}

// Linked is the batch as the API shows it: with url, its label document's, as label_url once
// it is COMPLETED with a label purchased.
func (b *Batch) Linked(url string) *Batch {
	if b.Status == BatchCompleted && b.Purchased > 0 {
		b.LabelURL = &url
	}
	return b
}

// LabelShipments is the ids of the batch's purchased shipments, in the batch's order, once it
// is COMPLETED: the shipments of its label document. None while it is PROCESSING, nor when
// nothing was purchased: it has no document then.
func (b *Batch) LabelShipments() []string {
	if b.Status != BatchCompleted {
		return nil
	}
	var ids []string
	for _, it := range b.Items {
		if it.Status == ItemPurchased {
			ids = append(ids, *it.ShipmentID)
		}
	}
	return ids
}

// NewBatchItem is an item of a batch being created: the id of the shipment it will make (drawn
// now, so a retried item makes the same one), its body, and the errors that refused it (nil for
// an item the worker is to make).
type NewBatchItem struct {
	ShipmentID string
	Body       string
	Errors     json.RawMessage
}

// BatchCreator stores a new batch.
type BatchCreator interface {
	// CreateBatch stores the batch and its items, in b.Items' statuses with their errors, in one
	// transaction, and emits BATCH_COMPLETED with the payload completed unless it is nil.
	CreateBatch(ctx context.Context, b *Batch, items []NewBatchItem, completed json.RawMessage) error
}

// CreateBatch stores a new batch: its refused items FAILED with their errors, the others QUEUED
// for the worker. The batch is PROCESSING while an item is queued; one whose every item was
// refused is COMPLETED at once, and BATCH_COMPLETED is emitted with it as the API shows it
// (Linked to link), as when its last item finishes. b's ID, AccountID, Buy, LabelFormat, Count
// and CreatedAt must be set; its Status, CompletedAt and Items are set as stored, tallied.
func CreateBatch(ctx context.Context, st BatchCreator, b *Batch, items []NewBatchItem, link string) error {
	b.Status, b.CompletedAt, b.Items = BatchProcessing, nil, make([]BatchItem, len(items))
	queued := 0
	for i, it := range items {
		b.Items[i] = BatchItem{Index: i, Status: ItemQueued}
		if it.Errors == nil {
			queued++
		} else {
			b.Items[i].Status, b.Items[i].Errors = ItemFailed, it.Errors
		}
	}
	if queued == 0 {
		b.Status, b.CompletedAt = BatchCompleted, &b.CreatedAt
	}
	b.Tally()
	var completed json.RawMessage
	if queued == 0 {
		var err error
		if completed, err = json.Marshal(b.Linked(link)); err != nil {
			return err
		}
	}
	return st.CreateBatch(ctx, b, items, completed)
}

// BatchCompletion is how a batch completes with its last item: when, and the payload of
// BATCH_COMPLETED, the batch as the API shows it then.
type BatchCompletion struct {
	At      time.Time
	Payload json.RawMessage
}

// Complete is the completion of b, read while the item c claims was its last unfinished one,
// once that item ends with o at now: b is changed to the batch as it then reads (the item's
// outcome shown as stored, the batch COMPLETED and tallied) and linked to its label document
// at link.
func (b *Batch) Complete(c BatchClaim, o ItemOutcome, now time.Time, link string) (*BatchCompletion, error) {
	if c.Index < 0 || c.Index >= len(b.Items) || b.Items[c.Index].Index != c.Index {
		return nil, fmt.Errorf("batch %s has no item %d", b.ID, c.Index)
	}
	it := &b.Items[c.Index]
	it.Status, it.ShipmentID, it.Errors = o.Status, nil, nil
	switch o.Status {
	case ItemCreated, ItemPurchased:
		id := c.ShipmentID
		it.ShipmentID = &id
	case ItemFailed:
		if o.ShipmentID != "" {
			id := o.ShipmentID
			it.ShipmentID = &id
		}
		it.Errors = o.Errors
	}
	// Stored timestamps keep microseconds: the payload shows what a read of the batch shows.
	at := time.UnixMicro(now.UnixMicro()).UTC()
	b.Status, b.CompletedAt = BatchCompleted, &Timestamp{Time: at}
	b.Tally()
	payload, err := json.Marshal(b.Linked(link))
	if err != nil {
		return nil, err
	}
	return &BatchCompletion{At: at, Payload: payload}, nil
}
