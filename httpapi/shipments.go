package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/shipping/carrier"
	"github.com/waybill/waybill/shipping/rating"
	"github.com/waybill/waybill/store"
)

// shippingState is the rate shopping side of the API: the carriers, the compiled profiles and
// the one create path.
type shippingState struct {
	carriers *carrier.Registry
	profiles *rating.Profiles
	creator  *shipping.Creator
}

func (a *API) setupShipping() error {
	a.ship = &shippingState{}
	ctx := context.Background()
	if err := a.setupCarriers(ctx); err != nil {
		return err
	}
	a.ship.profiles = &rating.Profiles{Store: a.db, Carriers: a.ship.carriers, Now: a.now}
	a.ship.creator = &shipping.Creator{Store: a.db, Shopper: a.ship.profiles, Now: a.now, NewID: a.newID}
	// The default profile is seeded once; an operator's replacement is never overwritten.
	return a.db.SeedProfile(ctx, shipping.DefaultProfileKey, rating.DefaultProfile())
}

func (a *API) createShipment(w http.ResponseWriter, r *http.Request) error {
	var req shipping.ShipmentRequest
	if err := readJSON(w, r, &req); err != nil {
		return err
	}
	return a.answerCreate(w, r.Context(), shipping.NewShipment{AccountID: accountID(r), Request: &req})
}

// answerCreate creates the shipment req asks for (for the order, if one) and answers 201 with
// it: POST /shipments, and POST /orders/{id}/shipments. With buy_cheapest_rate the cheapest
// rate is bought in the same call and the answer is the purchased shipment.
func (a *API) answerCreate(w http.ResponseWriter, ctx context.Context, n shipping.NewShipment) error {
	s, rendered, err := a.ship.creator.Create(ctx, n)
	if err != nil {
		return err
	}
	if n.Request.BuyCheapestRate {
		cheapest, _ := shipping.Cheapest(s.ShippingRates)
		_, rendered, _, err := a.buy(ctx, n.AccountID, s.ID, cheapest.ID, 0, false, "")
		if err != nil {
			return err
		}
		a.writeStoredData(w, http.StatusCreated, rendered)
		return nil
	}
	// The stored rendering is the answer: the shipment is encoded once.
	a.writeStoredData(w, http.StatusCreated, rendered)
	return nil
}

// maxFilterValues bounds how many values one list filter takes.
const maxFilterValues = 100

// listValues reads a multi-valued filter: comma-separated and/or repeated (name, name[] or an
// older name the filter replaced). The values are counted before any of them is looked at, so
// a hostile list costs one pass over the query, never more.
func listValues(q url.Values, name string, older ...string) ([]string, error) {
	raws := append(q[name][:len(q[name]):len(q[name])], q[name+"[]"]...)
	for _, o := range older {
		raws = append(raws, q[o]...)
	}
	if len(raws) > maxFilterValues {
		return nil, invalidParameter(name, name+" takes at most 100 values")
	}
	n := 0
	for _, raw := range raws {
		if n += strings.Count(raw, ",") + 1; n > maxFilterValues {
			return nil, invalidParameter(name, name+" takes at most 100 values")
		}
	}
	var out []string
	for _, raw := range raws {
		for _, v := range strings.Split(raw, ",") {
			if v = strings.TrimSpace(v); v != "" && !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
	}
	return out, nil
}

// dateParam reads an optional YYYY-MM-DD parameter.
func dateParam(q url.Values, name string) (time.Time, error) {
	s := q.Get(name)
	if s == "" {
		return time.Time{}, nil
	}
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return time.Time{}, invalidParameter(name, name+" must be a date YYYY-MM-DD")
	}
	return d, nil
}

// shipmentFilter reads GET /shipments' filters.
func shipmentFilter(q url.Values) (store.ShipmentFilter, error) {
	var f store.ShipmentFilter
	var err error
	// status is the single filter statuses replaced (on 2026-07-09): an older
	// client's status=OPEN narrows the list as it meant to, rather than being ignored.
	if f.Statuses, err = listValues(q, "statuses", "status"); err != nil {
		return f, err
	}
	for _, s := range f.Statuses {
		if !slices.Contains(shipping.ShipmentStatuses, s) {
			name := "statuses"
			if !q.Has("statuses") && !q.Has("statuses[]") {
				name = "status" // the older single filter alone
			}
			return f, invalidParameter(name, name+" must be among OPEN, SHIPPING_LABEL_PURCHASED, CANCELLED")
		}
	}
	if f.Brands, err = listValues(q, "brands"); err != nil {
		return f, err
	}
	if f.Carriers, err = listValues(q, "carriers"); err != nil {
		return f, err
	}
	if f.CreatedFrom, err = dateParam(q, "start_date"); err != nil {
		return f, err
	}
	end, err := dateParam(q, "end_date")
	if err != nil {
		return f, err
	}
	if !end.IsZero() {
		// end_date is inclusive: everything before the next midnight.
		f.CreatedBefore = end.AddDate(0, 0, 1)
		if !f.CreatedFrom.IsZero() && end.Before(f.CreatedFrom) {
			return f, invalidParameter("end_date", "end_date must not be before start_date")
		}
	}
	switch dir := q.Get("order_direction"); strings.ToUpper(dir) {
	case "", "DESC":
	case "ASC":
		f.Asc = true
	default:
		return f, invalidParameter("order_direction", "order_direction must be ASC or DESC")
	}
	return f, nil
}

func (a *API) listShipments(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	f, err := shipmentFilter(q)
	if err != nil {
		return err
	}
	k, cursor, err := parseKeyset(a.docs.unsealCursors(q))
	if err != nil {
		return err
	}
	var p store.Page
	if !cursor {
		if p, err = parsePage(q); err != nil {
			return err
		}
	}
	var keyset *store.Keyset
	if cursor {
		keyset = &k
	}
	// The shipments' stored renderings (store.ShipmentJSON), linked.
	l, err := a.db.ListShipmentsJSON(r.Context(), accountID(r), f, p, keyset)
	if err != nil {
		return err
	}
	if cursor {
		a.writeStoredList(w, l.Items, a.docs.sealMeta(keysetMeta(k, l)))
	} else {
		a.writeStoredList(w, l.Items, offsetMeta(p, l))
	}
	return nil
}

func (a *API) getShipment(w http.ResponseWriter, r *http.Request) error {
	body, err := a.db.ShipmentJSON(r.Context(), accountID(r), r.PathValue("id"))
	if err != nil {
		return err
	}
	a.writeStoredData(w, http.StatusOK, body)
	return nil
}

// shipmentPatch is the body of PATCH /shipments/{id}; raw values tell absent from null.
type shipmentPatch struct {
	CustomReference1 json.RawMessage `json:"custom_reference_1" nullable:"true"`
	CustomReference2 json.RawMessage `json:"custom_reference_2" nullable:"true"`
}

// optionalString reads one field of a patch: absent leaves it, null clears it.
func optionalString(v *shipping.ValidationError, field string, raw json.RawMessage) store.OptionalString {
	if raw == nil {
		return store.OptionalString{}
	}
	if string(raw) == "null" {
		return store.OptionalString{Set: true}
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		v.Add(field, "invalid_type", "must be a string or null")
		return store.OptionalString{}
	}
	if err := shipping.CheckReference(field, s); err != nil {
		v.Fields = append(v.Fields, err.(*shipping.ValidationError).Fields...)
	}
	return store.OptionalString{Set: true, Value: &s}
}

func (a *API) updateShipment(w http.ResponseWriter, r *http.Request) error {
	var body shipmentPatch
	if err := readJSON(w, r, &body); err != nil {
		return err
	}
	var v shipping.ValidationError
	ref1 := optionalString(&v, "custom_reference_1", body.CustomReference1)
	ref2 := optionalString(&v, "custom_reference_2", body.CustomReference2)
	if err := v.Err(); err != nil {
		return err
	}
	s, err := a.db.UpdateShipmentReferences(r.Context(), accountID(r), r.PathValue("id"), ref1, ref2)
	if err != nil {
		return err
	}
	a.linkShipments(s)
	writeData(w, http.StatusOK, s)
	return nil
}

func (a *API) listProfiles(w http.ResponseWriter, r *http.Request) error {
	p, err := parsePage(r.URL.Query())
	if err != nil {
		return err
	}
	l, err := a.db.ListProfiles(r.Context(), p)
	if err != nil {
		return err
	}
	writeList(w, l.Items, offsetMeta(p, l))
	return nil
}

func (a *API) getProfile(w http.ResponseWriter, r *http.Request) error {
	p, err := a.db.Profile(r.Context(), r.PathValue("profile_key"))
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, p)
	return nil
}

func (a *API) putProfile(w http.ResponseWriter, r *http.Request) error {
	var in rating.ProfileInput
	if err := readJSON(w, r, &in); err != nil {
		return err
	}
	p, created, err := a.ship.profiles.Put(r.Context(), r.PathValue("key"), in)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeData(w, status, p)
	return nil
}
