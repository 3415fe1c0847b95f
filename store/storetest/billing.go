package storetest

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/waybill/waybill/billing"
	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/store"
	"github.com/waybill/waybill/store/migrate"
)

// billingDB is a test database with a settable clock and sequential ids.
type billingDB struct {
	*store.DB
	// svc runs the billing use cases over the database, drawing documents with the zero
	// billing.Renderer.
	svc *billing.Service
	t   *testing.T
	mu  sync.Mutex
	now time.Time
	seq int
}

func newBillingDB(t *testing.T, start time.Time) *billingDB {
	b := &billingDB{DB: openTest(t), t: t, now: start}
	b.DB.Now = func() time.Time { b.mu.Lock(); defer b.mu.Unlock(); return b.now }
	b.DB.NewID = func() string {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.seq++
		return fmt.Sprintf("00000000-0000-7000-8000-%012x", b.seq)
	}
	b.svc = &billing.Service{Books: b.DB, Now: func() time.Time { return b.DB.Now() }}
	return b
}

// finalize finalizes an invoice, drawing its documents with r.
func (b *billingDB) finalize(ctx context.Context, accountID, invoiceID string, r billing.Renderer) (billing.Invoice, error) {
	s := *b.svc
	s.Render = r
	return s.Transition(ctx, accountID, invoiceID, billing.Finalize)
}

func (b *billingDB) setClock(t time.Time) { b.mu.Lock(); b.now = t; b.mu.Unlock() }

func (b *billingDB) account(name string) string {
	b.t.Helper()
	a, err := b.CreateAccount(context.Background(), name, "")
	if err != nil {
		b.t.Fatal(err)
	}
	return a.ID
}

// label is a purchased label inserted straight into the tables the labels work owns.
type label struct {
	status                             string
	purchased                          time.Time
	postage, surcharges, total, retail int64
	// insured is the declared value insured with the label, in cents.
	insured int64
}

// seedMeta is the rate_metadata of every seeded label's rate, as billing copies it.
const seedMeta = `{"usps_zone":5,"billable_weight":12,"weight_metadata":{"actual_oz_weight":12,"billable_oz_weight":12,` +
	`"dim_factor":166,"dim_threshold":1728,"volume":48},"surcharges_metadata":[{"surcharge_type":"FUEL","surcharge":{"amount":0.45,"currency":"USD"}}]}`

func (b *billingDB) seedLabel(accountID string, l label) string {
	b.t.Helper()
	ctx := context.Background()
	shipment, rate, id := b.NewID(), b.NewID(), b.NewID()
	at := store.Micros(l.purchased)
	err := inTx(ctx, b.DB, func(ctx context.Context, tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO shipments (id, account_id, status, brand, carrier, ship_date,
			rate_shopping_profile, rate_shopping_strategy, label_format, request, created_at, updated_at)
			VALUES ($1, $2, 'SHIPPING_LABEL_PURCHASED', '', 'ACME', '2026-11-01', 'default', 'ALL', 'PDF', '', $3, $3)`,
			shipment, accountID, at); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO shipment_requests (shipment_id, request) VALUES ($1, $2)`, shipment,
			`{"origin":{"zip":"10001"},"destination":{"zip":"94103"},"parcel":{"weight":12,"weight_unit":"OZ"}}`); err != nil {
			return err
		}
		// The bought quote, its metadata seedMeta.
		if _, err := tx.ExecContext(ctx, `INSERT INTO shipment_quotes (shipment_id, position, id, carrier, service, currency,
			postage_cents, surcharges_cents, total_cents, retail_cents, estimated_delivery_at, estimated_delivery_days,
			usps_zone, country_zone, billable_weight, actual_oz_weight, billable_oz_weight, dim_factor, dim_threshold, volume,
			surcharges, carrier_version) VALUES ($1, 0, $2, 'ACME', 'REGEA', 'USD', $3, $4, $5, $6, $7, 3,
			5, 0, 12, 12, 12, 166, 1728, 48, '{"FUEL":45}', 0)`,
			shipment, rate, l.postage, l.surcharges, l.total, l.retail, at); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO shipping_labels (id, account_id, shipment_id, shipping_rate_id, carrier,
			service, tracking_code, status, label_format, created_at, updated_at, insured_cents, insurance_cents)
			VALUES ($1, $2, $3, $4, 'ACME', 'REGEA', $5, $6, 'PDF', $7, $7, $8, $9)`,
			id, accountID, shipment, rate, "TRK"+id[24:], l.status, at,
			sql.NullInt64{Int64: l.insured, Valid: l.insured > 0}, shipping.InsuranceCents(l.insured))
		if err != nil {
			return err
		}
		return migrate.FillChecksums(ctx, tx)
	})
	if err != nil {
		b.t.Fatal(err)
	}
	return id
}

// finish marks a label finished and bills it, as the tracking work does.
func (b *billingDB) finish(labelID, status string, at time.Time) error {
	ctx := context.Background()
	err := inTx(ctx, b.DB, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE shipping_labels SET status = $1, finished_at = $2 WHERE id = $3`,
			status, store.Micros(at), labelID)
		return err
	})
	if err != nil {
		return err
	}
	return b.bill(labelID, at)
}

// bill bills a finished label alone (a repeated or racing call).
func (b *billingDB) bill(labelID string, at time.Time) error {
	return b.BillingTx(context.Background(), func(ctx context.Context, l billing.Ledger) error {
		return billing.BillFinishedLabel(ctx, l, labelID, at)
	})
}

func (b *billingDB) invoices(accountID string) []billing.Invoice {
	b.t.Helper()
	l, err := b.Invoices(context.Background(), accountID, store.InvoiceFilter{}, store.Page{Number: 1, Size: 250})
	if err != nil {
		b.t.Fatal(err)
	}
	return l.Items
}

func (b *billingDB) items(accountID, invoiceID string) []billing.LineItem {
	b.t.Helper()
	_, _, items, _, err := b.InvoiceWithItems(context.Background(), accountID, invoiceID, 0)
	if err != nil {
		b.t.Fatal(err)
	}
	return items
}

var nov22 = time.Date(2026, 11, 22, 3, 42, 3, 123456000, time.UTC)

func testCreateAccountMakesBillingProfile(t *testing.T) {
	b := newBillingDB(t, nov22)
	acct := b.account("acme")
	p, err := b.BillingProfile(context.Background(), acct)
	if err != nil {
		t.Fatal(err)
	}
	if want := billing.DefaultProfile(acct); p != want {
		t.Errorf("BillingProfile = %+v; want %+v", p, want)
	}
	if got := b.seq; got != 2 {
		t.Errorf("CreateAccount used %d ids; want 2 (the profile takes none)", got)
	}
}

func testBillFinishedLabel(t *testing.T) {
	b := newBillingDB(t, nov22)
	acct := b.account("acme")
	id := b.seedLabel(acct, label{status: "IN_TRANSIT", purchased: nov22.Add(-72 * time.Hour), postage: 700, surcharges: 45, total: 745, retail: 990})
	if err := b.finish(id, "DELIVERED", nov22); err != nil {
		t.Fatal(err)
	}
	invs := b.invoices(acct)
	if len(invs) != 1 {
		t.Fatalf("%d invoices; want 1", len(invs))
	}
	inv := invs[0]
	if inv.Status != billing.Draft || inv.PeriodStart != "2026-11-01" || inv.PeriodEnd != "2026-11-30" || inv.TotalCents != 745 ||
		inv.Number != "INV-2026-000001" {
		t.Errorf("invoice = %+v; want the November DRAFT INV-2026-000001 of 745 cents", inv)
	}
	items := b.items(acct, inv.ID)
	if len(items) != 1 {
		t.Fatalf("%d line items; want 1", len(items))
	}
	it := items[0]
	got, _ := json.Marshal(it)
	want := fmt.Sprintf(`{"id":"%s","invoice_id":"%s","type":"POSTAGE","carrier":"ACME","service":"REGEA","tracking_code":"TRK%s",`+
		`"description":"Postage ACME REGEA TRK%s","postage_cents":700,"surcharges_cents":45,`+
		`"surcharges":[{"type":"FUEL","amount_cents":45}],"total_cents":745,"retail_cents":990,`+
		`"purchased_at":"2026-11-19T03:42:03.123456Z","shipping_label_status":"DELIVERED",`+
		`"shipment_request_parameters":{"origin":{"zip":"10001"},"destination":{"zip":"94103"},"parcel":{"weight":12,"weight_unit":"OZ"}},`+
		`"shipping_rate_metadata":`+seedMeta+`,`+
		`"created_at":"2026-11-22T03:42:03.123456Z"}`, it.ID, inv.ID, id[24:], id[24:])
	if string(got) != want {
		t.Errorf("line item =\n%s\nwant\n%s", got, want)
	}

	// A second call, and a later RETURN_TO_SENDER, bill nothing more.
	if err := b.bill(id, nov22.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := b.finish(id, "RETURN_TO_SENDER", nov22.Add(48*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if items := b.items(acct, inv.ID); len(items) != 1 {
		t.Errorf("after billing again: %d line items; want 1", len(items))
	}
	if invs := b.invoices(acct); len(invs) != 1 || invs[0].TotalCents != 745 {
		t.Errorf("after billing again: invoices = %+v; want one of 745 cents", invs)
	}
}

// testBillInsuredLabel: an insured label is billed with its insurance, an INSURANCE surcharge.
func testBillInsuredLabel(t *testing.T) {
	b := newBillingDB(t, nov22)
	acct := b.account("acme")
	id := b.seedLabel(acct, label{status: "IN_TRANSIT", purchased: nov22.Add(-time.Hour), postage: 700, surcharges: 45, total: 745, retail: 990,
		insured: 100_01})
	if err := b.finish(id, "DELIVERED", nov22); err != nil {
		t.Fatal(err)
	}
	inv := b.invoices(acct)[0]
	items := b.items(acct, inv.ID)
	if len(items) != 1 {
		t.Fatalf("%d line items; want 1", len(items))
	}
	it := items[0]
	got, _ := json.Marshal(it.Surcharges)
	if it.PostageCents != 700 || it.SurchargesCents != 45+170 || it.TotalCents != 745+170 || *it.RetailCents != 990+170 ||
		inv.TotalCents != 915 || string(got) != `[{"type":"FUEL","amount_cents":45},{"type":"INSURANCE","amount_cents":170}]` {
		t.Errorf("line item postage %d, surcharges %d %s, total %d, retail %d; invoice total %d; want 700, 215 with INSURANCE 170, 915, 1160; 915",
			it.PostageCents, it.SurchargesCents, got, it.TotalCents, *it.RetailCents, inv.TotalCents)
	}
	var m struct {
		SurchargesMetadata []struct {
			SurchargeType string `json:"surcharge_type"`
		} `json:"surcharges_metadata"`
	}
	if err := json.Unmarshal(it.ShippingRateMetadata, &m); err != nil || len(m.SurchargesMetadata) != 2 || m.SurchargesMetadata[1].SurchargeType != "INSURANCE" {
		t.Errorf("shipping_rate_metadata = %s; want its surcharges_metadata to end with INSURANCE", it.ShippingRateMetadata)
	}
}

func testBillFinishedLabelVoidedAndUnknown(t *testing.T) {
	b := newBillingDB(t, nov22)
	acct := b.account("acme")
	id := b.seedLabel(acct, label{status: "VOIDED", purchased: nov22, postage: 700, total: 700, retail: 800})
	if err := b.bill(id, nov22); err != nil {
		t.Fatal(err)
	}
	if invs := b.invoices(acct); len(invs) != 0 {
		t.Errorf("a VOIDED label made invoices %+v; want none", invs)
	}
	if err := b.bill("00000000-0000-7000-8000-ffffffffffff", nov22); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("billing an unknown label = %v; want ErrNotFound", err)
	}
}

// TestBillAfterFinalize: a label that finishes in a period whose invoice is already finalized
// is billed on the next DRAFT; with none, a DRAFT for the following period is created.
func testBillAfterFinalize(t *testing.T) {
	ctx := context.Background()
	b := newBillingDB(t, nov22)
	acct := b.account("acme")
	nov, _, err := b.svc.OpenDraft(ctx, acct)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.svc.Transition(ctx, acct, nov.ID, billing.Finalize); err != nil {
		t.Fatal(err)
	}
	first := b.seedLabel(acct, label{status: "IN_TRANSIT", purchased: nov22, postage: 500, total: 500, retail: 600})
	if err := b.finish(first, "DELIVERED", nov22.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	invs := b.invoices(acct)
	if len(invs) != 2 || invs[0].PeriodStart != "2026-12-01" || invs[0].Status != billing.Draft || invs[0].TotalCents != 500 {
		t.Fatalf("invoices = %+v; want a December DRAFT of 500 cents first", invs)
	}
	if invs[1].TotalCents != 0 {
		t.Errorf("the finalized November invoice changed: %+v", invs[1])
	}
	// Another one lands on the same December DRAFT.
	second := b.seedLabel(acct, label{status: "IN_TRANSIT", purchased: nov22, postage: 300, total: 300, retail: 400})
	if err := b.finish(second, "RETURN_TO_SENDER", nov22.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if invs := b.invoices(acct); len(invs) != 2 || invs[0].TotalCents != 800 {
		t.Errorf("invoices = %+v; want the December DRAFT at 800 cents", invs)
	}
}

func testWeeklyPeriods(t *testing.T) {
	ctx := context.Background()
	b := newBillingDB(t, nov22)
	acct := b.account("acme")
	if _, err := b.svc.UpdateProfile(ctx, acct, func(p *billing.Profile) { p.Period = billing.Weekly }); err != nil {
		t.Fatal(err)
	}
	inv, created, err := b.svc.OpenDraft(ctx, acct)
	if err != nil || !created {
		t.Fatalf("OpenDraft = %+v, %v, %v", inv, created, err)
	}
	// 2026-11-22 is a Sunday: the week began on Monday the 16th.
	if inv.PeriodStart != "2026-11-16" || inv.PeriodEnd != "2026-11-22" {
		t.Errorf("weekly period = %s..%s; want 2026-11-16..2026-11-22", inv.PeriodStart, inv.PeriodEnd)
	}
	if _, err := b.svc.UpdateProfile(ctx, acct, func(p *billing.Profile) { p.Period = billing.Monthly }); !errors.Is(err, billing.ErrInvalidState) {
		t.Errorf("a period change with invoices = %v; want ErrInvalidState", err)
	}
}

func testDeferredCents(t *testing.T) {
	ctx := context.Background()
	b := newBillingDB(t, nov22)
	acct := b.account("acme")
	other := b.account("other")
	inTransit := b.seedLabel(acct, label{status: "IN_TRANSIT", purchased: time.Date(2026, 11, 10, 0, 0, 0, 0, time.UTC), postage: 700, surcharges: 45, total: 745, retail: 900})
	_ = inTransit
	b.seedLabel(acct, label{status: "OUT_FOR_DELIVERY", purchased: time.Date(2026, 11, 30, 23, 59, 59, 0, time.UTC), postage: 500, total: 500, retail: 600,
		insured: 250_00}) // insurance: $2.55 more
	b.seedLabel(acct, label{status: "PRE_TRANSIT", purchased: time.Date(2026, 11, 12, 0, 0, 0, 0, time.UTC), postage: 666, total: 666, retail: 700}) // not in transit yet
	b.seedLabel(acct, label{status: "IN_TRANSIT", purchased: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), postage: 111, total: 111, retail: 200})   // after period_end
	b.seedLabel(acct, label{status: "VOIDED", purchased: time.Date(2026, 11, 5, 0, 0, 0, 0, time.UTC), postage: 222, total: 222, retail: 300})
	b.seedLabel(other, label{status: "IN_TRANSIT", purchased: time.Date(2026, 11, 5, 0, 0, 0, 0, time.UTC), postage: 333, total: 333, retail: 400})
	delivered := b.seedLabel(acct, label{status: "IN_TRANSIT", purchased: time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC), postage: 444, total: 444, retail: 500})
	if err := b.finish(delivered, "DELIVERED", time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	invs := b.invoices(acct)
	if len(invs) != 1 {
		t.Fatalf("%d invoices; want 1", len(invs))
	}
	b.setClock(time.Date(2026, 12, 1, 0, 0, 5, 0, time.UTC))
	due, err := b.EndedDrafts(ctx, b.Now(), 10)
	if err != nil || len(due) != 1 || due[0].ID != invs[0].ID {
		t.Fatalf("EndedDrafts = %v, %v; want the November invoice", due, err)
	}
	inv, err := b.svc.Transition(ctx, acct, invs[0].ID, billing.Finalize)
	if err != nil {
		t.Fatal(err)
	}
	if inv.DeferredCents != 745+500+255 || inv.TotalCents != 444 || inv.InvoiceDate != "2026-12-01" || inv.DueDate != "2026-12-16" {
		t.Errorf("finalized invoice = %+v; want deferred 1500, total 444, dated 2026-12-01 due 2026-12-16", inv)
	}
	if due, err := b.EndedDrafts(ctx, b.Now(), 10); err != nil || len(due) != 0 {
		t.Errorf("EndedDrafts after finalizing = %v, %v; want none", due, err)
	}
}

// TestFinalizeOnce races finalizations of one invoice: exactly one wins.
func testFinalizeOnce(t *testing.T) {
	ctx := context.Background()
	b := newBillingDB(t, nov22)
	acct := b.account("acme")
	inv, _, err := b.svc.OpenDraft(ctx, acct)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = b.svc.Transition(ctx, acct, inv.ID, billing.Finalize)
		}()
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, billing.ErrInvalidState):
			t.Errorf("Transition = %v; want nil or ErrInvalidState", err)
		}
	}
	if won != 1 {
		t.Errorf("%d finalizations succeeded; want exactly 1", won)
	}
}

// TestBillingInvariants drives random sequences of fee adds, soft deletes, label billing
// (repeated, voided, racing with finalization) and finalizations, and checks after every step
// that each invoice's total is the sum of its live line items, that it matches a model of what
// should be there, and that every finished label is billed exactly once and a voided one never.
func testBillingInvariants(t *testing.T) {
	seeds := []uint64{1, 2, 3, 42, 2026}
	steps := 120
	if testing.Short() {
		seeds, steps = seeds[:2], 60
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			runInvariants(t, rand.New(rand.NewPCG(seed, seed*7919)), steps)
		})
	}
}

func runInvariants(t *testing.T, rnd *rand.Rand, steps int) {
	ctx := context.Background()
	b := newBillingDB(t, nov22)
	acct := b.account("acme")
	other := b.account("other")
	liveItems := map[string]int64{} // line item id → amount, for live items
	type lbl struct {
		id             string
		total          int64
		voided, billed bool
	}
	var labels []*lbl
	clock := nov22
	for step := 0; step < steps; step++ {
		switch op := rnd.IntN(10); {
		case op < 3: // add a fee or credit to the current DRAFT
			inv, _, err := b.svc.OpenDraft(ctx, acct)
			if err != nil {
				t.Fatal(err)
			}
			amount := rnd.Int64N(20000) - 5000
			if amount == 0 {
				amount = 1
			}
			it, err := b.svc.AddFee(ctx, acct, inv.ID, "fee", amount)
			if err != nil {
				t.Fatalf("step %d: AddFee: %v", step, err)
			}
			liveItems[it.ID] = amount
		case op < 5: // soft-delete a random item, live or not
			ids := allItemIDs(t, b.DB, acct)
			if len(ids) == 0 {
				continue
			}
			id := ids[rnd.IntN(len(ids))]
			err := b.svc.DeleteLineItem(ctx, acct, id)
			_, live := liveItems[id]
			switch {
			case err == nil && live:
				delete(liveItems, id)
			case errors.Is(err, store.ErrNotFound) && !live:
			case errors.Is(err, billing.ErrInvalidState) && live:
			default:
				t.Fatalf("step %d: DeleteLineItem(live=%v) = %v", step, live, err)
			}
		case op < 7: // a new label, maybe voided
			total := rnd.Int64N(3000) + 1
			l := &lbl{total: total, voided: rnd.IntN(5) == 0}
			status := "IN_TRANSIT"
			if l.voided {
				status = "VOIDED"
			}
			l.id = b.seedLabel(acct, label{status: status, purchased: clock, postage: total, total: total, retail: total + 100})
			labels = append(labels, l)
			b.seedLabel(other, label{status: "IN_TRANSIT", purchased: clock, postage: 1, total: 1, retail: 1})
		case op < 9: // a label finishes (or a duplicate billing call arrives)
			if len(labels) == 0 {
				continue
			}
			l := labels[rnd.IntN(len(labels))]
			var err error
			if l.voided {
				err = b.bill(l.id, clock)
			} else {
				err = b.finish(l.id, []string{"DELIVERED", "RETURN_TO_SENDER"}[rnd.IntN(2)], clock)
			}
			if err != nil {
				t.Fatalf("step %d: billing: %v", step, err)
			}
			if !l.voided && !l.billed {
				l.billed = true
				var id string
				if err := sqlOf(b.DB).QueryRowContext(ctx, `SELECT id FROM billing_line_items WHERE label_id = $1`, l.id).Scan(&id); err != nil {
					t.Fatalf("step %d: label %s not billed: %v", step, l.id, err)
				}
				liveItems[id] = l.total
			}
		default: // time passes; now and then the period closes
			clock = clock.Add(time.Duration(rnd.IntN(96)) * time.Hour)
			b.setClock(clock)
			due, err := b.EndedDrafts(ctx, b.Now(), 100)
			if err != nil {
				t.Fatal(err)
			}
			for _, ref := range due {
				if _, err := b.svc.Transition(ctx, ref.AccountID, ref.ID, billing.Finalize); err != nil {
					t.Fatal(err)
				}
			}
		}
		checkInvariants(t, b, acct, step, liveItems)
	}
	for _, l := range labels {
		var n int
		if err := sqlOf(b.DB).QueryRowContext(ctx, `SELECT COUNT(*) FROM billing_line_items WHERE label_id = $1`, l.id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if want := map[bool]int{true: 1, false: 0}[l.billed]; n != want {
			t.Errorf("label %s (voided %v) billed %d times; want %d", l.id, l.voided, n, want)
		}
	}
}

func allItemIDs(t *testing.T, db *store.DB, accountID string) []string {
	rows, err := sqlOf(db).Query(`SELECT id FROM billing_line_items WHERE account_id = $1 ORDER BY id`, accountID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		rows.Scan(&id)
		ids = append(ids, id)
	}
	return ids
}

func checkInvariants(t *testing.T, b *billingDB, acct string, step int, live map[string]int64) {
	t.Helper()
	seen := 0
	for _, inv := range b.invoices(acct) {
		items := b.items(acct, inv.ID)
		if sum := billing.Total(items); sum != inv.TotalCents {
			t.Fatalf("step %d: invoice %s total %d; its live items sum to %d", step, inv.Number, inv.TotalCents, sum)
		}
		var model int64
		for _, it := range items {
			amount, ok := live[it.ID]
			if !ok {
				t.Fatalf("step %d: item %s is live but should not be", step, it.ID)
			}
			model += amount
		}
		if model != inv.TotalCents {
			t.Fatalf("step %d: invoice %s total %d; model says %d", step, inv.Number, inv.TotalCents, model)
		}
		seen += len(items)
	}
	if seen != len(live) {
		t.Fatalf("step %d: %d live items; model says %d", step, seen, len(live))
	}
}
