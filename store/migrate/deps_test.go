package migrate

import (
	"os/exec"
	"strings"
	"testing"
)

// forbidden are the packages (each with the packages under it) that the running service
// renders, prices or packs with, or that run it: a migration that imported one would change
// whenever they do.
var forbidden = []string{
	"github.com/waybill/waybill/shipping", // the model, its rules, carriers, rating, label documents
	"github.com/waybill/waybill/billing",
	"github.com/waybill/waybill/httpapi",
	"github.com/waybill/waybill/webhook",
	"github.com/waybill/waybill/ingest",
	"github.com/waybill/waybill/store", // the runtime store; store/migrate itself is allowed
	"github.com/waybill/waybill/store/internal/codec",
	"github.com/waybill/waybill/store/internal/lz",
	"github.com/waybill/waybill/store/internal/groupcommit",
	"github.com/waybill/waybill/cmd",
}

// TestFrozenDependencies lists what the package depends on (go list -deps) and fails on any
// forbidden package, or any package of the module but this one.
func TestFrozenDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	const self = "github.com/waybill/waybill/store/migrate"
	deps := strings.Fields(string(out))
	if len(deps) == 0 || deps[len(deps)-1] != self {
		t.Fatalf("go list -deps listed %q; want the standard library, then %s", deps, self)
	}
	for _, dep := range deps {
		for _, f := range forbidden {
			if dep == f || strings.HasPrefix(dep, f+"/") && dep != self {
				t.Errorf("store/migrate depends on %s (forbidden: %s)", dep, f)
			}
		}
		if dep != self && strings.HasPrefix(dep, "github.com/waybill/waybill") {
			t.Errorf("store/migrate depends on %s, of the module: a migration imports only the standard library", dep)
		}
		if first, _, _ := strings.Cut(dep, "/"); strings.Contains(first, ".") && !strings.HasPrefix(dep, "github.com/waybill/waybill") {
			t.Errorf("store/migrate depends on %s, outside the standard library", dep)
		}
	}
}
