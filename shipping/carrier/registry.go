package carrier

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/waybill/waybill/shipping"
)

// Stored is a carrier stored as data: its versions' outlines, each card
// read whole when a version is compiled (Version.Load).
type Stored struct {
	Code       string
	Deleted    bool
	NextSerial int64 // the next serial the store hands out, unless the range start in force is above it
	CreatedAt  time.Time
	UpdatedAt  time.Time
	Versions   []*Version
}

// Store is what the registry reads, and writes a version through (Writer).
type Store interface {
	Writer
	// CarrierChanges is the count of changes of the stored carriers.
	CarrierChanges(ctx context.Context) (int64, error)
	// Carriers reads every stored carrier, deleted ones too, with the count of changes read.
	Carriers(ctx context.Context) ([]*Stored, int64, error)
	// CarrierCard reads the whole card of a stored version; shipping.ErrNotFound when not stored.
	CarrierCard(ctx context.Context, code string, version int64) (*Card, error)
}

// Set is the carriers at one count of stored changes: the host's Go carriers beside the
// stored ones, compiled.
type Set struct {
	changes int64
	today   string // the date the set was made for: versions no longer in force leave it
	// Quotable are the carriers rate shopping may quote, by name: the host's and the stored ones
	// not deleted.
	Quotable map[string]shipping.Carrier
	All      map[string]shipping.Carrier // deleted stored carriers too: their labels still void, track and bill
	Names    []string                    // the quotable carriers' names, which profiles may name
}

// Registry owns the compiled carriers. It is checked against the stored count of changes at
// most once a millisecond: a carrier stored or deleted through another process sharing the
// database is quoted, or no longer, within it; one changed through this process at once
// (Refresh). A stored carrier with the name of one of the host's is left out and logged.
type Registry struct {
	Store Store
	Host  []shipping.Carrier
	Now   func() time.Time
	Log   *slog.Logger

	set     atomic.Pointer[Set]
	checked atomic.Int64 // unix nanoseconds of the last check
	mu      sync.Mutex   // one reload at a time
}

const carrierRecheck = time.Millisecond

// Open checks that no stored carrier has the name of one of the host's (an error: each name is
// one carrier), and loads the carriers before the first request needs them.
func (r *Registry) Open(ctx context.Context) error {
	stored, _, err := r.Store.Carriers(ctx)
	if err != nil {
		return err
	}
	for _, sc := range stored {
		for _, c := range r.Host {
			if c.Name() == sc.Code {
				return fmt.Errorf("carrier %s is both a Go carrier (Config.Carriers) and a stored carrier", sc.Code)
			}
		}
	}
	_, err = r.Current(ctx)
	return err
}

func (r *Registry) today() string { return r.Now().UTC().Format(time.DateOnly) }

// Current returns the current carriers.
func (r *Registry) Current(ctx context.Context) (*Set, error) {
	if s := r.set.Load(); s != nil && time.Since(time.Unix(0, r.checked.Load())) < carrierRecheck {
		return s, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.set.Load()
	if s != nil && time.Since(time.Unix(0, r.checked.Load())) < carrierRecheck {
		return s, nil // another caller checked meanwhile
	}
	checked := time.Now()
	n, err := r.Store.CarrierChanges(ctx)
	if err != nil {
		return nil, err
	}
	if s == nil || n != s.changes || s.today != r.today() {
		if s, err = r.load(ctx); err != nil {
			return nil, err
		}
		r.set.Store(s)
	}
	r.checked.Store(checked.UnixNano())
	return s, nil
}

// Refresh makes the next Current read the stored carriers again: after a change through this
// process, so the change applies to the very next request.
func (r *Registry) Refresh() { r.checked.Store(0) }

// Find finds a carrier by its code, deleted stored carriers included (for buying and voiding),
// after bringing the carriers up to date.
func (r *Registry) Find(ctx context.Context, code string) (shipping.Carrier, bool, error) {
	if _, err := r.Current(ctx); err != nil {
		return nil, false, err
	}
	c, ok := r.Last(code)
	return c, ok, nil
}

// Last returns the named carrier of the carriers last loaded, deleted stored carriers included
// (for naming the services of labels). It never reads the database.
func (r *Registry) Last(code string) (shipping.Carrier, bool) {
	s := r.set.Load()
	if s == nil {
		return nil, false
	}
	c, ok := s.All[code]
	return c, ok
}

// load reads the stored carriers' outlines beside the host's carriers. A version is compiled on
// the first quote that needs it (Version.Load); a version in force today or later that
// the current set has is carried over, compiled, so a change to one carrier compiles only its
// new version, and one no longer in force is let go.
func (r *Registry) load(ctx context.Context) (*Set, error) {
	today := r.today()
	stored, changes, err := r.Store.Carriers(ctx)
	if err != nil {
		return nil, err
	}
	if old := r.set.Load(); old != nil {
		for _, sc := range stored {
			if tc, ok := old.All[sc.Code].(*Table); ok {
				sc.Versions = carriedOver(tc.Versions(), sc.Versions, today)
			}
		}
	}
	s := &Set{changes: changes, today: today, All: map[string]shipping.Carrier{}}
	quotable := slices.Clone(r.Host)
	for _, c := range quotable {
		s.All[c.Name()] = c
	}
	for _, sc := range stored {
		if _, taken := s.All[sc.Code]; taken {
			if r.Log != nil {
				r.Log.Error("stored carrier ignored: the host has a Go carrier of that name", "carrier", sc.Code)
			}
			continue
		}
		tc := NewTable(sc.Code, sc.Versions)
		s.All[sc.Code] = tc
		if !sc.Deleted {
			quotable = append(quotable, tc)
		}
	}
	if err := compileInForce(ctx, stored, today); err != nil {
		return nil, err
	}
	s.Quotable = make(map[string]shipping.Carrier, len(quotable))
	for _, c := range quotable {
		s.Quotable[c.Name()] = c
		s.Names = append(s.Names, c.Name())
	}
	return s, nil
}

// compileInForce compiles the stored carriers' versions in force today that are not yet (after
// a change, only the new ones), side by side on every core, before the set serves: the first
// quote after a start or a change does not compile them one by one. Versions in force later
// are compiled by the first quote that needs them.
func compileInForce(ctx context.Context, stored []*Stored, today string) error {
	var wg sync.WaitGroup
	errs := make(chan error, len(stored))
	slots := make(chan struct{}, runtime.GOMAXPROCS(0))
	for _, sc := range stored {
		v := InForce(sc.Versions, today)
		if sc.Deleted || v == nil {
			continue
		}
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			errs <- v.Compile(ctx)
		})
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
func carriedOver(compiled, versions []*Version, today string) []*Version {
	out := slices.Clone(versions)
	for _, v := range InForceFrom(versions, today) {
		i := slices.IndexFunc(out, func(o *Version) bool { return o.Version == v.Version })
		if j := slices.IndexFunc(compiled, func(o *Version) bool { return o.Version == v.Version }); j >= 0 {
			out[i] = compiled[j]
		}
	}
	return out
}
