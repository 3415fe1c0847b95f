package main

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/waybill/waybill/cmd/internal/cli"
	"github.com/waybill/waybill/cmd/internal/clitest"
)

// TestVerify: `waybill-pg verify` finds a changed record and a damaged copy, as on SQLite.
func TestVerify(t *testing.T) {
	url := freshSchema(t)
	ctx := context.Background()
	db, err := open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	clitest.Verify(t, db, plainPG(t, url), func(args ...string) (string, error) {
		var out bytes.Buffer
		err := cli.Run(ctx, postgres, append([]string{"verify", "-db", url}, args...), func(string) string { return "" }, nil, &out, io.Discard)
		return out.String(), err
	})
}
