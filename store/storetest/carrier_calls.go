package storetest

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/store"
	"github.com/waybill/waybill/webhook"
)

// openShipment creates an account on db and an OPEN shipment of it with three rates.
func openShipment(t *testing.T, db *store.DB) (store.Account, *shipping.Shipment) {
	t.Helper()
	acct := newAccount(t, db)
	s := testShipment(db, acct.ID, time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC))
	if _, err := db.CreateShipment(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	return acct, s
}

// testCarrierOutsideWriter: while a carrier takes its time to sell a label, the database takes
// other writes — no transaction is open during the call.
func testCarrierOutsideWriter(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	acct, s := openShipment(t, db)
	calling, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, _, err := buyLabel(ctx, db, acct.ID, s.ID, s.ShippingRates[0].ID,
			func(context.Context, *shipping.Shipment, shipping.Rate, string, shipping.SerialSource) (string, error) {
				close(calling)
				<-release
				return "TRK-SLOW", nil
			})
		done <- err
	}()
	<-calling
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	other := testShipment(db, acct.ID, time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC))
	if _, err := db.CreateShipment(wctx, other); err != nil {
		t.Errorf("a write while the carrier is called = %v; want it done at once", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("buy = %v", err)
	}
}

// voidingCarrier sells labels as its sell function says and records what it voids; its first
// refusals voids fail.
type voidingCarrier struct {
	sell     func(ctx context.Context, req shipping.PurchaseRequest) (string, error)
	mu       sync.Mutex
	refusals int
	voided   []string
}

func (c *voidingCarrier) Name() string { return "ACME" }
func (c *voidingCarrier) Rates(context.Context, shipping.RateRequest) ([]shipping.Quote, error) {
	return nil, nil
}
func (c *voidingCarrier) Purchase(ctx context.Context, req shipping.PurchaseRequest) (string, error) {
	return c.sell(ctx, req)
}
func (c *voidingCarrier) Void(_ context.Context, code string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.refusals > 0 {
		c.refusals--
		return errors.New("try again")
	}
	c.voided = append(c.voided, code)
	return nil
}
func (c *voidingCarrier) voids() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.voided)
}

// testSoldLabelVoided: a label the carrier sold but waybill did not record — the shipment was
// cancelled during the call, or the carrier answered after the deadline — is voided at the
// carrier by the void worker, retried until the carrier agrees; the shipment keeps no label.
func testSoldLabelVoided(t *testing.T) {
	for _, tt := range []struct {
		name       string
		refusals   int
		wantErr    func(error) bool
		wantStatus string
	}{
		{"cancelled during the call", 0, func(err error) bool { return errors.Is(err, shipping.ErrReservationLost) }, shipping.StatusCancelled},
		{"answered after the deadline", 0, isCarrierError, shipping.StatusOpen},
		{"void refused twice", 2, func(err error) bool { return errors.Is(err, shipping.ErrReservationLost) }, shipping.StatusCancelled},
	} {
		t.Run(tt.name, func(t *testing.T) {
			db := openTest(t)
			ctx := context.Background()
			acct, s := openShipment(t, db)
			c := &voidingCarrier{refusals: tt.refusals}
			b := &shipping.Buyer{Store: db, Serials: db.Serials(), Now: db.Now, Timeout: 50 * time.Millisecond,
				Carrier: func(context.Context, string) (shipping.Carrier, bool, error) { return c, true, nil }}
			c.sell = func(ctx context.Context, req shipping.PurchaseRequest) (string, error) {
				if tt.wantStatus == shipping.StatusCancelled {
					if _, err := b.CancelShipment(ctx, acct.ID, req.ShipmentID); err != nil {
						t.Errorf("cancel during the call: %v", err)
					}
				} else {
					time.Sleep(200 * time.Millisecond)
				}
				return "TRK-" + req.LabelID, nil
			}
			_, err := b.Buy(ctx, shipping.BuyRequest{AccountID: acct.ID, ShipmentID: s.ID, RateID: s.ShippingRates[0].ID})
			if !tt.wantErr(err) {
				t.Fatalf("buy = %v", err)
			}
			after, err := db.Shipment(ctx, acct.ID, s.ID)
			if err != nil || after.Status != tt.wantStatus || after.ShippingLabel != nil {
				t.Fatalf("after the buy: %+v, %v; want %s without a label", after, err, tt.wantStatus)
			}
			now := time.Now()
			w := &shipping.VoidWorker{Queue: db, Buyer: b, Now: func() time.Time { return now }}
			for deadline := time.Now().Add(5 * time.Second); len(c.voids()) == 0 && time.Now().Before(deadline); {
				if err := w.Drain(ctx); err != nil {
					t.Fatal(err)
				}
				now = now.Add(time.Hour) // past any retry's pause
				time.Sleep(20 * time.Millisecond)
			}
			if v := c.voids(); len(v) != 1 || v[0] == "" {
				t.Fatalf("voided %q; want the sold label, once", v)
			}
			if due, err := db.ClaimVoids(ctx, now.Add(24*time.Hour), time.Minute, 10); err != nil || len(due) != 0 {
				t.Errorf("voids left queued: %v, %v; want none", due, err)
			}
		})
	}
}

func isCarrierError(err error) bool {
	var ce *shipping.CarrierError
	return errors.As(err, &ce)
}

// testPurchaseHold: in one process, a second purchase of a reserved shipment waits until the
// first is recorded or released, then finds what it did.
func testPurchaseHold(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	acct, s := openShipment(t, db)
	req := shipping.BuyRequest{AccountID: acct.ID, ShipmentID: s.ID, RateID: s.ShippingRates[0].ID}
	buyer := &shipping.Buyer{Store: db, Now: db.Now}
	first, _, err := buyer.Reserve(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Prepare(ctx, req.PurchaseOf(first, db.Now())); err != nil {
		t.Fatal(err)
	}
	second := make(chan error, 1)
	go func() {
		_, _, err := buyer.Reserve(ctx, req)
		second <- err
	}()
	select {
	case err := <-second:
		t.Fatalf("a second reserve while the first holds = %v; want it to wait", err)
	case <-time.After(50 * time.Millisecond):
	}
	if _, _, err := first.Record(ctx, "TRK-HOLD", req.Recheck); err != nil {
		t.Fatal(err)
	}
	if err := <-second; !errors.Is(err, shipping.ErrInvalidState) {
		t.Errorf("the second reserve after the first bought = %v; want ErrInvalidState", err)
	}
}

// PurchaseAcrossHandles: purchases in two processes (here and there, two handles on one
// database) hold nothing from each other. Of two purchases of one shipment, or under one
// Idempotency-Key, the first to record wins: the other's Record is ErrReservationLost or
// ErrIdempotencyKeyTaken (its label is then voided by the buyer), and a reserve under the key
// replays the winner's answer; of two buys of one order, the second to record is refused. A
// purchase whose process died before recording leaves nothing.
func PurchaseAcrossHandles(t *testing.T, here, there *store.DB) {
	ctx := context.Background()
	acct := newAccount(t, here)
	var ss []*shipping.Shipment
	for range 3 {
		s := testShipment(here, acct.ID, time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC))
		if _, err := here.CreateShipment(ctx, s); err != nil {
			t.Fatal(err)
		}
		ss = append(ss, s)
	}
	reserve := func(db *store.DB, r shipping.BuyRequest) shipping.Reservation {
		t.Helper()
		res, replay, err := (&shipping.Buyer{Store: db, Now: db.Now}).Reserve(ctx, r)
		if err != nil || replay != nil {
			t.Fatalf("reserve = %v, %v; want a reservation", replay, err)
		}
		if err := res.Prepare(ctx, r.PurchaseOf(res, db.Now())); err != nil {
			t.Fatal(err)
		}
		return res
	}

	// One shipment, no key: the first to record keeps its label.
	plain := shipping.BuyRequest{AccountID: acct.ID, ShipmentID: ss[0].ID, RateID: ss[0].ShippingRates[0].ID}
	mine, theirs := reserve(here, plain), reserve(there, plain)
	if _, _, err := theirs.Record(ctx, "TRK-THERE", plain.Recheck); err != nil {
		t.Fatal(err)
	}
	if _, _, err := mine.Record(ctx, "TRK-HERE", plain.Recheck); !errors.Is(err, shipping.ErrReservationLost) {
		t.Errorf("recording a shipment bought elsewhere meanwhile = %v; want ErrReservationLost", err)
	}
	mine.Release(ctx)
	if got, err := here.Shipment(ctx, acct.ID, ss[0].ID); err != nil || got.ShippingLabel.TrackingCode != "TRK-THERE" {
		t.Fatalf("shipment bought in two processes: %+v, %v; want the one label recorded", got, err)
	}

	// One key: the first to record answers for it.
	keyed := shipping.BuyRequest{AccountID: acct.ID, ShipmentID: ss[1].ID, RateID: ss[1].ShippingRates[0].ID, Key: "k1", Fingerprint: "f1"}
	mine, theirs = reserve(here, keyed), reserve(there, keyed)
	if _, _, err := theirs.Record(ctx, "TRK-KEY", keyed.Recheck); err != nil {
		t.Fatal(err)
	}
	if _, _, err := mine.Record(ctx, "TRK-LOST", keyed.Recheck); !errors.Is(err, shipping.ErrReservationLost) && !errors.Is(err, shipping.ErrIdempotencyKeyTaken) {
		t.Errorf("recording under a key recorded elsewhere = %v; want it refused", err)
	}
	mine.Release(ctx)
	if _, replay, err := (&shipping.Buyer{Store: here, Now: here.Now}).Reserve(ctx, keyed); err != nil || replay == nil || replay.ShippingLabel.TrackingCode != "TRK-KEY" {
		t.Errorf("reserve under a key recorded elsewhere = %v, %v; want its answer replayed", replay, err)
	}

	// One key sent for two shipments by two processes at once: the first purchase's attempt
	// holds the key, so the second waits for it to end, then answers as a reuse of the key;
	// the carrier sells once.
	for range 2 {
		s := testShipment(here, acct.ID, time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC))
		if _, err := here.CreateShipment(ctx, s); err != nil {
			t.Fatal(err)
		}
		ss = append(ss, s)
	}
	first := shipping.BuyRequest{AccountID: acct.ID, ShipmentID: ss[3].ID, RateID: ss[3].ShippingRates[0].ID, Key: "k3", Fingerprint: "f3"}
	second := shipping.BuyRequest{AccountID: acct.ID, ShipmentID: ss[4].ID, RateID: ss[4].ShippingRates[0].ID, Key: "k3", Fingerprint: "f4"}
	c := &voidingCarrier{}
	buyerOf := func(db *store.DB) *shipping.Buyer {
		return &shipping.Buyer{Store: db, Serials: db.Serials(), Now: db.Now,
			Carrier: func(context.Context, string) (shipping.Carrier, bool, error) { return c, true, nil }}
	}
	var sold atomic.Int32
	waitingBuy := func(r1, r2 shipping.BuyRequest) (shipping.Bought, error) {
		t.Helper()
		selling, release := make(chan struct{}), make(chan struct{})
		c.sell = func(ctx context.Context, req shipping.PurchaseRequest) (string, error) {
			if sold.Add(1) == 1 {
				close(selling)
				<-release
			}
			return "TRK-" + req.LabelID, nil
		}
		done := make(chan error, 1)
		go func() {
			_, err := buyerOf(here).Buy(ctx, r1)
			done <- err
		}()
		<-selling
		answer := make(chan shipping.Bought, 1)
		errs := make(chan error, 1)
		go func() {
			got, err := buyerOf(there).Buy(ctx, r2)
			answer <- got
			errs <- err
		}()
		select {
		case <-answer:
			t.Fatal("a buy under a key another process is buying under answered before it ended; want it to wait")
		case <-time.After(100 * time.Millisecond):
		}
		close(release)
		if err := <-done; err != nil {
			t.Fatalf("the first purchase under the key: %v", err)
		}
		return <-answer, <-errs
	}
	if _, err := waitingBuy(first, second); !errors.Is(err, shipping.ErrIdempotencyKeyReused) {
		t.Errorf("buy under a key another process recorded first = %v; want ErrIdempotencyKeyReused", err)
	}
	if got, err := there.Shipment(ctx, acct.ID, ss[4].ID); err != nil || got.Status != shipping.StatusOpen || got.ShippingLabel != nil {
		t.Errorf("the second purchase's shipment: %+v, %v; want it OPEN without a label", got, err)
	}

	// One shipment under one key, bought in two processes at once: the second waits for the
	// first, then replays its answer; the carrier sells once, and nothing is voided.
	same := testShipment(here, acct.ID, time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC))
	if _, err := here.CreateShipment(ctx, same); err != nil {
		t.Fatal(err)
	}
	once := shipping.BuyRequest{AccountID: acct.ID, ShipmentID: same.ID, RateID: same.ShippingRates[0].ID, Key: "k5", Fingerprint: "f5"}
	sold.Store(0)
	if got, err := waitingBuy(once, once); err != nil || !got.Replayed {
		t.Errorf("buy under a key another process was buying for the same shipment = %+v, %v; want its answer replayed", got, err)
	}
	if n := sold.Load(); n != 1 {
		t.Errorf("the carrier sold %d labels; want 1", n)
	}
	w := &shipping.VoidWorker{Queue: there, Buyer: buyerOf(there), Now: time.Now}
	if err := w.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if v := c.voids(); len(v) != 0 {
		t.Errorf("voided %q; want nothing", v)
	}

	// Two shipments of one order, bought in two processes at once: the order is checked again
	// when each is recorded, so the second to record is refused and keeps no label.
	orderID := importedOrder(t, here, acct.ID, "O-ACROSS")
	var parcels []shipping.BuyRequest
	for range 2 {
		s := testShipment(here, acct.ID, time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC))
		s.OrderID = orderID
		if _, err := here.CreateShipment(ctx, s); err != nil {
			t.Fatal(err)
		}
		parcels = append(parcels, shipping.BuyRequest{AccountID: acct.ID, ShipmentID: s.ID, RateID: s.ShippingRates[0].ID})
	}
	mine, theirs = reserve(here, parcels[0]), reserve(there, parcels[1])
	if _, _, err := theirs.Record(ctx, "TRK-ORDER-1", parcels[1].Recheck); err != nil {
		t.Fatal(err)
	}
	if _, _, err := mine.Record(ctx, "TRK-ORDER-2", parcels[0].Recheck); !errors.Is(err, shipping.ErrOrderAlreadyShipped) {
		t.Errorf("recording a buy of an order shipped elsewhere meanwhile = %v; want ErrOrderAlreadyShipped", err)
	}
	mine.Release(ctx)
	if got, err := here.Shipment(ctx, acct.ID, parcels[0].ShipmentID); err != nil {
		t.Fatal(err)
	} else if got.Status != shipping.StatusOpen {
		t.Errorf("the refused buy's shipment is %s; want it OPEN", got.Status)
	}

	// A process that dies after reserving leaves nothing: the other buys at once.
	dead := shipping.BuyRequest{AccountID: acct.ID, ShipmentID: ss[2].ID, RateID: ss[2].ShippingRates[0].ID, Key: "k2", Fingerprint: "f2"}
	abandoned := reserve(here, dead)
	defer abandoned.Release(ctx)
	if _, _, err := reserve(there, dead).Record(ctx, "TRK-ALIVE", dead.Recheck); err != nil {
		t.Fatalf("buy beside a reservation whose process died = %v", err)
	}
}

var _ shipping.BuyStore = (*store.DB)(nil)
var _ shipping.VoidQueue = (*store.DB)(nil)

// testPurchaseTellsSubscribers: a purchase records LABEL_PURCHASED for each active subscription
// of its account to it, with the purchase, and none for an account whose subscription to it is
// paused (on PostgreSQL, the purchase without one is a single statement and the other a
// transaction: both must say the same).
func testPurchaseTellsSubscribers(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	told, s1 := openShipment(t, db)
	quiet, s2 := openShipment(t, db)
	subscribe := func(accountID, topic string, active bool) string {
		sub, err := db.CreateWebhookSubscription(ctx, accountID, "https://example.com/hook", topic, active)
		if err != nil {
			t.Fatal(err)
		}
		return sub.ID
	}
	sub := subscribe(told.ID, "LABEL_PURCHASED", true)
	paused := subscribe(quiet.ID, "LABEL_PURCHASED", false)
	subscribe(quiet.ID, webhook.TopicLabelTrackingUpdated, true)
	for _, b := range []struct {
		account string
		s       *shipping.Shipment
		code    string
	}{{told.ID, s1, "TRK-TOLD"}, {quiet.ID, s2, "TRK-QUIET"}} {
		bought, _, err := buyLabel(ctx, db, b.account, b.s.ID, b.s.ShippingRates[0].ID,
			func(context.Context, *shipping.Shipment, shipping.Rate, string, shipping.SerialSource) (string, error) {
				return b.code, nil
			})
		if err != nil || bought.ShippingLabel == nil || bought.ShippingLabel.TrackingCode != b.code {
			t.Fatalf("buy %s = %+v, %v", b.code, bought, err)
		}
		stored, err := db.Shipment(ctx, b.account, b.s.ID)
		if err != nil || stored.Status != shipping.StatusPurchased || stored.ShippingLabel == nil ||
			stored.ShippingLabel.TrackingCode != b.code {
			t.Errorf("stored after buy %s: %+v, %v", b.code, stored, err)
		}
	}
	events := func(accountID, subscriptionID string) []webhook.Event {
		l, err := db.ListWebhookEvents(ctx, accountID, subscriptionID, "", store.Page{Number: 1, Size: 10})
		if err != nil {
			t.Fatal(err)
		}
		return l.Items
	}
	if e := events(told.ID, sub); len(e) != 1 || e[0].Topic != "LABEL_PURCHASED" || !strings.Contains(string(e[0].Payload), `"TRK-TOLD"`) {
		t.Errorf("events of the subscribed account: %+v; want one LABEL_PURCHASED of TRK-TOLD", e)
	}
	if e := events(quiet.ID, paused); len(e) != 0 {
		t.Errorf("events of the paused subscription: %+v; want none", e)
	}
}

// A purchase reads only the bought rate of its shipment before the carrier call, and answers
// with the stored rendering, which has every quote. Where the shipment itself is the answer it
// has every quote too: BuyRequest.WholeShipment (a label document inlined), and an
// Idempotency-Key's stored answer and its replay.
func testBoughtAnswers(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	acct, err := db.CreateAccount(ctx, "acme", "")
	if err != nil {
		t.Fatal(err)
	}
	b := buyer(db, func(_ context.Context, _ *shipping.Shipment, _ shipping.Rate, labelID string, _ shipping.SerialSource) (string, error) {
		return "TRK-" + labelID, nil
	})
	for _, tt := range []struct {
		name    string
		edit    func(*shipping.BuyRequest)
		whole   bool // the answer's shipment has every quote
		unsplit bool // the stored rendering cannot be spliced: the bought shipment is rendered whole
	}{
		{"plain", func(*shipping.BuyRequest) {}, false, false},
		{"the whole shipment asked for", func(r *shipping.BuyRequest) { r.WholeShipment = true }, true, false},
		{"under a key", func(r *shipping.BuyRequest) { r.Key, r.Fingerprint = "k-answers", "f" }, true, false},
		{"a rendering rendered again", func(*shipping.BuyRequest) {}, false, true},
	} {
		s := testShipment(db, acct.ID, time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC))
		if _, err := db.CreateShipment(ctx, s); err != nil {
			t.Fatal(err)
		}
		if tt.unsplit { // its updated_at is no longer the rendering's
			if _, err := sqlOf(db).ExecContext(ctx, `UPDATE shipments SET updated_at = updated_at + 1 WHERE id = $1`, s.ID); err != nil {
				t.Fatal(err)
			}
		}
		req := shipping.BuyRequest{AccountID: acct.ID, ShipmentID: s.ID, RateID: s.ShippingRates[1].ID}
		tt.edit(&req)
		got, err := b.Buy(ctx, req)
		if err != nil {
			t.Fatalf("%s: buy = %v", tt.name, err)
		}
		stored, err := db.ShipmentJSON(ctx, acct.ID, s.ID)
		if err != nil || got.Rendered != stored {
			t.Errorf("%s: answered %.80s…; want the stored rendering %.80s…, %v", tt.name, got.Rendered, stored, err)
		}
		for _, r := range s.ShippingRates {
			if !strings.Contains(stored, `"id":"`+r.ID+`"`) {
				t.Errorf("%s: the rendering lacks quote %s", tt.name, r.ID)
			}
		}
		if n := len(got.Shipment.ShippingRates); tt.whole && n != 3 || n == 0 {
			t.Errorf("%s: the bought shipment has %d quotes; want %s", tt.name, n, map[bool]string{true: "3", false: "the bought one at least"}[tt.whole])
		}
		if req.Key == "" {
			continue
		}
		again, err := b.Buy(ctx, req)
		if err != nil || !again.Replayed || len(again.Shipment.ShippingRates) != 3 {
			t.Errorf("%s: the replay = %+v, %v; want the stored answer with 3 quotes", tt.name, again, err)
		}
	}
}
