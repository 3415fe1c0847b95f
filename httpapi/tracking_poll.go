package httpapi

import (
	"context"
	"time"

	"github.com/waybill/waybill/shipping"
)

// DefaultTrackingPollInterval is the poll interval unless one is configured.
const DefaultTrackingPollInterval = shipping.DefaultTrackingPollInterval

// setupPolling sets up the tracking poller (shipping.Poller) over the host's Go carriers that
// implement shipping.Tracker. Stored carriers are rate cards, which cannot be asked where a
// parcel is: only a host's Go carriers are polled.
func (a *API) setupPolling() error {
	p := &shipping.Poller{Store: a.db, Events: a.labels.tracking, Trackers: map[string]shipping.Tracker{}, Interval: a.cfg.TrackingPollInterval,
		Timeout: 30 * time.Second, Capacity: 8, Every: time.Second, Now: a.now,
		Log: a.workerLog("tracking_poller")}
	for _, c := range a.cfg.Carriers {
		if t, ok := c.(shipping.Tracker); ok {
			p.Trackers[c.Name()] = t
		}
	}
	a.poll = p
	if len(p.Trackers) > 0 {
		a.workers = append(a.workers, worker{name: "tracking_poller",
			run: func(ctx context.Context) error { p.Run(ctx); return nil }, drain: p.Drain})
	}
	return nil
}
