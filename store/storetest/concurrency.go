package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/waybill/waybill/billing"
	"github.com/waybill/waybill/ingest"
	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/store"
	"github.com/waybill/waybill/webhook"
)

// testBootstrap starts many first starts together on an empty database: exactly one creates
// the default account and its token, the others (and any later start) create nothing.
func testBootstrap(t *testing.T) {
	ctx := context.Background()
	b := newBillingDB(t, nov22)
	scopes := []string{"READ_BILLING", "ADMIN"}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var tokens []string
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tok, created, err := b.Bootstrap(ctx, scopes)
			if err != nil {
				t.Errorf("Bootstrap: %v", err)
				return
			}
			if created {
				mu.Lock()
				tokens = append(tokens, tok.Token)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(tokens) != 1 {
		t.Fatalf("%d bootstraps created an account; want exactly 1", len(tokens))
	}
	if l, err := b.ListAccounts(ctx, store.Page{Number: 1, Size: 10}); err != nil || len(l.Items) != 1 {
		t.Errorf("ListAccounts = %d accounts, %v; want 1", len(l.Items), err)
	}
	p, err := b.Authenticate(ctx, tokens[0])
	if err != nil || !slices.Equal(p.Scopes, scopes) {
		t.Errorf("Authenticate(bootstrap token) = %+v, %v", p, err)
	}
	if a, err := b.Account(ctx, p.AccountID); err != nil || a.Name != "default" {
		t.Errorf("bootstrap account = %+v, %v; want default", a, err)
	}
	if _, created, err := b.Bootstrap(ctx, scopes); err != nil || created {
		t.Errorf("a later Bootstrap = created %v, %v; want nothing created", created, err)
	}

	// A database whose accounts predate the bootstrap row gets no default account.
	c := newBillingDB(t, nov22)
	c.account("acme")
	if _, created, err := c.Bootstrap(ctx, scopes); err != nil || created {
		t.Errorf("Bootstrap with accounts = created %v, %v; want nothing created", created, err)
	}
}

// testInvoiceNumbersGapless opens the DRAFT invoices of many accounts at once, several callers
// per account racing to create the same invoice: the numbers handed out are 1…n, no gap.
func testInvoiceNumbersGapless(t *testing.T) {
	ctx := context.Background()
	b := newBillingDB(t, nov22)
	var accts []string
	for i := range 12 {
		accts = append(accts, b.account(fmt.Sprint("acct", i)))
	}
	var wg sync.WaitGroup
	for _, acct := range accts {
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, _, err := b.svc.OpenDraft(ctx, acct); err != nil {
					t.Errorf("OpenDraft: %v", err)
				}
			}()
		}
	}
	wg.Wait()
	var got []string
	for _, acct := range accts {
		invs := b.invoices(acct)
		if len(invs) != 1 {
			t.Fatalf("account has %d invoices; want 1", len(invs))
		}
		got = append(got, invs[0].Number)
	}
	slices.Sort(got)
	for i, n := range got {
		if want := billing.Number(nov22.Year(), int64(i+1)); n != want {
			t.Fatalf("invoice numbers %v; want %s… contiguous from 1", got, want)
		}
	}
}

// testClaimImportsConcurrently has several workers claim and complete a queue of imports
// at once, in batches whose orders overlap: no claim or completion fails (PostgreSQL reports
// a deadlock as an error), and every import is processed exactly once.
func testClaimImportsConcurrently(t *testing.T) {
	ctx := context.Background()
	b := newBillingDB(t, nov22)
	acct := b.account("acme")
	const imports, workers = 120, 6
	for i := range imports {
		id := fmt.Sprint("order-", i%7)
		if _, _, err := b.EnqueueImport(ctx, acct, fmt.Appendf(nil, `{"id": %q, "n": %d}`, id, i), &id); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	claimed := map[string]int{}
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				claims, err := b.ClaimImports(ctx, time.Hour, 8)
				if err != nil {
					t.Errorf("ClaimImports: %v", err)
					return
				}
				if len(claims) == 0 {
					return
				}
				var done []ingest.Completion
				for i := len(claims) - 1; i >= 0; i-- { // the worker's order, not the key order
					c := claims[i]
					var o struct{ ID string }
					if err := json.Unmarshal(c.Body, &o); err != nil {
						t.Error(err)
						return
					}
					done = append(done, ingest.Completion{Claim: c, Order: &ingest.Order{OrderID: o.ID, Name: c.ID,
						Tags: []string{}, FulfillmentOrders: []ingest.FulfillmentOrder{}}})
				}
				if stale, err := b.CompleteImports(ctx, done); err != nil || stale != 0 {
					t.Errorf("CompleteImports = %d stale, %v", stale, err)
					return
				}
				mu.Lock()
				for _, c := range claims {
					claimed[c.ID]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(claimed) != imports {
		t.Errorf("%d imports claimed; want %d", len(claimed), imports)
	}
	for id, n := range claimed {
		if n != 1 {
			t.Errorf("import %s claimed %d times", id, n)
		}
	}
	var unfinished int
	if err := sqlOf(b.DB).QueryRowContext(ctx, `SELECT COUNT(*) FROM order_imports WHERE status <> $1`, ingest.StatusProcessed).Scan(&unfinished); err != nil || unfinished != 0 {
		t.Errorf("%d imports not PROCESSED (%v)", unfinished, err)
	}
}

// testCompleteImportsBatch completes, in one call and out of key order, two imports of one
// order (the older with the greater id), a stale claim and a failed import: the order holds
// the newer import's content under the id the first completion was given, the stale claim is
// counted and left PROCESSING, the failed import keeps its errors.
func testCompleteImportsBatch(t *testing.T) {
	ctx := context.Background()
	b := newBillingDB(t, nov22)
	a, err := b.CreateAccount(ctx, "acme", "")
	if err != nil {
		t.Fatal(err)
	}
	enqueue := func(body string) ingest.Import {
		imp, _, err := b.EnqueueImport(ctx, a.ID, []byte(body), nil)
		if err != nil {
			t.Fatal(err)
		}
		b.setClock(b.Now().Add(time.Minute))
		return imp
	}
	b.setClock(nov22.Add(time.Minute))
	newer := enqueue(`{"id":"O-1","name":"newer"}`)
	b.setClock(nov22) // received first, with a greater id
	older := enqueue(`{"id":"O-1","name":"older"}`)
	b.setClock(nov22.Add(time.Hour))
	staleImp := enqueue(`{"id":"O-2","name":"stale"}`)
	failed := enqueue(`{"id":"O-3"}`)
	claims, err := b.ClaimImports(ctx, time.Hour, 10)
	if err != nil || len(claims) != 4 {
		t.Fatalf("ClaimImports = %d claims, %v", len(claims), err)
	}
	byID := map[string]ingest.Claim{}
	for _, c := range claims {
		byID[c.ID] = c
	}
	order := func(name string) *ingest.Order {
		return &ingest.Order{OrderID: "O-1", Name: name, Tags: []string{}, FulfillmentOrders: []ingest.FulfillmentOrder{}}
	}
	stale := byID[staleImp.ID]
	stale.Attempts++ // as if claimed again after its lease expired
	errs := []shipping.FieldError{{Field: "fulfillmentOrders", Code: "required", Message: "is required"}}
	done := []ingest.Completion{
		{Claim: byID[newer.ID], Order: order("newer")},
		{Claim: stale, Order: &ingest.Order{OrderID: "O-2", Name: "stale", Tags: []string{}, FulfillmentOrders: []ingest.FulfillmentOrder{}}},
		{Claim: byID[failed.ID], Errors: errs},
		{Claim: byID[older.ID], Order: order("older")},
	}
	if n, err := b.CompleteImports(ctx, done); err != nil || n != 1 {
		t.Fatalf("CompleteImports = %d stale, %v; want 1", n, err)
	}
	l, err := b.ListOrders(ctx, a.ID, "", store.Page{Number: 1, Size: 10})
	if err != nil || len(l.Items) != 1 {
		t.Fatalf("ListOrders = %d orders, %v; want O-1 only", len(l.Items), err)
	}
	if o := l.Items[0]; o.OrderID != "O-1" || o.Name != "newer" || o.ImportID != newer.ID {
		t.Errorf("order %s holds %q of import %s; want \"newer\" of %s", o.OrderID, o.Name, o.ImportID, newer.ID)
	}
	for id, want := range map[string]string{newer.ID: ingest.StatusProcessed, older.ID: ingest.StatusProcessed,
		staleImp.ID: ingest.StatusProcessing, failed.ID: ingest.StatusFailed} {
		imp, err := b.OrderImport(ctx, a.ID, id)
		if err != nil || imp.Status != want {
			t.Errorf("import %s: %s, %v; want %s", id, imp.Status, err, want)
		}
		if id == failed.ID && (len(imp.Errors) != 1 || imp.Errors[0] != errs[0]) {
			t.Errorf("failed import's errors %+v; want %+v", imp.Errors, errs)
		}
	}
}

// TokenRevokedElsewhere: a token revoked through here (another process: the command line,
// another waybill on the same database) stops working through there, which had it cached,
// as soon as there's next revocation check is due (a millisecond), not when the entry expires.
// here and there are two handles on one fresh database.
func TokenRevokedElsewhere(t *testing.T, here, there *store.DB) {
	ctx := context.Background()
	acct, err := here.CreateAccount(ctx, "acme", "Acme")
	if err != nil {
		t.Fatal(err)
	}
	tok, err := here.CreateToken(ctx, acct.ID, []string{"READ_SHIPMENTS"})
	if err != nil {
		t.Fatal(err)
	}
	for _, db := range []*store.DB{here, there, there} {
		if p, err := db.Authenticate(ctx, tok.Token); err != nil || p.AccountID != acct.ID {
			t.Fatalf("Authenticate = %+v, %v", p, err)
		}
	}
	if err := here.RevokeBearer(ctx, tok.Token); err != nil {
		t.Fatal(err)
	}
	if _, err := here.Authenticate(ctx, tok.Token); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("in the revoking process right after revocation: err = %v; want ErrNotFound", err)
	}
	time.Sleep(2 * time.Millisecond)
	if _, err := there.Authenticate(ctx, tok.Token); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("in another process 2 ms after revocation: err = %v; want ErrNotFound", err)
	}
}

// testWebhookGoneRacesPatch races a 410 Gone, which deactivates the subscription of the
// record it finishes, with a PATCH of that subscription's URL, which rewrites its pending
// records: each must succeed. On PostgreSQL the finish locked the record and then the
// subscription, the PATCH the subscription and then its records: a deadlock.
func testWebhookGoneRacesPatch(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	acct := newAccount(t, db)
	gone := 410
	for round := range 12 {
		sub, err := db.CreateWebhookSubscription(ctx, acct.ID, fmt.Sprintf("https://example.com/%d", round), "LABEL_PURCHASED", true)
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			if err := db.EmitWebhookEvent(ctx, acct.ID, "LABEL_PURCHASED", map[string]int{"round": round}); err != nil {
				t.Fatal(err)
			}
		}
		now := time.Now()
		cs, err := db.DueWebhookEvents(ctx, now.Add(time.Hour), nil, nil, 100, 10)
		if err != nil {
			t.Fatal(err)
		}
		ds, err := db.LeaseWebhookEvents(ctx, cs, now, now.Add(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		var rs []webhook.Result
		for _, d := range ds {
			if d.SubscriptionID == sub.ID {
				rs = append(rs, webhook.Result{Delivery: d, At: now, Status: webhook.StatusFailed, ResponseStatus: &gone, Deactivate: true})
				break // one 410; the subscription's other records stay pending, for the PATCH
			}
		}
		if len(rs) == 0 {
			t.Fatalf("round %d: no record of the new subscription was leased", round)
		}
		url := fmt.Sprintf("https://example.com/moved/%d", round)
		errs := make(chan error, 2)
		go func() { errs <- db.FinishWebhookDeliveries(ctx, rs) }()
		go func() { _, err := webhook.Update(ctx, db, acct.ID, sub.ID, webhook.Change{URL: &url}); errs <- err }()
		for range 2 {
			if err := <-errs; err != nil {
				t.Errorf("round %d: %v", round, err)
			}
		}
	}
}

// testConcurrentChangesKeepEachOther: two changes of different fields of one row, at once,
// both stay. On PostgreSQL each read the row unlocked and wrote back every field: a PATCH of a
// webhook's URL undid a deactivation (and the other way round), a billing profile's bill-to
// name undid its address.
func testConcurrentChangesKeepEachOther(t *testing.T) {
	db := openTest(t)
	svc := &billing.Service{Books: db, Now: db.Now}
	ctx := context.Background()
	acct := newAccount(t, db)
	sub, err := db.CreateWebhookSubscription(ctx, acct.ID, "https://example.com/0", "LABEL_PURCHASED", true)
	if err != nil {
		t.Fatal(err)
	}
	both := func(a, b func() error) {
		errs := make(chan error, 2)
		go func() { errs <- a() }()
		go func() { errs <- b() }()
		for range 2 {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
	}
	for round := range 10 {
		url, active := fmt.Sprintf("https://example.com/%d", round+1), round%2 == 1
		update := func(c webhook.Change) func() error {
			return func() error { _, err := webhook.Update(ctx, db, acct.ID, sub.ID, c); return err }
		}
		both(update(webhook.Change{URL: &url}), update(webhook.Change{Active: &active}))
		got, err := db.WebhookSubscription(ctx, acct.ID, sub.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.URL != url || got.IsActive != active {
			t.Errorf("round %d: subscription %s active %v; want %s active %v", round, got.URL, got.IsActive, url, active)
		}

		name, street := fmt.Sprintf("Acme %d", round), fmt.Sprintf("%d Main St", round)
		both(func() error {
			_, err := svc.UpdateProfile(ctx, acct.ID, func(p *billing.Profile) { p.BillToName = name })
			return err
		}, func() error {
			_, err := svc.UpdateProfile(ctx, acct.ID, func(p *billing.Profile) {
				p.BillToAddress = &billing.Address{Street1: street, City: "Austin", State: "TX", Zip: "78701", Country: "US"}
			})
			return err
		})
		p, err := db.BillingProfile(ctx, acct.ID)
		if err != nil {
			t.Fatal(err)
		}
		if p.BillToName != name || p.BillToAddress == nil || p.BillToAddress.Street1 != street {
			t.Errorf("round %d: bill-to %q at %+v; want %q at %s", round, p.BillToName, p.BillToAddress, name, street)
		}
	}
}
