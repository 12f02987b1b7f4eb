package scenario

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
)

// Watch loads the scenario file and hands it to onLoad, failing when it is
// missing or malformed. It then polls the file every interval until ctx ends
// and hands each new valid version to onLoad. Polling the content, rather
// than watching inotify events, follows the symlink swap by which the kubelet
// updates a mounted ConfigMap. A malformed later version is logged with its
// file and field and skipped, so the last good scenario keeps being served.
func Watch(ctx context.Context, path string, interval time.Duration, onLoad func(*Scenario)) error {
	w, err := newWatcher(klog.FromContext(ctx), path, onLoad)
	if err != nil {
		return err
	}
	go wait.UntilWithContext(ctx, func(context.Context) { w.poll() }, interval)
	return nil
}

// watcher hands each new valid version of a scenario file on.
type watcher struct {
	logger klog.Logger
	path   string
	onLoad func(*Scenario)
	// last is the content last handed on; lastErr the last rejection,
	// logged once.
	last    []byte
	lastErr string
}

// newWatcher loads the file and hands it on, failing when it is missing or
// malformed.
func newWatcher(logger klog.Logger, path string, onLoad func(*Scenario)) (*watcher, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading scenario: %w", err)
	}
	s, err := Parse(path, data)
	if err != nil {
		return nil, err
	}
	logger.Info("Scenario loaded", "path", path, "nodes", len(s.Nodes), "source", s.Source, "fault", s.Fault.String())
	onLoad(s)
	return &watcher{logger: logger, path: path, onLoad: onLoad, last: data}, nil
}

// polled is what one poll found.
type polled int

const (
	unchanged polled = iota
	reloaded
	rejected
)

// poll reads the file once and hands a new valid version on.
func (w *watcher) poll() polled {
	data, err := os.ReadFile(w.path)
	if err == nil && bytes.Equal(data, w.last) {
		return unchanged
	}
	var s *Scenario
	if err == nil {
		s, err = Parse(w.path, data)
	}
	if err != nil {
		if err.Error() != w.lastErr {
			w.logger.Error(err, "Scenario rejected; still serving the last good scenario", "path", w.path)
			w.lastErr = err.Error()
		}
		return rejected
	}
	w.last, w.lastErr = data, ""
	w.logger.Info("Scenario reloaded", "path", w.path, "nodes", len(s.Nodes), "source", s.Source, "fault", s.Fault.String())
	w.onLoad(s)
	return reloaded
}
