package validate

import (
	"strings"
	"testing"

	"github.com/sparkui/sparkui/internal/app"
)

// SUI050 is driven by the carrier registry: every adapter of an operator's custom resource
// has its other versions reported, and the rule's documentation names every such group, so a
// new carrier cannot be read at one version and silently dropped at the next.
func TestSUI050CoversEveryCustomResource(t *testing.T) {
	for _, tc := range []struct{ av, kind string }{
		{"sparkoperator.k8s.io/v1beta2", "SparkApplication"},
		{"sparkoperator.k8s.io/v1beta2", "ScheduledSparkApplication"},
		{"sparkoperator.k8s.io/v1alpha1", "SparkConnect"},
		{"spark.apache.org/v1", "SparkApplication"},
		{"spark.apache.org/v1beta1", "SparkApplication"},
		{"spark.stackable.tech/v1alpha1", "SparkApplication"},
	} {
		group, read, unread := app.UnreadVersion(tc.av, tc.kind)
		if unread || len(read) == 0 {
			t.Errorf("%s %s: read versions %v, unread %v; want it read", tc.av, tc.kind, read, unread)
		}
		if !strings.Contains(SUI050.Catches, group+": ") {
			t.Errorf("SUI050's Catches does not name group %s", group)
		}
		if _, _, unread := app.UnreadVersion(group+"/v9", tc.kind); !unread {
			t.Errorf("%s/v9 %s: not reported as unread", group, tc.kind)
		}
	}
	// Core and workload kinds are no operator resources: an old version is not SUI050's.
	for _, tc := range []struct{ av, kind string }{{"apps/v1beta2", "Deployment"}, {"v2", "Pod"}, {"batch/v1beta1", "CronJob"}} {
		if _, _, unread := app.UnreadVersion(tc.av, tc.kind); unread {
			t.Errorf("%s %s reported as an unread operator resource", tc.av, tc.kind)
		}
	}
}
