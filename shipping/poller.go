package shipping

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/waybill/waybill/shipping/work"
)

// Polling Go carriers: a carrier that also implements Tracker is asked for the
// events of its unfinished labels, each label first Interval after its purchase and then every
// Interval (doubling after each failure, NextPoll), until the label is DELIVERED,
// RETURN_TO_SENDER or VOIDED. The events go through the operator feed's rules. A label is
// claimed for its poll in the database, so processes sharing a PostgreSQL database poll it
// once; a poll whose process dies is retried when the claim runs out. Capacity is shared fairly
// (work.Slots): each round gives every account with due labels an equal share of the slots, so
// one account's thousands of labels or hanging carrier never starve another's.

// DefaultTrackingPollInterval is the poll interval unless one is configured.
const DefaultTrackingPollInterval = time.Hour

// PollClaim is a label claimed for one poll of its carrier's Tracker.
type PollClaim struct {
	AccountID, LabelID, Carrier, TrackingCode string
	// Failures counts the polls in a row that failed before this one.
	Failures int
}

// PollStore is what the poller needs persisted.
type PollStore interface {
	// PollAccounts returns up to limit accounts with labels of carriers due for a poll at now,
	// the account waiting longest first; first is how long after its purchase a label is
	// first due.
	PollAccounts(ctx context.Context, carriers []string, now time.Time, first time.Duration, limit int) ([]string, error)
	// ClaimPolls claims up to limit of the account's due labels until lease runs out.
	ClaimPolls(ctx context.Context, accountID string, carriers []string, now time.Time, first, lease time.Duration, limit int) ([]PollClaim, error)
	// FinishPoll sets when the label is polled next, and its failures in a row.
	FinishPoll(ctx context.Context, c PollClaim, next time.Time, failures int) error
}

// Poller polls the labels of the carriers that implement Tracker.
type Poller struct {
	Store    PollStore
	Events   EventRecorder      // records what the carriers answer
	Trackers map[string]Tracker // by carrier code
	Interval time.Duration      // 0 is DefaultTrackingPollInterval
	// Timeout bounds one Track call; a call still running then is abandoned and counts as a
	// failure. A claim lasts Timeout and a minute.
	Timeout  time.Duration
	Capacity int           // Track calls in flight in this process at most
	Every    time.Duration // how often due labels are looked for
	Now      func() time.Time
	Log      *slog.Logger

	slots work.Slots
	wg    sync.WaitGroup
}

func (p *Poller) log() *slog.Logger {
	if p.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return p.Log
}

func (p *Poller) interval() time.Duration {
	if p.Interval > 0 {
		return p.Interval
	}
	return DefaultTrackingPollInterval
}

func (p *Poller) carriers() []string {
	var codes []string
	for code := range p.Trackers {
		codes = append(codes, code)
	}
	return codes
}

// Run starts the polls that are due every Every until ctx ends, then waits for those in flight
// (each bounded by the timeout).
func (p *Poller) Run(ctx context.Context) {
	defer p.wg.Wait()
	work.Loop{Every: p.Every, Log: p.log(), Name: "tracking poller"}.Run(ctx, p.start)
}

// Drain starts the polls that are due and waits for them.
func (p *Poller) Drain(ctx context.Context) error {
	err := p.start(ctx)
	p.wg.Wait()
	return err
}

// start claims due labels for the free slots, an equal share for each account with due labels
// (the longest waiting first), and polls each in its own goroutine.
func (p *Poller) start(ctx context.Context) error {
	p.slots.Max = p.Capacity
	now := p.Now()
	carriers := p.carriers()
	accounts, err := p.Store.PollAccounts(ctx, carriers, now, p.interval(), p.Capacity)
	if err != nil || len(accounts) == 0 {
		return err
	}
	share := work.Share(p.Capacity, len(accounts))
	for _, acct := range accounts {
		room := p.slots.Room(acct, share)
		if room <= 0 {
			continue
		}
		claims, err := p.Store.ClaimPolls(ctx, acct, carriers, now, p.interval(), p.Timeout+time.Minute, room)
		if err != nil {
			return err
		}
		for _, c := range claims {
			u := work.Unit{Account: acct}
			p.slots.Hold(u)
			p.wg.Go(func() {
				defer p.slots.Release(u)
				p.poll(ctx, c)
			})
		}
	}
	return nil
}

// poll asks the label's carrier for its events, applies them, and schedules the next poll.
func (p *Poller) poll(ctx context.Context, c PollClaim) {
	events, err := p.track(ctx, c)
	if err == nil {
		err = p.apply(ctx, c, events)
	}
	if ctx.Err() != nil {
		return // shutting down: the claim runs out and the label is polled again
	}
	failures := 0
	if err != nil {
		failures = c.Failures + 1
		p.log().Warn("tracking poll failed", "carrier", c.Carrier, "label", c.LabelID, "failures", failures, "err", err)
	}
	if err := p.Store.FinishPoll(ctx, c, NextPoll(p.Now(), p.interval(), failures), failures); err != nil {
		p.log().Error("tracking poll: schedule", "label", c.LabelID, "err", err)
	}
}

// errFutureEvent is a polled event dated further ahead than the operator feed accepts.
var errFutureEvent = errors.New("occurred_at is more than 24 hours in the future")

// errPollTimeout is a Track call that did not return within the timeout.
var errPollTimeout = errors.New("the carrier did not answer in time")

// track calls the carrier's Tracker, giving up after the timeout even if the Tracker ignores
// its context (its goroutine is then left to finish on its own; its answer is dropped).
func (p *Poller) track(ctx context.Context, c PollClaim) ([]TrackingEvent, error) {
	ctx, cancel := context.WithTimeout(ctx, p.Timeout)
	defer cancel()
	type answer struct {
		events []TrackingEvent
		err    error
	}
	done := make(chan answer, 1)
	go func() {
		events, err := p.Trackers[c.Carrier].Track(ctx, c.TrackingCode)
		done <- answer{events, err}
	}()
	select {
	case ans := <-done:
		return ans.events, ans.err
	case <-ctx.Done():
		return nil, errPollTimeout
	}
}

// apply records the polled events through the operator feed's rules. An event those rules
// refuse (invalid, a voided label, dated before the purchase) is logged and skipped; the others
// still apply. A store failure fails the poll, which is retried.
func (p *Poller) apply(ctx context.Context, c PollClaim, events []TrackingEvent) error {
	for _, e := range events {
		e.ID, e.Source, e.CreatedAt = "", "carrier", Timestamp{}
		e.OccurredAt = Timestamp{Time: e.OccurredAt.UTC().Truncate(time.Microsecond)}
		err := ValidateTrackingEvent(&e)
		if err == nil && InFuture(e.OccurredAt.Time, p.Now()) {
			err = errFutureEvent
		}
		if err == nil {
			_, _, err = p.Events.Record(ctx, c.Carrier, c.TrackingCode, e)
		}
		var ve *ValidationError
		switch {
		case err == nil:
		case errors.As(err, &ve), errors.Is(err, ErrInvalidState), errors.Is(err, ErrNotFound), errors.Is(err, errFutureEvent):
			p.log().Warn("tracking poll: event refused", "carrier", c.Carrier, "label", c.LabelID, "err", err)
		default:
			return err
		}
	}
	return nil
}
