package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/shipping/carrier"
	"github.com/waybill/waybill/store"
)

// fakeTracker is a built-in carrier that also tracks: by tracking code, it answers events,
// fails, or hangs (ignoring its context) until released.
type fakeTracker struct {
	shipping.Carrier // a sample carrier, quoting as it does, under the name T + its name
	mu               sync.Mutex
	bought           int
	events           map[string][]shipping.TrackingEvent
	fail             map[string]bool
	hang             map[string]bool
	release          chan struct{}
	calls            map[string]int
}

func (f *fakeTracker) Name() string { return "T" + f.Carrier.Name() }

// Purchase numbers the carrier's labels itself, as a host's carrier would.
func (f *fakeTracker) Purchase(ctx context.Context, req shipping.PurchaseRequest) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.bought++
	return fmt.Sprintf("%s%08d", f.Name(), f.bought), nil
}

func (f *fakeTracker) Void(ctx context.Context, code string) error { return nil }

func (f *fakeTracker) Track(ctx context.Context, code string) ([]shipping.TrackingEvent, error) {
	f.mu.Lock()
	f.calls[code]++
	events, fail, hang := f.events[code], f.fail[code], f.hang[code]
	f.mu.Unlock()
	if hang {
		<-f.release
	}
	if fail {
		return nil, errors.New("carrier down")
	}
	return events, nil
}

func (f *fakeTracker) called(code string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[code]
}

// TestTrackingPoller polls a fake Tracker: not before the interval; events applied through the
// operator feed's rules; a failing carrier backs off; a hanging one is abandoned at the timeout
// without holding up another account's label; a finished label is polled no more.
func TestTrackingPoller(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	e, trackers := pollingEnv(t, release)
	carrier, acme := e.buyLabels(t, "all", 3)
	_, other := e.buyLabels(t, "other", 1)
	var f *fakeTracker
	for _, tr := range trackers {
		if tr.Name() == carrier {
			f = tr
		}
	}
	code := func(account, id string) string {
		l, err := e.db.Label(context.Background(), e.accounts[account].ID, id)
		if err != nil {
			t.Fatal(err)
		}
		return l.TrackingCode
	}
	ok, failing, hanging, otherCode := code("acme", acme[0]), code("acme", acme[1]), code("acme", acme[2]), code("other", other[0])
	at := func(d time.Duration) shipping.Timestamp { return shipping.Timestamp{Time: testStart.Add(d)} }
	f.events[ok] = []shipping.TrackingEvent{{Status: shipping.LabelInTransit, Message: "Picked up", OccurredAt: at(time.Minute)}}
	f.events[otherCode] = []shipping.TrackingEvent{{Status: shipping.LabelDelivered, Message: "Delivered", OccurredAt: at(time.Minute)}}
	f.fail[failing], f.hang[hanging] = true, true

	drain := func() {
		t.Helper()
		if err := e.api.Drain(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	status := func(account, id string) string {
		l, err := e.db.Label(context.Background(), e.accounts[account].ID, id)
		if err != nil {
			t.Fatal(err)
		}
		return l.Status
	}
	drain()
	if f.called(ok) != 0 {
		t.Fatal("polled before the interval")
	}
	e.setClock(testStart.Add(time.Hour + time.Second))
	start := time.Now()
	drain()
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("a round with a hanging carrier took %v", took)
	}
	for _, c := range []string{ok, failing, hanging, otherCode} {
		if f.called(c) != 1 {
			t.Errorf("%s polled %d times; want 1", c, f.called(c))
		}
	}
	if s := status("acme", acme[0]); s != shipping.LabelInTransit {
		t.Errorf("polled label: %s; want IN_TRANSIT", s)
	}
	if s := status("other", other[0]); s != shipping.LabelDelivered {
		t.Errorf("other account's polled label: %s; want DELIVERED", s)
	}
	var failures int
	var pollAt int64
	if err := e.sql.QueryRow(`SELECT poll_failures, poll_at FROM shipping_labels WHERE id = $1`, acme[1]).Scan(&failures, &pollAt); err != nil {
		t.Fatal(err)
	}
	if want := testStart.Add(time.Hour + time.Second + 2*time.Hour); failures != 1 || store.Time(pollAt) != want {
		t.Errorf("failing label: %d failures, next poll %v; want 1, %v", failures, store.Time(pollAt), want)
	}
	// An hour later the healthy labels are polled again (duplicates change nothing), the failing
	// one is backing off, and the delivered one is finished.
	e.setClock(testStart.Add(2*time.Hour + 2*time.Second))
	drain()
	if f.called(ok) != 2 || f.called(failing) != 1 || f.called(otherCode) != 1 {
		t.Errorf("second round: polled ok %d, failing %d, delivered %d; want 2, 1, 1", f.called(ok), f.called(failing), f.called(otherCode))
	}
	events, err := e.db.ListTrackingEvents(context.Background(), e.accounts["acme"].ID, acme[0], store.Page{Number: 1, Size: 10})
	if err != nil || len(events.Items) != 1 || events.Items[0].Source != "carrier" {
		t.Errorf("polled label's events: %+v, %v; want the one event, source carrier", events.Items, err)
	}
}

// pollingEnv is a test environment whose default profile shops host carriers that track
// (fakeTrackers sharing release, quoting as the samples do), polled every hour.
func pollingEnv(t *testing.T, release chan struct{}) (*testEnv, []*fakeTracker) {
	e := newEnv(t)
	var trackers []*fakeTracker
	var carriers []shipping.Carrier
	var names []string
	for _, c := range carrier.SampleCarriers() {
		f := &fakeTracker{Carrier: c, events: map[string][]shipping.TrackingEvent{}, fail: map[string]bool{}, hang: map[string]bool{},
			calls: map[string]int{}, release: release}
		trackers, carriers, names = append(trackers, f), append(carriers, f), append(names, `"`+f.Name()+`"`)
	}
	api, err := New(Config{DB: e.db, BaseURL: e.url, Carriers: carriers, TrackingPollInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	api.poll.Timeout = 100 * time.Millisecond
	e.api = api
	decode[any](t, e.do("PUT", "/admin/rate_shopping_profiles/default", "admin",
		`{"name": "Default", "carriers": [`+strings.Join(names, ", ")+`]}`), http.StatusOK)
	return e, trackers
}

// totalCalls counts the Track calls of every fake carrier.
func totalCalls(trackers []*fakeTracker) int {
	n := 0
	for _, f := range trackers {
		f.mu.Lock()
		for _, c := range f.calls {
			n += c
		}
		f.mu.Unlock()
	}
	return n
}

// TestTrackingPollerFair: with room for two polls, an account with many due labels and one with
// a single label each get one slot in a round: the busy account never starves the other.
func TestTrackingPollerFair(t *testing.T) {
	e, trackers := pollingEnv(t, make(chan struct{}))
	e.api.poll.Capacity = 2
	e.buyLabels(t, "all", 6)
	_, other := e.buyLabels(t, "other", 1)
	l, err := e.db.Label(context.Background(), e.accounts["other"].ID, other[0])
	if err != nil {
		t.Fatal(err)
	}
	e.setClock(testStart.Add(time.Hour + time.Second))
	e.drain()
	otherCalls := 0
	for _, f := range trackers {
		otherCalls += f.called(l.TrackingCode)
	}
	if n := totalCalls(trackers); n != 2 || otherCalls != 1 {
		t.Errorf("first round: %d polls, %d of the other account's label; want 2 and 1", n, otherCalls)
	}
	for range 5 {
		e.drain()
	}
	if n := totalCalls(trackers); n != 7 {
		t.Errorf("after six rounds: %d polls; want all 7 labels polled once", n)
	}
}
