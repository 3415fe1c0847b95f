package httpapi

import (
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
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
}

func newOrderView(o ingest.Order) orderView {
	return orderView{Order: o, CreatedAt: shipping.FormatTime(o.CreatedAt), UpdatedAt: shipping.FormatTime(o.UpdatedAt)}
}

// orderStamp formats a timestamp as RFC 3339 UTC with microseconds.
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
	views := make([]orderView, len(l.Items))
	for i, o := range l.Items {
		views[i] = newOrderView(o)
	}
	writeList(w, views, offsetMeta(p, l))
	return nil
}

// getOrder: GET /orders/{id}, by waybill's order id or, when no order has that id, by the
// sender's (order_id; percent-encoded, as it may hold slashes).
func (a *API) getOrder(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	o, err := a.db.Order(r.Context(), accountID(r), id)
	if errors.Is(err, store.ErrNotFound) && len(id) <= 255 {
		l, lerr := a.db.ListOrders(r.Context(), accountID(r), id, store.Page{Number: 1, Size: 1})
		if lerr != nil {
			return lerr
		}
		if len(l.Items) == 1 {
			o, err = l.Items[0], nil
		}
	}
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, newOrderView(o))
	return nil
}
