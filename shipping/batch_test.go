package shipping

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"
)

func TestValidateBatch(t *testing.T) {
	tests := []struct {
		n           int
		buy, format string
		wantBuy     string
		wantFields  []string
	}{
		{1, "", "", "NONE", nil},
		{1000, "CHEAPEST", "ZPL", "CHEAPEST", nil},
		{3, "FASTEST", "PNG", "FASTEST", nil},
		{0, "NONE", "", "", []string{"shipments"}},
		{1001, "CHEAPEST", "", "", []string{"shipments"}},
		{5, "cheapest", "PDF", "", []string{"buy"}},
		{5, "ALL", "GIF", "", []string{"buy", "label_format"}},
	}
	for _, tt := range tests {
		buy, err := ValidateBatch(tt.n, tt.buy, tt.format)
		var v *ValidationError
		if tt.wantFields == nil {
			if err != nil || buy != tt.wantBuy {
				t.Errorf("ValidateBatch(%d, %q, %q) = %q, %v; want %q", tt.n, tt.buy, tt.format, buy, err, tt.wantBuy)
			}
			continue
		}
		if !errors.As(err, &v) || len(v.Fields) != len(tt.wantFields) {
			t.Errorf("ValidateBatch(%d, %q, %q) = %v; want errors on %v", tt.n, tt.buy, tt.format, err, tt.wantFields)
			continue
		}
		for i, f := range tt.wantFields {
			if v.Fields[i].Field != f {
				t.Errorf("ValidateBatch(%d, %q, %q): error %d on %s; want %s", tt.n, tt.buy, tt.format, i, v.Fields[i].Field, f)
			}
		}
	}
}

func TestBatchRate(t *testing.T) {
	rates := []Rate{
		{ID: "slow-cheap", TotalCents: 900, EstimatedDeliveryDays: 5},
		{ID: "slow-cheap-faster", TotalCents: 900, EstimatedDeliveryDays: 4},
		{ID: "fast-dear", TotalCents: 3000, EstimatedDeliveryDays: 1},
		{ID: "fast-cheaper", TotalCents: 2500, EstimatedDeliveryDays: 1},
	}
	tests := []struct {
		buy      string
		itemBuys bool
		want     string
	}{
		{"CHEAPEST", false, "slow-cheap-faster"},
		{"FASTEST", false, "fast-cheaper"},
		{"NONE", false, ""},
		{"NONE", true, "slow-cheap-faster"},
		{"FASTEST", true, "slow-cheap-faster"},
	}
	for _, tt := range tests {
		r, ok := BatchRate(rates, tt.buy, tt.itemBuys)
		if got := r.ID; got != tt.want || ok != (tt.want != "") {
			t.Errorf("BatchRate(%s, item buys cheapest %v) = %q, %v; want %q", tt.buy, tt.itemBuys, got, ok, tt.want)
		}
	}
	if _, ok := BatchRate(nil, "CHEAPEST", false); ok {
		t.Error("BatchRate(no rates) found a rate")
	}
}

func TestBatchTally(t *testing.T) {
	b := Batch{Items: []BatchItem{{Status: ItemPurchased}, {Status: ItemFailed}, {Status: ItemCreated}, {Status: ItemPurchased}, {Status: ItemQueued}}}
	b.Tally()
	if b.Created != 1 || b.Purchased != 2 || b.Failed != 1 {
		t.Errorf("Tally = created %d, purchased %d, failed %d; want 1, 2, 1", b.Created, b.Purchased, b.Failed)
	}
}

// TestBatchLabelShipments: a batch's label document holds its purchased shipments in the
// batch's order, once it is COMPLETED; a batch still processing, or with nothing purchased, has
// none.
func TestBatchLabelShipments(t *testing.T) {
	id := func(s string) *string { return &s }
	items := []BatchItem{{Status: ItemPurchased, ShipmentID: id("s1")}, {Status: ItemFailed}, {Status: ItemCreated, ShipmentID: id("s3")},
		{Status: ItemPurchased, ShipmentID: id("s4")}}
	tests := []struct {
		name  string
		batch Batch
		want  []string
	}{
		{"completed", Batch{Status: BatchCompleted, Items: items}, []string{"s1", "s4"}},
		{"processing", Batch{Status: BatchProcessing, Items: items}, nil},
		{"nothing purchased", Batch{Status: BatchCompleted, Items: items[1:3]}, nil},
	}
	for _, tt := range tests {
		if got := tt.batch.LabelShipments(); !slices.Equal(got, tt.want) || (got == nil) != (tt.want == nil) {
			t.Errorf("%s: LabelShipments = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestBatchLinked: a batch shows its label document's URL once it is COMPLETED with a label
// purchased, never before.
func TestBatchLinked(t *testing.T) {
	for _, tt := range []struct {
		status    string
		purchased int
		want      bool
	}{
		{BatchProcessing, 0, false}, {BatchProcessing, 3, false}, {BatchCompleted, 0, false}, {BatchCompleted, 1, true},
	} {
		b := (&Batch{Status: tt.status, Purchased: tt.purchased}).Linked("https://example.com/labels")
		if (b.LabelURL != nil) != tt.want {
			t.Errorf("%s with %d purchased: label_url %v, want shown %v", tt.status, tt.purchased, b.LabelURL, tt.want)
		}
	}
}

// TestRetryItem: a batch item whose work failed is tried again only for an error of the
// machinery, and only MaxItemAttempts times in all; a refusal fails it at once.
func TestRetryItem(t *testing.T) {
	database := errors.New("database is locked")
	tests := []struct {
		name    string
		err     error
		attempt int
		want    bool
	}{
		{"database error, first attempt", database, 1, true},
		{"database error, last but one attempt", database, MaxItemAttempts - 1, true},
		{"database error, last attempt", database, MaxItemAttempts, false},
		{"database error, past the last attempt", database, MaxItemAttempts + 1, false},
		{"wrapped database error", fmt.Errorf("buy: %w", database), 2, true},
		{"validation", &ValidationError{Fields: []FieldError{{Field: "destination.zip"}}}, 1, false},
		{"rate shopping", &RateError{Code: CodeNoRates}, 1, false},
		{"tracking numbers exhausted", fmt.Errorf("carrier X: %w", ErrTrackingNumbersExhausted), 1, false},
		{"tracking number taken", ErrTrackingNumberTaken, 1, false},
		{"not found", ErrNotFound, 1, false},
		{"invalid state", fmt.Errorf("%w: shipment is CANCELLED", ErrInvalidState), 1, false},
		{"order already shipped", &OrderShippedError{ShipmentIDs: []string{"s1"}}, 1, false},
		{"malformed item", fmt.Errorf("%w: unexpected end of JSON input", ErrMalformedItem), 1, false},
	}
	for _, tt := range tests {
		if got := RetryItem(tt.err, tt.attempt); got != tt.want {
			t.Errorf("RetryItem(%s, attempt %d) = %v; want %v", tt.name, tt.attempt, got, tt.want)
		}
	}
}

func TestItemInterrupted(t *testing.T) {
	for attempts, want := range map[int]bool{1: false, MaxItemAttempts: false, MaxItemAttempts + 1: true} {
		if got := ItemInterrupted(attempts); got != want {
			t.Errorf("ItemInterrupted(%d) = %v; want %v", attempts, got, want)
		}
	}
}

// batchCreator records what CreateBatch hands the store.
type batchCreator struct {
	b         *Batch
	completed json.RawMessage
}

func (c *batchCreator) CreateBatch(ctx context.Context, b *Batch, items []NewBatchItem, completed json.RawMessage) error {
	c.b, c.completed = b, completed
	return nil
}

// TestCreateBatch: refused items are FAILED with their errors and the others QUEUED; the batch
// is PROCESSING while an item is queued, and COMPLETED at once, with BATCH_COMPLETED emitted,
// when every item was refused.
func TestCreateBatch(t *testing.T) {
	refused := json.RawMessage(`{"code":"validation_error"}`)
	tests := []struct {
		name       string
		items      []NewBatchItem
		wantStatus string
		wantItems  []string
		emitted    bool
	}{
		{"all queued", []NewBatchItem{{}, {}}, BatchProcessing, []string{ItemQueued, ItemQueued}, false},
		{"some refused", []NewBatchItem{{Errors: refused}, {}}, BatchProcessing, []string{ItemFailed, ItemQueued}, false},
		{"all refused", []NewBatchItem{{Errors: refused}, {Errors: refused}}, BatchCompleted, []string{ItemFailed, ItemFailed}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &batchCreator{}
			b := &Batch{ID: "b1", Count: len(tt.items), CreatedAt: Timestamp{Time: time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)}}
			if err := CreateBatch(context.Background(), st, b, tt.items, "https://example.com/labels"); err != nil {
				t.Fatal(err)
			}
			if st.b != b || b.Status != tt.wantStatus || (b.CompletedAt != nil) != tt.emitted {
				t.Fatalf("batch %s completed_at %v; want %s", b.Status, b.CompletedAt, tt.wantStatus)
			}
			for i, it := range b.Items {
				if it.Index != i || it.Status != tt.wantItems[i] || (it.Errors != nil) != (it.Status == ItemFailed) {
					t.Errorf("item %d = %+v; want %s", i, it, tt.wantItems[i])
				}
			}
			if want, _ := json.Marshal(b); tt.emitted && string(st.completed) != string(want) || !tt.emitted && st.completed != nil {
				t.Errorf("emitted %s; want BATCH_COMPLETED %v: %s", st.completed, tt.emitted, want)
			}
			if b.LabelURL != nil {
				t.Errorf("label_url %s on a batch without a purchased label", *b.LabelURL)
			}
			if b.Failed != len(tt.wantItems)-countQueued(tt.wantItems) {
				t.Errorf("tally: %d failed", b.Failed)
			}
		})
	}
}

func countQueued(statuses []string) int {
	n := 0
	for _, s := range statuses {
		if s == ItemQueued {
			n++
		}
	}
	return n
}

// TestBatchComplete: the completion shows the last item as a read of the batch would once its
// outcome is stored (a created or purchased item its shipment; a failed one its error, and its
// shipment only if it made one), the batch COMPLETED at the stored microsecond and tallied, and
// linked only when a label was bought.
func TestBatchComplete(t *testing.T) {
	now := time.Date(2026, 11, 26, 9, 0, 0, 999, time.UTC)
	errs := json.RawMessage(`{"code":"no_rates_available"}`)
	tests := []struct {
		name       string
		o          ItemOutcome
		wantID     string // "" for none
		wantErrors bool
		wantLinked bool
	}{
		{"purchased", ItemOutcome{Status: ItemPurchased, ShipmentID: "s1"}, "s1", false, true},
		{"created", ItemOutcome{Status: ItemCreated, ShipmentID: "s1"}, "s1", false, false},
		{"failed after its create", ItemOutcome{Status: ItemFailed, ShipmentID: "s1", Errors: errs}, "s1", true, false},
		{"failed before its create", ItemOutcome{Status: ItemFailed, Errors: errs}, "", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			first := "s0"
			b := &Batch{ID: "b1", Status: BatchProcessing, Count: 2, Items: []BatchItem{
				{Index: 0, ShipmentID: &first, Status: ItemCreated}, {Index: 1, Status: ItemProcessing}}}
			done, err := b.Complete(BatchClaim{BatchID: "b1", Index: 1, ShipmentID: "s1"}, tt.o, now, "https://x/labels")
			if err != nil {
				t.Fatal(err)
			}
			it := b.Items[1]
			if id := it.ShipmentID; tt.wantID == "" && id != nil || tt.wantID != "" && (id == nil || *id != tt.wantID) {
				t.Errorf("item shipment %v; want %q", id, tt.wantID)
			}
			if it.Status != tt.o.Status || (it.Errors != nil) != tt.wantErrors {
				t.Errorf("item %+v; want %s, errors %v", it, tt.o.Status, tt.wantErrors)
			}
			if want := now.Truncate(time.Microsecond); b.Status != BatchCompleted || !done.At.Equal(want) || !b.CompletedAt.Equal(want) {
				t.Errorf("batch %s completed %v (%v); want COMPLETED at %v", b.Status, b.CompletedAt, done.At, want)
			}
			if b.Created+b.Purchased+b.Failed != 2 || (b.LabelURL != nil) != tt.wantLinked {
				t.Errorf("tally %d/%d/%d, label_url %v; want 2 finished, linked %v", b.Created, b.Purchased, b.Failed, b.LabelURL, tt.wantLinked)
			}
			if want, _ := json.Marshal(b); string(done.Payload) != string(want) {
				t.Errorf("payload %s; want the batch as shown %s", done.Payload, want)
			}
		})
	}
	if _, err := (&Batch{ID: "b1"}).Complete(BatchClaim{Index: 3}, ItemOutcome{Status: ItemCreated}, now, ""); err == nil {
		t.Error("completing an item the batch does not have: no error")
	}
}
