package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"net/http"
	"slices"
	"time"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/shipping/carrier"
	"github.com/waybill/waybill/store"
)

// setupCarriers seeds the sample carriers into a new database and checks that no stored
// carrier has the name of one of the host's (an error at New).
func (a *API) setupCarriers(ctx context.Context) error {
	a.ship.carriers = &carrier.Registry{Store: a.db, Host: a.cfg.Carriers, Now: a.now, Log: a.log}
	if err := a.db.SeedCarriers(ctx, carrier.SampleCards()); err != nil {
		return err
	}
	return a.ship.carriers.Open(ctx)
}

// carriers returns the current carriers.
func (a *API) carriers(ctx context.Context) (*carrier.Set, error) {
	return a.ship.carriers.Current(ctx)
}

// carrier returns the named carrier of the carriers last loaded (carrier.Registry.Last).
func (a *API) carrier(name string) (shipping.Carrier, bool) { return a.ship.carriers.Last(name) }

func (a *API) today() string { return a.db.Now().UTC().Format(time.DateOnly) }

// putCarrier: PUT /admin/carriers/{code} with a card. 201 when it creates the carrier, 200 when
// it adds a version; with ?dry_run=true, 200 with the changes and nothing stored.
func (a *API) putCarrier(w http.ResponseWriter, r *http.Request) error {
	dryRun, err := boolParam(r, "dry_run")
	if err != nil {
		return err
	}
	body, err := readLimited(w, r, "application/json", maxCardBody, true)
	if err != nil {
		return err
	}
	if body == nil {
		return errEmptyBody
	}
	var card carrier.Card
	if err := decodeStrict(body, &card); err != nil {
		return err
	}
	put, err := a.ship.carriers.Put(r.Context(), r.PathValue("code"), &card, dryRun)
	if err != nil {
		return err
	}
	return a.writeCarrierPut(w, put, dryRun)
}

// putPriceGrid: PUT /admin/carriers/{code}/services/{service}/prices?effective_from=D with a
// CSV grid: a version equal to the one in force on D but for that service's prices.
func (a *API) putPriceGrid(w http.ResponseWriter, r *http.Request) error {
	dryRun, err := boolParam(r, "dry_run")
	if err != nil {
		return err
	}
	from := r.URL.Query().Get("effective_from")
	if _, err := time.Parse(time.DateOnly, from); from != "" && err != nil {
		return invalidParameter("effective_from", "effective_from must be a date, YYYY-MM-DD")
	}
	body, err := readBodyOf(w, r, "text/csv")
	if err != nil {
		return err
	}
	breaks, prices, err := carrier.ParsePriceGrid(bytes.NewReader(body))
	if err != nil {
		return err
	}
	put, err := a.ship.carriers.PutPriceGrid(r.Context(), r.PathValue("code"), r.PathValue("service"), from, breaks, prices, dryRun)
	if err != nil {
		return err
	}
	return a.writeCarrierPut(w, put, dryRun)
}

// writeCarrierPut answers a PUT with the version it stored, as GET ?version=N
// shows it, whether or not that version is in force today: in_force_version says which is. A
// dry run answers the version it would have stored, with its changes.
func (a *API) writeCarrierPut(w http.ResponseWriter, put carrier.Put, dryRun bool) error {
	v := put.Carrier.View(put.Carrier.Versions[len(put.Carrier.Versions)-1], a.today())
	if dryRun {
		v.Changes = put.Changes
		writeData(w, http.StatusOK, v)
		return nil
	}
	status := http.StatusOK
	if put.Created {
		status = http.StatusCreated
	}
	writeData(w, status, v)
	return nil
}

// getCarrier: GET /admin/carriers/{code}, the version in force today, or with ?version=N any
// stored version (404 for one not stored).
func (a *API) getCarrier(w http.ResponseWriter, r *http.Request) error {
	version, err := intParam(r.URL.Query(), "version", 0, 1, math.MaxInt32)
	if err != nil {
		return err
	}
	c, err := a.db.Carrier(r.Context(), r.PathValue("code"))
	if err != nil {
		return err
	}
	var v *carrier.Version // the one shown today
	if version != 0 {
		i := slices.IndexFunc(c.Versions, func(v *carrier.Version) bool { return v.Version == int64(version) })
		if i < 0 {
			return errNotFound
		}
		v = c.Versions[i]
	}
	view, err := a.ship.carriers.View(r.Context(), c, v)
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, view)
	return nil
}

// listCarriers: GET /admin/carriers, the stored carriers that are not deleted, by code.
func (a *API) listCarriers(w http.ResponseWriter, r *http.Request) error {
	p, err := parsePage(r.URL.Query())
	if err != nil {
		return err
	}
	stored, _, err := a.db.Carriers(r.Context())
	if err != nil {
		return err
	}
	stored = slices.DeleteFunc(stored, func(c *carrier.Stored) bool { return c.Deleted })
	// Each carrier is viewed and encoded before the next: a real-size card decoded is several
	// times its JSON, and a page of them all at once went far past the server's memory limit.
	var items [][]byte
	from := min(len(stored), (p.Number-1)*p.Size)
	for _, c := range stored[from:min(len(stored), from+p.Size)] {
		v, err := a.ship.carriers.View(r.Context(), c, nil)
		if err != nil {
			return err
		}
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		items = append(items, b)
	}
	writeEncodedList(w, items, offsetMeta(p, store.List[carrier.View]{Total: len(stored),
		HasNext: from+p.Size < len(stored), HasPrev: p.Number > 1}))
	return nil
}

// deleteCarrier: DELETE /admin/carriers/{code}. 422 carrier_in_use while a profile names it.
func (a *API) deleteCarrier(w http.ResponseWriter, r *http.Request) error {
	if err := a.db.DeleteCarrier(r.Context(), r.PathValue("code")); err != nil {
		return err
	}
	a.ship.carriers.Refresh()
	w.WriteHeader(http.StatusNoContent)
	return nil
}
