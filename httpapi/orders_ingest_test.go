package httpapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/waybill/waybill/ingest"
	"github.com/waybill/waybill/store"
)

// orderBody is a minimal valid order payload with the given id.
func orderBody(id string) string {
	return `{"id":"` + id + `","fulfillmentOrders":[{"id":"FO-` + id + `","destination":{"firstName":"Ann","lastName":"Lee",` +
		`"address1":"1 Main St","city":"Austin","province":"TX","zip":"78701","countryCode":"US"},` +
		`"lineItems":[{"id":"LI-1","weight":{"unit":"POUNDS","value":2},"totalQuantity":1}]}]}`
}

// postOrder sends a signed order import; secret "" sends no signature.
func (e *testEnv) postOrder(org, secret, body string) *httptest.ResponseRecorder {
	e.t.Helper()
	req := httptest.NewRequest("POST", "/webhook/custom-orders", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(ingest.OrganizationHeader, org)
	if secret != "" {
		req.Header.Set(ingest.SignatureHeader, ingest.Sign(secret, []byte(body)))
	}
	w := httptest.NewRecorder()
	e.api.ServeHTTP(w, req)
	return w
}

type importAnswer struct {
	Data struct {
		ID      string  `json:"id"`
		OrderID *string `json:"order_id"`
		Status  string  `json:"status"`
	} `json:"data"`
}

func TestOrderImportRotation(t *testing.T) {
	e := newEnv(t)
	acme := e.accounts["acme"]
	decode[importAnswer](t, e.postOrder(acme.OrganizationID, acme.IngestSecret, orderBody("R-1")), http.StatusAccepted)

	rotated := decode[struct {
		Data struct {
			IngestSecret string `json:"ingest_secret"`
		} `json:"data"`
	}](t, e.do("POST", "/admin/accounts/"+acme.ID+"/ingest_secret/rotate", "admin", nil), http.StatusOK)
	newSecret := rotated.Data.IngestSecret
	if newSecret == "" || newSecret == acme.IngestSecret {
		t.Fatalf("rotation returned secret %q; want a new one", newSecret)
	}
	for _, body := range []string{orderBody("R-2"), orderBody("R-1")} {
		if w := e.postOrder(acme.OrganizationID, acme.IngestSecret, body); w.Code != http.StatusUnauthorized {
			t.Errorf("POST signed with the old secret = %d %s; want 401", w.Code, w.Body)
		}
	}
	decode[importAnswer](t, e.postOrder(acme.OrganizationID, newSecret, orderBody("R-2")), http.StatusAccepted)
	// A retry of a body accepted before the rotation, signed anew, is still the same import.
	decode[importAnswer](t, e.postOrder(acme.OrganizationID, newSecret, orderBody("R-1")), http.StatusOK)
}

// TestOrderImportRefusalsAlike: whichever credential is wrong, the answer is byte for byte the same.
func TestOrderImportRefusalsAlike(t *testing.T) {
	e := newEnv(t)
	acme, other := e.accounts["acme"], e.accounts["other"]
	body := orderBody("A-1")
	answers := map[string]*httptest.ResponseRecorder{
		"unknown organization": e.postOrder("00000000-0000-7000-8000-0000000000ff", acme.IngestSecret, body),
		"no organization":      e.postOrder("", acme.IngestSecret, body),
		"no signature":         e.postOrder(acme.OrganizationID, "", body),
		"wrong signature":      e.postOrder(acme.OrganizationID, other.IngestSecret, body),
		"another's org":        e.postOrder(other.OrganizationID, acme.IngestSecret, body),
	}
	want := answers["wrong signature"]
	for name, w := range answers {
		if w.Code != http.StatusUnauthorized || w.Body.String() != want.Body.String() {
			t.Errorf("%s: %d %s; want 401 %s", name, w.Code, w.Body, want.Body)
		}
		if strings.Contains(w.Body.String(), acme.IngestSecret) || strings.Contains(w.Body.String(), ingest.Sign(acme.IngestSecret, []byte(body))) {
			t.Errorf("%s: the answer shows a secret or the expected signature: %s", name, w.Body)
		}
	}
}

func TestOrderImportBodies(t *testing.T) {
	e := newEnv(t)
	acme := e.accounts["acme"]
	// Exactly 1 MiB is accepted; one byte more is 413, before the signature is even looked at.
	pad := ingest.MaxBody - len(orderBody("B-1")) + 1
	exact := `{"pad":"` + strings.Repeat("x", pad-len(`{"pad":"",`)) + `",` + orderBody("B-1")[1:]
	if len(exact) != ingest.MaxBody {
		t.Fatalf("test body is %d bytes; want %d", len(exact), ingest.MaxBody)
	}
	tests := []struct {
		name, secret, body string
		want               int
		code               string
	}{
		{"1 MiB", acme.IngestSecret, exact, http.StatusAccepted, ""},
		{"1 MiB + 1", acme.IngestSecret, exact + " ", http.StatusRequestEntityTooLarge, "payload_too_large"},
		{"1 MiB + 1 unsigned", "", exact + " ", http.StatusRequestEntityTooLarge, "payload_too_large"},
		{"invalid UTF-8", acme.IngestSecret, "{\"id\":\"\xff\"}", http.StatusBadRequest, "malformed_json"},
		{"not JSON, unsigned", "", "not json", http.StatusUnauthorized, "invalid_signature"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := e.postOrder(acme.OrganizationID, tt.secret, tt.body)
			if w.Code != tt.want || tt.code != "" && !strings.Contains(w.Body.String(), `"code":"`+tt.code+`"`) {
				t.Errorf("POST %s = %d %s; want %d %s", tt.name, w.Code, w.Body.String()[:min(200, w.Body.Len())], tt.want, tt.code)
			}
		})
	}
}

// TestOrderImportConcurrentDuplicates: a body delivered many times at once is one import.
func TestOrderImportConcurrentDuplicates(t *testing.T) {
	e := newEnv(t)
	acme := e.accounts["acme"]
	var wg sync.WaitGroup
	codes := make([]int, 16)
	ids := make([]string, 16)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := httptest.NewRequest("POST", "/webhook/custom-orders", strings.NewReader(orderBody("D-1")))
			req.Header.Set(ingest.OrganizationHeader, acme.OrganizationID)
			req.Header.Set(ingest.SignatureHeader, ingest.Sign(acme.IngestSecret, []byte(orderBody("D-1"))))
			w := httptest.NewRecorder()
			e.api.ServeHTTP(w, req)
			codes[i] = w.Code
			if w.Code < 300 {
				ids[i] = decode[importAnswer](t, w, w.Code).Data.ID
			}
		}()
	}
	wg.Wait()
	accepted := 0
	for i, c := range codes {
		if c == http.StatusAccepted {
			accepted++
		} else if c != http.StatusOK {
			t.Errorf("request %d: status %d; want 200 or 202", i, c)
		}
		if ids[i] != ids[0] {
			t.Errorf("request %d: import %s; want %s like the first", i, ids[i], ids[0])
		}
	}
	if accepted != 1 {
		t.Errorf("%d answers were 202; want exactly 1", accepted)
	}
}

// TestOrderImportLease: a claim whose lease expired is claimed again, and the first holder's
// late completion is refused, so the order is applied once.
func TestOrderImportLease(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	acme := e.accounts["acme"]
	imp, created, err := e.db.EnqueueImport(ctx, acme.ID, []byte(orderBody("L-1")), nil)
	if err != nil || !created {
		t.Fatalf("EnqueueImport = %v, %v", created, err)
	}
	first, err := e.db.ClaimImports(ctx, 10*time.Second, 10)
	if err != nil || len(first) != 1 || first[0].ID != imp.ID || first[0].Attempts != 1 {
		t.Fatalf("ClaimImports = %+v, %v; want the import, attempt 1", first, err)
	}
	// Within the lease nobody else gets it.
	if again, err := e.db.ClaimImports(ctx, 10*time.Second, 10); err != nil || len(again) != 0 {
		t.Fatalf("ClaimImports within the lease = %+v, %v; want none", again, err)
	}
	// The first holder "crashes"; the lease expires and the import is claimed again.
	e.setClock(testStart.Add(11 * time.Second))
	second, err := e.db.ClaimImports(ctx, 10*time.Second, 10)
	if err != nil || len(second) != 1 || second[0].Attempts != 2 {
		t.Fatalf("ClaimImports after the lease = %+v, %v; want the import, attempt 2", second, err)
	}
	complete := func(c ingest.Claim) (stale int, err error) {
		o, errs := ingest.Process(c, 10)
		return e.db.CompleteImports(ctx, []ingest.Completion{{Claim: c, Order: o, Errors: errs}})
	}
	if stale, err := complete(first[0]); err != nil || stale != 1 {
		t.Fatalf("CompleteImports(stale claim) = %d stale, %v; want 1 stale", stale, err)
	}
	if stale, err := complete(second[0]); err != nil || stale != 0 {
		t.Fatalf("CompleteImports(current claim) = %d stale, %v; want 0", stale, err)
	}
	if stale, err := complete(second[0]); err != nil || stale != 1 {
		t.Fatalf("CompleteImports twice = %d stale, %v; want 1 stale", stale, err)
	}
	got, err := e.db.OrderImport(ctx, acme.ID, imp.ID)
	if err != nil || got.Status != ingest.StatusProcessed || got.Attempts != 2 {
		t.Errorf("import = %+v, %v; want PROCESSED after 2 attempts", got, err)
	}
	if l, err := e.db.ListOrders(ctx, acme.ID, "", pageAll); err != nil || len(l.Items) != 1 {
		t.Errorf("orders = %d, %v; want 1", len(l.Items), err)
	}
}

var pageAll = store.Page{Number: 1, Size: 250}

// TestOrderImportOlderNeverOverwrites: when an older import of an order is processed after a
// newer one (a retry, a slow worker), the order keeps the newer content.
func TestOrderImportOlderNeverOverwrites(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	acme := e.accounts["acme"]
	older := strings.Replace(orderBody("O-1"), `"city":"Austin"`, `"city":"Old Town"`, 1)
	oldImp, _, err := e.db.EnqueueImport(ctx, acme.ID, []byte(older), nil)
	if err != nil {
		t.Fatal(err)
	}
	e.setClock(testStart.Add(time.Minute))
	newImp, _, err := e.db.EnqueueImport(ctx, acme.ID, []byte(orderBody("O-1")), nil)
	if err != nil {
		t.Fatal(err)
	}
	claims, err := e.db.ClaimImports(ctx, time.Minute, 10)
	if err != nil || len(claims) != 2 || claims[0].ID != oldImp.ID {
		t.Fatalf("ClaimImports = %+v, %v; want both, oldest first", claims, err)
	}
	for _, c := range []ingest.Claim{claims[1], claims[0]} { // newest first
		o, errs := ingest.Process(c, 10)
		if stale, err := e.db.CompleteImports(ctx, []ingest.Completion{{Claim: c, Order: o, Errors: errs}}); err != nil || stale != 0 {
			t.Fatalf("CompleteImports = %d stale, %v", stale, err)
		}
	}
	l, err := e.db.ListOrders(ctx, acme.ID, "O-1", pageAll)
	if err != nil || len(l.Items) != 1 {
		t.Fatalf("ListOrders = %d, %v; want 1", len(l.Items), err)
	}
	o := l.Items[0]
	if o.ImportID != newImp.ID || o.FulfillmentOrders[0].Destination.City != "Austin" {
		t.Errorf("order from import %s with city %q; want import %s with city Austin", o.ImportID, o.FulfillmentOrders[0].Destination.City, newImp.ID)
	}
	for _, id := range []string{oldImp.ID, newImp.ID} {
		if imp, err := e.db.OrderImport(ctx, acme.ID, id); err != nil || imp.Status != ingest.StatusProcessed {
			t.Errorf("import %s = %+v, %v; want PROCESSED", id, imp, err)
		}
	}
}

// TestOrderImportWorkerWakes: with the workers running, a new import is processed without a
// drain, woken by the endpoint rather than found by polling.
func TestOrderImportWorkerWakes(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.api.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run = %v", err)
		}
	}()
	acme := e.accounts["acme"]
	imp := decode[importAnswer](t, e.postOrder(acme.OrganizationID, acme.IngestSecret, orderBody("W-1")), http.StatusAccepted)
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := decode[struct {
			Data struct{ Status string } `json:"data"`
		}](t, e.do("GET", "/order_imports/"+imp.Data.ID, "all", nil), http.StatusOK)
		if got.Data.Status == ingest.StatusProcessed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("import still %s after 5 s", got.Data.Status)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestOrderImportCrossAccount: the same body from two accounts is two imports and two orders,
// each visible only to its account.
func TestOrderImportCrossAccount(t *testing.T) {
	e := newEnv(t)
	body := orderBody("C-1")
	a := decode[importAnswer](t, e.postOrder(e.accounts["acme"].OrganizationID, e.accounts["acme"].IngestSecret, body), http.StatusAccepted)
	b := decode[importAnswer](t, e.postOrder(e.accounts["other"].OrganizationID, e.accounts["other"].IngestSecret, body), http.StatusAccepted)
	if a.Data.ID == b.Data.ID {
		t.Fatalf("both accounts got import %s", a.Data.ID)
	}
	e.drain()
	for token, n := range map[string]int{"all": 1, "other": 1} {
		l := decode[struct {
			Data []struct {
				ID       string `json:"id"`
				ImportID string `json:"import_id"`
			} `json:"data"`
		}](t, e.do("GET", "/orders", token, nil), http.StatusOK)
		if len(l.Data) != n {
			t.Errorf("GET /orders as %s: %d orders; want %d", token, len(l.Data), n)
		}
	}
	if w := e.do("GET", "/order_imports/"+b.Data.ID, "all", nil); w.Code != http.StatusNotFound {
		t.Errorf("GET another account's import = %d; want 404", w.Code)
	}
}
