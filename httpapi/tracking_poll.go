package httpapi

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/shipping/work"
	"github.com/waybill/waybill/store"
)

// Polling Go carriers (DESIGN §13): a carrier that also implements shipping.Tracker is asked for
// the events of its unfinished labels, each label first Config.TrackingPollInterval after its
// purchase and then every interval (doubling after each failure, shipping.NextPoll), until the
// label is DELIVERED, RETURN_TO_SENDER or VOIDED. The events go through the operator feed's rules
// and store call. A label is claimed for its poll in the database (store.ClaimPolls), so
// processes sharing a PostgreSQL database poll it once; a poll whose process dies is retried
// when the claim runs out. Capacity is shared fairly: each round gives every account with due
// labels an equal share of the free slots, so one account's thousands of labels or hanging
// carrier never starve another's.

// DefaultTrackingPollInterval is the poll interval unless one is configured.
const DefaultTrackingPollInterval = time.Hour

type pollState struct {
	trackers map[string]shipping.Tracker // by carrier code
	carriers []string
	interval time.Duration
	// timeout bounds one Track call; a call still running then is abandoned and counts as a
	// failure. The claim lasts timeout plus claimMargin.
	timeout  time.Duration
	capacity int // Track calls in flight in this process at most
	every    time.Duration

	mu       sync.Mutex
	inflight map[string]int // by account
	total    int
	wg       sync.WaitGroup
}

const claimMargin = time.Minute

func (a *API) setupPolling() error {
	st := &pollState{trackers: map[string]shipping.Tracker{}, interval: a.cfg.TrackingPollInterval, timeout: 30 * time.Second,
		capacity: 8, every: time.Second, inflight: map[string]int{}}
	if st.interval <= 0 {
		st.interval = DefaultTrackingPollInterval
	}
	// Stored carriers are rate cards, which cannot be asked where a parcel is: only a host's
	// Go carriers are polled.
	for _, c := range a.cfg.Carriers {
		if t, ok := c.(shipping.Tracker); ok {
			st.trackers[c.Name()], st.carriers = t, append(st.carriers, c.Name())
		}
	}
	a.poll = st
	if len(st.carriers) > 0 {
		a.workers = append(a.workers, worker{name: "tracking_poller", run: a.runPoller, drain: a.drainPolls})
	}
	return nil
}

// runPoller starts the polls that are due every little while until ctx ends, then waits for
// those in flight (each bounded by the timeout).
func (a *API) runPoller(ctx context.Context) error {
	defer a.poll.wg.Wait()
	work.Loop{Every: a.poll.every, Log: a.workerLog("tracking_poller"), Name: "tracking poller"}.Run(ctx, a.startPolls)
	return nil
}

// drainPolls starts the polls that are due and waits for them.
func (a *API) drainPolls(ctx context.Context) error {
	err := a.startPolls(ctx)
	a.poll.wg.Wait()
	return err
}

// startPolls claims due labels for the free slots, an equal share for each account with due
// labels (the longest waiting first), and polls each in its own goroutine.
func (a *API) startPolls(ctx context.Context) error {
	st := a.poll
	now := a.db.Now()
	accounts, err := a.db.PollAccounts(ctx, st.carriers, now, st.interval, st.capacity)
	if err != nil || len(accounts) == 0 {
		return err
	}
	share := max(1, st.capacity/len(accounts))
	for _, acct := range accounts {
		st.mu.Lock()
		room := min(share-st.inflight[acct], st.capacity-st.total)
		st.mu.Unlock()
		if room <= 0 {
			continue
		}
		claims, err := a.db.ClaimPolls(ctx, acct, st.carriers, now, st.interval, st.timeout+claimMargin, room)
		if err != nil {
			return err
		}
		for _, c := range claims {
			st.mu.Lock()
			st.inflight[acct]++
			st.total++
			st.mu.Unlock()
			st.wg.Add(1)
			go func() {
				defer func() {
					st.mu.Lock()
					if st.inflight[acct]--; st.inflight[acct] == 0 {
						delete(st.inflight, acct)
					}
					st.total--
					st.mu.Unlock()
					st.wg.Done()
				}()
				a.pollLabel(ctx, c)
			}()
		}
	}
	return nil
}

// pollLabel asks the label's carrier for its events, applies them, and schedules the next poll.
func (a *API) pollLabel(ctx context.Context, c store.PollClaim) {
	st := a.poll
	log := a.workerLog("tracking_poller")
	events, err := st.track(ctx, c)
	if err == nil {
		err = a.applyPolled(ctx, c, events)
	}
	if ctx.Err() != nil {
		return // shutting down: the claim runs out and the label is polled again
	}
	failures := 0
	if err != nil {
		failures = c.Failures + 1
		log.Warn("tracking poll failed", "carrier", c.Carrier, "label", c.LabelID, "failures", failures, "err", err)
	}
	if err := a.db.FinishPoll(ctx, c, shipping.NextPoll(a.db.Now(), st.interval, failures), failures); err != nil {
		log.Error("tracking poll: schedule", "label", c.LabelID, "err", err)
	}
}

// errFutureEvent is a polled event dated further ahead than the operator feed accepts.
var errFutureEvent = errors.New("occurred_at is more than 24 hours in the future")

// errPollTimeout is a Track call that did not return within the timeout.
var errPollTimeout = errors.New("the carrier did not answer in time")

// track calls the carrier's Tracker, giving up after the timeout even if the Tracker ignores
// its context (its goroutine is then left to finish on its own; its answer is dropped).
func (st *pollState) track(ctx context.Context, c store.PollClaim) ([]shipping.TrackingEvent, error) {
	ctx, cancel := context.WithTimeout(ctx, st.timeout)
	defer cancel()
	type answer struct {
		events []shipping.TrackingEvent
		err    error
	}
	done := make(chan answer, 1)
	go func() {
		events, err := st.trackers[c.Carrier].Track(ctx, c.TrackingCode)
		done <- answer{events, err}
	}()
	select {
	case ans := <-done:
		return ans.events, ans.err
	case <-ctx.Done():
		return nil, errPollTimeout
	}
}

// applyPolled records the polled events through the operator feed's rules. An event those rules
// refuse (invalid, a voided label, dated before the purchase) is logged and skipped; the others
// still apply. A store failure fails the poll, which is retried.
func (a *API) applyPolled(ctx context.Context, c store.PollClaim, events []shipping.TrackingEvent) error {
	log := a.workerLog("tracking_poller")
	for _, e := range events {
		e.ID, e.Source, e.CreatedAt = "", "carrier", shipping.Timestamp{}
		e.OccurredAt = shipping.Timestamp{Time: e.OccurredAt.UTC().Truncate(time.Microsecond)}
		err := shipping.ValidateTrackingEvent(&e)
		if err == nil && e.OccurredAt.After(a.db.Now().Add(a.labels.maxEventSkew)) {
			err = errFutureEvent
		}
		if err == nil {
			_, _, err = a.db.AddCarrierTrackingEvent(ctx, c.Carrier, c.TrackingCode, e)
		}
		var ve *shipping.ValidationError
		switch {
		case err == nil:
		case errors.As(err, &ve), errors.Is(err, shipping.ErrInvalidState), errors.Is(err, store.ErrNotFound),
			errors.Is(err, errFutureEvent):
			log.Warn("tracking poll: event refused", "carrier", c.Carrier, "label", c.LabelID, "err", err)
		default:
			return err
		}
	}
	return nil
}
