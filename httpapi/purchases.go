package httpapi

import (
	"net/http"

	"github.com/waybill/waybill/shipping"
)

// purchaseJSON is a purchase attempt as GET /admin/purchases shows it: never its key's
// fingerprint.
type purchaseJSON struct {
	LabelID        string  `json:"label_id"`
	AccountID      string  `json:"account_id"`
	ShipmentID     string  `json:"shipment_id"`
	RateID         string  `json:"rate_id"`
	Carrier        string  `json:"carrier"`
	State          string  `json:"state"`
	IdempotencyKey *string `json:"idempotency_key"`
	StartedAt      string  `json:"started_at"`
}

// listPurchases: GET /admin/purchases[?state=PENDING|UNRESOLVED], the purchase attempts not yet
// ended, of every account, the oldest first. An UNRESOLVED one waits for the operator's finding
// at the carrier (waybill purchase resolve).
func (a *API) listPurchases(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	p, err := parsePage(q)
	if err != nil {
		return err
	}
	state := q.Get("state")
	if q.Has("state") && state != shipping.AttemptPending && state != shipping.AttemptUnresolved {
		return invalidParameter("state", "must be PENDING or UNRESOLVED")
	}
	l, err := a.db.ListAttempts(r.Context(), state, p)
	if err != nil {
		return err
	}
	views := make([]purchaseJSON, len(l.Items))
	for i, at := range l.Items {
		views[i] = purchaseJSON{LabelID: at.LabelID, AccountID: at.AccountID, ShipmentID: at.ShipmentID, RateID: at.RateID,
			Carrier: at.Carrier, State: at.State, StartedAt: shipping.FormatTime(at.StartedAt)}
		if at.Key != "" {
			views[i].IdempotencyKey = &at.Key
		}
	}
	writeList(w, views, offsetMeta(p, l))
	return nil
}
