// Package schedconfig reads the configuration of the scheduler this
// process runs, as its /configz serves it: a plugin is not given its
// scheduler's configuration, and flags may override the file's. The
// scheduler registers it when it runs, after it has made the plugins.
package schedconfig

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/component-base/configz"
)

// ErrNotRegistered: the scheduler has not registered its configuration
// yet (it does so first thing when it runs, after the plugins are made).
var ErrNotRegistered = errors.New("the scheduler's configuration is not registered yet")

// Config is the part of the running scheduler's configuration the
// plugins read.
type Config struct {
	LeaderElection LeaderElection `json:"leaderElection"`
	Profiles       []Profile      `json:"profiles"`
}

// LeaderElection says whether, and on which lease, the scheduler elects a
// leader.
type LeaderElection struct {
	LeaderElect       *bool  `json:"leaderElect"`
	ResourceName      string `json:"resourceName"`
	ResourceNamespace string `json:"resourceNamespace"`
}

// Profile is one of the scheduler's profiles.
type Profile struct {
	SchedulerName string `json:"schedulerName"`
}

// Running returns the running scheduler's configuration, or
// ErrNotRegistered before it runs.
func Running() (Config, error) {
	var m handlerOnly
	configz.InstallHandler(&m)
	w := &bufferWriter{header: http.Header{}}
	m.h.ServeHTTP(w, &http.Request{Method: http.MethodGet})
	var all struct {
		ComponentConfig *Config `json:"componentconfig"`
	}
	if err := json.Unmarshal(w.buf.Bytes(), &all); err != nil {
		return Config{}, fmt.Errorf("decoding the scheduler's configuration: %w", err)
	}
	if all.ComponentConfig == nil || all.ComponentConfig.LeaderElection.LeaderElect == nil {
		return Config{}, ErrNotRegistered
	}
	return *all.ComponentConfig, nil
}

// Wait returns what read returns (Running, or a test's) once the
// scheduler has registered its configuration, asking every interval, for
// at most limit or until ctx ends.
func Wait(ctx context.Context, read func() (Config, error), interval, limit time.Duration) (Config, error) {
	var cfg Config
	err := wait.PollUntilContextTimeout(ctx, interval, limit, true, func(context.Context) (bool, error) {
		var err error
		cfg, err = read()
		if errors.Is(err, ErrNotRegistered) {
			return false, nil
		}
		return err == nil, err
	})
	return cfg, err
}

// handlerOnly keeps the one handler it is given.
type handlerOnly struct{ h http.Handler }

func (m *handlerOnly) Handle(_ string, h http.Handler) { m.h = h }

// bufferWriter is an http.ResponseWriter into memory.
type bufferWriter struct {
	header http.Header
	buf    bytes.Buffer
}

func (w *bufferWriter) Header() http.Header         { return w.header }
func (w *bufferWriter) Write(b []byte) (int, error) { return w.buf.Write(b) }
func (w *bufferWriter) WriteHeader(int)             {}
