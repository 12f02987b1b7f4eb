package customscore

import (
	"os"
	"testing"

	schedmetrics "k8s.io/kubernetes/pkg/scheduler/metrics"

	"kns3.dev/kns3/scheduler/plugins/internal/simtest"
)

func TestMain(m *testing.M) {
	// Unregistered component-base metrics record nothing.
	registerMetrics()
	// The scheduler's own, which a framework made in a test records into.
	schedmetrics.Register()
	os.Exit(m.Run())
}

const goodBody = simtest.GoodBody

// countingServer answers the i-th request (from 1) with respond(i).
var countingServer = simtest.CountingServer

// testProfile is the profile label of the series tests record: a plugin
// made without a framework handle has no profile.
const testProfile = ""
