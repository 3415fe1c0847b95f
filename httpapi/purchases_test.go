package httpapi

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/store"
)

// TestUnresolvedPurchase: a purchase attempt left UNRESOLVED (its process died while a carrier
// that cannot be asked again sold) keeps its shipment from being bought again — 422
// purchase_unresolved — is listed by GET /admin/purchases and counted by the metric, until the
// operator resolves it; then the shipment is bought as usual.
func TestUnresolvedPurchase(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	s := e.createShipment(t, "ALL", "PDF")
	path := "/shipments/" + s.Data.ID + "/rates/" + s.Data.ShippingRates[0].ID

	// A purchase whose process died after its attempt was written, made UNRESOLVED by recovery.
	b := &shipping.Buyer{Store: e.db, Now: e.db.Now}
	r := shipping.BuyRequest{AccountID: e.accounts["acme"].ID, ShipmentID: s.Data.ID, RateID: s.Data.ShippingRates[0].ID}
	res, _, err := b.Reserve(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	p := r.PurchaseOf(res, e.db.Now())
	p.Durable = true
	if err := res.Prepare(ctx, p); err != nil {
		t.Fatal(err)
	}
	if _, err := b.ResolveAttempt(ctx, e.db, p.LabelID, true, ""); !errors.Is(err, shipping.ErrInvalidState) {
		t.Errorf("resolving a PENDING attempt = %v; want ErrInvalidState (recovery ends it)", err)
	}
	if err := e.db.UnresolveAttempt(ctx, p.LabelID); err != nil {
		t.Fatal(err)
	}
	res.Release(ctx) // the process is gone, and its holds with it; the attempt stays

	if code, _, body := e.buyRequest(path, ""); code != http.StatusUnprocessableEntity || !bytes.Contains(body, []byte(`"purchase_unresolved"`)) {
		t.Fatalf("buy of a shipment with an unresolved purchase = %d %s; want 422 purchase_unresolved", code, body)
	}
	list := decode[struct {
		Data []purchaseJSON
	}](t, e.do("GET", "/admin/purchases?state=UNRESOLVED", "admin", nil), http.StatusOK)
	if len(list.Data) != 1 || list.Data[0].LabelID != p.LabelID || list.Data[0].ShipmentID != s.Data.ID || list.Data[0].Carrier == "" {
		t.Fatalf("GET /admin/purchases?state=UNRESOLVED = %+v; want the attempt", list.Data)
	}
	if pending := decode[struct{ Data []purchaseJSON }](t, e.do("GET", "/admin/purchases?state=PENDING", "admin", nil), http.StatusOK); len(pending.Data) != 0 {
		t.Errorf("GET /admin/purchases?state=PENDING = %+v; want none", pending.Data)
	}
	if got := e.scrape()["waybill_purchases_unresolved"]; got != 1 {
		t.Errorf("waybill_purchases_unresolved = %v; want 1", got)
	}

	if _, err := b.ResolveAttempt(ctx, e.db, p.LabelID, false, "not a code!"); err == nil {
		t.Error("resolving with a tracking code no label can carry: no error")
	}
	if _, err := b.ResolveAttempt(ctx, e.db, p.LabelID, true, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := b.ResolveAttempt(ctx, e.db, p.LabelID, true, ""); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("resolving an attempt already resolved = %v; want ErrNotFound", err)
	}
	if got := e.scrape()["waybill_purchases_unresolved"]; got != 0 {
		t.Errorf("waybill_purchases_unresolved once resolved = %v; want 0", got)
	}
	if code, _, body := e.buyRequest(path, ""); code != http.StatusOK {
		t.Fatalf("buy once the purchase is resolved = %d %s", code, body)
	}
}
