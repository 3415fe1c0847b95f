package httpapi

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net/http"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/store"
)

// carrierSet is the carriers at one count of stored changes: the host's Go carriers beside the
// stored ones, compiled.
type carrierSet struct {
	changes int64
	today   string                      // the date the set was made for: versions no longer in force leave it
	shopper *shipping.Shopper           // the quotable carriers: the host's and the stored ones not deleted
	all     map[string]shipping.Carrier // deleted stored carriers too: their labels still void, track and bill
	names   []string                    // the quotable carriers' names, which profiles may name
}

// carrierCache owns the compiled carriers. It is checked against the stored count of changes
// at most once a millisecond (the same bound as token revocations): a carrier stored or deleted
// through another process sharing the database is quoted, or no longer, within it; one changed
// through this process at once (refresh).
type carrierCache struct {
	host    []shipping.Carrier
	set     atomic.Pointer[carrierSet]
	checked atomic.Int64 // unix nanoseconds of the last check

	mu sync.Mutex // one reload at a time
}

const carrierRecheck = time.Millisecond

// carriers returns the current carriers.
func (a *API) carriers(ctx context.Context) (*carrierSet, error) {
	c := &a.ship.carriers
	if s := c.set.Load(); s != nil && time.Since(time.Unix(0, c.checked.Load())) < carrierRecheck {
		return s, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.set.Load()
	if s != nil && time.Since(time.Unix(0, c.checked.Load())) < carrierRecheck {
		return s, nil // another caller checked meanwhile
	}
	checked := time.Now()
	n, err := a.db.CarrierChanges(ctx)
	if err != nil {
		return nil, err
	}
	if s == nil || n != s.changes || s.today != a.today() {
		if s, err = a.loadCarriers(ctx); err != nil {
			return nil, err
		}
		c.set.Store(s)
	}
	c.checked.Store(checked.UnixNano())
	return s, nil
}

// refreshCarriers makes the next carriers call read the stored carriers again: after a change
// through this process, so the change applies to the very next request.
func (a *API) refreshCarriers() { a.ship.carriers.checked.Store(0) }

// loadCarriers reads the stored carriers' outlines beside the host's carriers. A version is
// compiled on the first quote that needs it (shipping.CarrierVersion.Load); a version in force
// today or later that the current set has is carried over, compiled, so a change to one carrier
// compiles only its new version, and one no longer in force is let go. A stored carrier with
// the name of one of the host's is left out (New refuses to start with one; the command line
// could store one later) and logged.
func (a *API) loadCarriers(ctx context.Context) (*carrierSet, error) {
	today := a.today()
	stored, changes, err := a.db.Carriers(ctx)
	if err != nil {
		return nil, err
	}
	if old := a.ship.carriers.set.Load(); old != nil {
		for _, sc := range stored {
			if tc, ok := old.all[sc.Code].(*shipping.TableCarrier); ok {
				sc.Versions = carriedOver(tc.Versions(), sc.Versions, today)
			}
		}
	}
	s := &carrierSet{changes: changes, today: today, all: map[string]shipping.Carrier{}}
	quotable := slices.Clone(a.ship.carriers.host)
	for _, c := range quotable {
		s.all[c.Name()] = c
	}
	for _, sc := range stored {
		if _, taken := s.all[sc.Code]; taken {
			a.log.Error("stored carrier ignored: the host has a Go carrier of that name", "carrier", sc.Code)
			continue
		}
		tc := shipping.NewTableCarrier(sc.Code, sc.Versions)
		s.all[sc.Code] = tc
		if !sc.Deleted {
			quotable = append(quotable, tc)
		}
	}
	if err := compileInForce(ctx, stored, today); err != nil {
		return nil, err
	}
	s.shopper = shipping.NewShopper(quotable...)
	for _, c := range quotable {
		s.names = append(s.names, c.Name())
	}
	return s, nil
}

// compileInForce compiles the stored carriers' versions in force today that are not yet (after
// a change, only the new ones), side by side on every core, before the set serves: the first
// quote after a start or a change does not compile them one by one. Versions in force later
// are compiled by the first quote that needs them.
func compileInForce(ctx context.Context, stored []*store.StoredCarrier, today string) error {
	var wg sync.WaitGroup
	errs := make(chan error, len(stored))
	slots := make(chan struct{}, runtime.GOMAXPROCS(0))
	for _, sc := range stored {
		v := shipping.InForce(sc.Versions, today)
		if sc.Deleted || v == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			slots <- struct{}{}
			defer func() { <-slots }()
			errs <- v.Compile(ctx)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// carriedOver is versions read anew, where those in force today or later are replaced by the
// same versions of compiled (versions never change), compiled or not.
func carriedOver(compiled, versions []*shipping.CarrierVersion, today string) []*shipping.CarrierVersion {
	out := slices.Clone(versions)
	for _, v := range shipping.InForceFrom(versions, today) {
		i := slices.IndexFunc(out, func(o *shipping.CarrierVersion) bool { return o.Version == v.Version })
		if j := slices.IndexFunc(compiled, func(o *shipping.CarrierVersion) bool { return o.Version == v.Version }); j >= 0 {
			out[i] = compiled[j]
		}
	}
	return out
}

// setupCarriers seeds the sample carriers into a new database and checks that no stored
// carrier has the name of one of the host's (DESIGN §11: an error at New).
func (a *API) setupCarriers(ctx context.Context) error {
	a.ship.carriers.host = a.cfg.Carriers
	if err := a.db.SeedCarriers(ctx, shipping.SampleCards()); err != nil {
		return err
	}
	stored, _, err := a.db.Carriers(ctx)
	if err != nil {
		return err
	}
	for _, sc := range stored {
		for _, c := range a.cfg.Carriers {
			if c.Name() == sc.Code {
				return fmt.Errorf("httpapi: carrier %s is both a Go carrier (Config.Carriers) and a stored carrier", sc.Code)
			}
		}
	}
	_, err = a.carriers(ctx) // loaded before the first request
	return err
}

// carrierNow finds a carrier by its code, deleted stored carriers included (for buying and
// voiding), after bringing the carriers up to date.
func (a *API) carrierNow(ctx context.Context, name string) (shipping.Carrier, bool, error) {
	if _, err := a.carriers(ctx); err != nil {
		return nil, false, err
	}
	c, ok := a.carrier(name)
	return c, ok, nil
}

// carrier returns the named carrier of the carriers last loaded, deleted stored carriers
// included (for naming the services of labels). It never reads the database.

func (a *API) carrier(name string) (shipping.Carrier, bool) {
	s := a.ship.carriers.set.Load()
	if s == nil {
		return nil, false
	}
	c, ok := s.all[name]
	return c, ok
}

// carrierView is a stored carrier as GET /admin/carriers/{code} answers it: the card of one
// version (the one in force today unless asked for another), that version and the one in force
// today (null before any is), every version, and the tracking serials left.
type carrierView struct {
	shipping.Card
	Version        int64                  `json:"version"`
	InForceVersion *int64                 `json:"in_force_version"`
	Tracking       trackingView           `json:"tracking"`
	Versions       []versionView          `json:"versions"`
	CreatedAt      shipping.Timestamp     `json:"created_at"`
	UpdatedAt      shipping.Timestamp     `json:"updated_at"`
	Changes        []shipping.PriceChange `json:"changes,omitempty"` // a dry run's
}

type trackingView struct {
	shipping.TrackingScheme
	NextSerial int64 `json:"next_serial"`
	Remaining  int64 `json:"remaining"`
}

type versionView struct {
	Version       int64              `json:"version"`
	EffectiveFrom string             `json:"effective_from"`
	CreatedAt     shipping.Timestamp `json:"created_at"`
}

// viewOf shows c on today's date: the version in force, or before any is, the first to come,
// whose card alone it reads whole.
func (a *API) viewOf(ctx context.Context, c *store.StoredCarrier, today string) (carrierView, error) {
	return a.wholeVersionOf(ctx, c, shipping.Shown(c.Versions, today), today)
}

// wholeVersionOf shows c at version v (an outline), reading its whole card.
func (a *API) wholeVersionOf(ctx context.Context, c *store.StoredCarrier, v *shipping.CarrierVersion, today string) (carrierView, error) {
	card, err := a.db.CarrierCard(ctx, c.Code, v.Version)
	if err != nil {
		return carrierView{}, err
	}
	return versionOf(c, &shipping.CarrierVersion{Version: v.Version, CreatedAt: v.CreatedAt, Card: card}, today), nil
}

// versionOf shows c at version v, whose card is whole, beside the version in force today.
func versionOf(c *store.StoredCarrier, v *shipping.CarrierVersion, today string) carrierView {
	t := v.Card.Tracking
	next := max(c.NextSerial, t.RangeStart)
	out := carrierView{Card: *v.Card, Version: v.Version, CreatedAt: shipping.Timestamp{Time: c.CreatedAt},
		UpdatedAt: shipping.Timestamp{Time: c.UpdatedAt},
		Tracking:  trackingView{TrackingScheme: t, NextSerial: next, Remaining: max(0, t.RangeEnd-next+1)}}
	if f := shipping.InForce(c.Versions, today); f != nil {
		out.InForceVersion = &f.Version
	}
	for _, o := range c.Versions {
		out.Versions = append(out.Versions, versionView{o.Version, o.Card.EffectiveFrom, shipping.Timestamp{Time: o.CreatedAt}})
	}
	return out
}

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
	var card shipping.Card
	if err := decodeStrict(body, &card); err != nil {
		return err
	}
	code := r.PathValue("code")
	if slices.ContainsFunc(a.cfg.Carriers, func(c shipping.Carrier) bool { return c.Name() == code }) {
		var v shipping.ValidationError
		v.Add("code", "taken", "is the name of a carrier the host application provides in Go")
		return v.Err()
	}
	put, err := a.db.PutCarrier(r.Context(), code, &card, dryRun)
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
	breaks, prices, err := shipping.ParsePriceGrid(bytes.NewReader(body))
	if err != nil {
		return err
	}
	put, err := a.db.PutPriceGrid(r.Context(), r.PathValue("code"), r.PathValue("service"), from, breaks, prices, dryRun)
	if err != nil {
		return err
	}
	return a.writeCarrierPut(w, put, dryRun)
}

// writeCarrierPut answers a PUT with the version it stored (DESIGN §16), as GET ?version=N
// shows it, whether or not that version is in force today: in_force_version says which is. A
// dry run answers the version it would have stored, with its changes.
func (a *API) writeCarrierPut(w http.ResponseWriter, put store.CarrierPut, dryRun bool) error {
	v := versionOf(put.Carrier, put.Carrier.Versions[len(put.Carrier.Versions)-1], a.today())
	if dryRun {
		v.Changes = put.Changes
		writeData(w, http.StatusOK, v)
		return nil
	}
	a.refreshCarriers()
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
	today := a.today()
	v := shipping.Shown(c.Versions, today)
	if version != 0 {
		i := slices.IndexFunc(c.Versions, func(v *shipping.CarrierVersion) bool { return v.Version == int64(version) })
		if i < 0 {
			return errNotFound
		}
		v = c.Versions[i]
	}
	view, err := a.wholeVersionOf(r.Context(), c, v, today)
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
	stored = slices.DeleteFunc(stored, func(c *store.StoredCarrier) bool { return c.Deleted })
	views := []carrierView{}
	today := a.today()
	from := min(len(stored), (p.Number-1)*p.Size)
	for _, c := range stored[from:min(len(stored), from+p.Size)] {
		v, err := a.viewOf(r.Context(), c, today)
		if err != nil {
			return err
		}
		views = append(views, v)
	}
	writeList(w, views, offsetMeta(p, store.List[carrierView]{Total: len(stored),
		HasNext: from+p.Size < len(stored), HasPrev: p.Number > 1}))
	return nil
}

// deleteCarrier: DELETE /admin/carriers/{code}. 422 carrier_in_use while a profile names it.
func (a *API) deleteCarrier(w http.ResponseWriter, r *http.Request) error {
	if err := a.db.DeleteCarrier(r.Context(), r.PathValue("code")); err != nil {
		return err
	}
	a.refreshCarriers()
	w.WriteHeader(http.StatusNoContent)
	return nil
}
