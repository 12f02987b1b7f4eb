package customscore

import (
	"os"
	"testing"

	"kns3.dev/kns3/scheduler/plugins/internal/simtest"
)

func TestMain(m *testing.M) {
	// Unregistered component-base metrics record nothing.
	registerMetrics()
	os.Exit(m.Run())
}

const goodBody = simtest.GoodBody

// countingServer answers the i-th request (from 1) with respond(i).
var countingServer = simtest.CountingServer

// testProfile is the profile label of the series tests record: a plugin
// made without a framework handle has no profile.
const testProfile = ""
