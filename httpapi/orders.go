package httpapi

import (
	"context"
	"errors"
	"net/http"

	"github.com/waybill/waybill/ingest"
	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/store"
)

// ingestState is the order import's: the signed endpoint and the channel on which it wakes
// the worker.
type ingestState struct {
	handler *ingest.Handler
	wake    chan struct{}
}

func (a *API) setupIngest() error {
	s := &ingestState{wake: make(chan struct{}, 1)}
	s.handler = &ingest.Handler{
		Inbox: a.db,
		Accepted: func() {
			select {
			case s.wake <- struct{}{}:
			default: // the worker is already due to look
			}
		},
		Error: func(w http.ResponseWriter, r *http.Request, err error) {
			var e *ingest.Error
			if errors.As(err, &e) {
				writeError(w, &Error{Status: e.Status, Code: e.Code, Message: e.Message})
				return
			}
			a.fail(w, r, err)
		},
	}
	wk := &ingest.Worker{Queue: a.db, Parallel: a.importLoops(), Wake: s.wake, Log: a.workerLog("order_import")}
	a.workers = append(a.workers, worker{name: "order_import", run: wk.Run, drain: wk.Drain})
	a.orders = s
	return nil
}

// importLoops is how many loops the import worker runs. On SQLite one keeps up: its claims
// and completions ride in the requests' group commits, and more loops only lengthen those
// commits (.ci/sustain: p99 61 ms with one, 242 ms with four). On PostgreSQL one loop is one
// connection among the requests' many and falls behind a sustained intake.
func (a *API) importLoops() int {
	if a.db.Dialect() == store.PostgreSQL {
		return 4
	}
	return 1
}

// orderImportHandler serves POST /webhook/custom-orders: it authenticates by signature, not
// by bearer token.
func (a *API) orderImportHandler() http.Handler { return a.orders.handler }

// orderImportView is an import as GET /order_imports/{id} shows it.
type orderImportView struct {
	ID          string                `json:"id"`
	OrderID     *string               `json:"order_id"`
	Status      string                `json:"status"`
	Errors      []shipping.FieldError `json:"errors"`
	Attempts    int                   `json:"attempts"`
	ReceivedAt  string                `json:"received_at"`
	ProcessedAt *string               `json:"processed_at"`
}

// orderView is an order as GET /orders and GET /orders/{id} show it.
type orderView struct {
	ingest.Order
	// ShipmentIDs are the shipments made for the order (orders to labels), oldest first.
	ShipmentIDs []string `json:"shipment_ids"`
	// FulfillmentStatus is FULFILLED once a label not voided ships the order
	// (shipping.FulfillmentStatus).
	FulfillmentStatus string `json:"fulfillment_status"`
	CreatedAt         string `json:"created_at"`
	UpdatedAt         string `json:"updated_at"`
}

// orderViews are the account's orders as shown, with their shipments (one query).
func (a *API) orderViews(ctx context.Context, acct string, orders ...ingest.Order) ([]orderView, error) {
	ids := make([]string, len(orders))
	for i, o := range orders {
		ids[i] = o.ID
	}
	shipments, err := a.db.OrderShipments(ctx, acct, ids)
	if err != nil {
		return nil, err
	}
	views := make([]orderView, len(orders))
	for i, o := range orders {
		views[i] = orderView{Order: o, ShipmentIDs: []string{}, FulfillmentStatus: shipping.FulfillmentStatus(shipments[o.ID]),
			CreatedAt: shipping.FormatTime(o.CreatedAt), UpdatedAt: shipping.FormatTime(o.UpdatedAt)}
		for _, s := range shipments[o.ID] {
			views[i].ShipmentIDs = append(views[i].ShipmentIDs, s.ID)
		}
	}
	return views, nil
}

// getOrderImport: GET /order_imports/{id}.
func (a *API) getOrderImport(w http.ResponseWriter, r *http.Request) error {
	imp, err := a.db.OrderImport(r.Context(), accountID(r), r.PathValue("id"))
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, newOrderImportView(imp))
	return nil
}

// listOrders: GET /orders[?order_id=…], newest first, offset pagination.
func (a *API) listOrders(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	p, err := parsePage(q)
	if err != nil {
		return err
	}
	orderID := q.Get("order_id")
	if len(orderID) > 255 {
		return invalidParameter("order_id", "order_id must be at most 255 characters")
	}
	l, err := a.db.ListOrders(r.Context(), accountID(r), orderID, p)
	if err != nil {
		return err
	}
	views, err := a.orderViews(r.Context(), accountID(r), l.Items...)
	if err != nil {
		return err
	}
	writeList(w, views, offsetMeta(p, l))
	return nil
}

// getOrder: GET /orders/{id}, by waybill's order id or, when no order has that id, by the
// sender's (order_id; percent-encoded, as it may hold slashes).
func (a *API) getOrder(w http.ResponseWriter, r *http.Request) error {
	o, err := ingest.FindOrder(r.Context(), a.db, accountID(r), r.PathValue("id"))
	if err != nil {
		return err
	}
	views, err := a.orderViews(r.Context(), accountID(r), o)
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, views[0])
	return nil
}

// orderShipmentRequest is the body of POST /orders/{id}/shipments: the shipment fields (as
// POST /shipments takes them) and which fulfillment order to ship.
type orderShipmentRequest struct {
	shipping.ShipmentRequest
	ingest.OrderShipment
}

// createOrderShipment: POST /orders/{id}/shipments creates a shipment for the order's
// fulfillment order (ingest.ShipmentRequest) through the one create path, and answers as
// POST /shipments does; 422 order_already_shipped while a label not voided ships the order,
// unless the body says "additional": true.
func (a *API) createOrderShipment(w http.ResponseWriter, r *http.Request) error {
	var body orderShipmentRequest
	if err := readJSON(w, r, &body); err != nil {
		return err
	}
	n, err := ingest.ShipOrder(r.Context(), a.db, accountID(r), r.PathValue("id"), body.OrderShipment, body.ShipmentRequest,
		a.db.Now().UTC())
	if err != nil {
		return err
	}
	return a.answerCreate(w, r.Context(), n)
}
