package httpapi

import (
	"context"

	"github.com/waybill/waybill/shipping"
)

// setupSimulator registers the tracking simulator (Config.SimulateTracking, shipping.Simulator),
// which moves purchased labels along on a compressed clock.
func (a *API) setupSimulator() error {
	if a.cfg.SimulateTracking <= 0 {
		return nil
	}
	s := &shipping.Simulator{Store: a.db, Events: a.labels.tracking, Step: a.cfg.SimulateTracking, Now: a.now, Log: a.log}
	a.workers = append(a.workers, worker{name: "tracking_simulator", run: func(ctx context.Context) error { s.Run(ctx); return nil },
		drain: s.Drain})
	return nil
}
